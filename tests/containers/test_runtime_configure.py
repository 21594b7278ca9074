# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulated `nvidia-ctk runtime configure` (toolkit v1.19.1), read by the real engines:
dockerd 20.10 reloads daemon.json on SIGHUP (`systemctl reload docker`, the packaged
unit's ExecReload) and lists the runtime in `docker info`; containerd 1.6 reads its
config, with the drop-in the tool imports, at a restart, as `containerd config dump` shows."""

from __future__ import annotations

import json

import container_lab


def test_docker_lists_the_nvidia_runtime_after_a_reload(restore_engine_configs):  # pylint: disable=unused-argument
    container_lab.sh("nvidia-ctk runtime configure --runtime=docker")
    container_lab.sh("systemctl reload docker")
    runtimes = json.loads(container_lab.sh("docker info --format '{{json .Runtimes}}'").stdout)
    assert runtimes["nvidia"]["path"] == "nvidia-container-runtime"
    # The node's own keys are still read: no bridge network came up.
    networks = container_lab.sh("docker network ls --format '{{.Name}}'").stdout.split()
    assert "bridge" not in networks


def test_containerd_config_dump_shows_the_nvidia_runtime(restore_engine_configs):  # pylint: disable=unused-argument
    container_lab.sh("nvidia-ctk runtime configure --runtime=containerd")
    container_lab.sh("systemctl restart containerd")
    dump = container_lab.sh("containerd config dump").stdout
    assert '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]' in dump
    # The drop-in's runtime, its binary as the tool writes it for containerd.
    assert 'BinaryName = "/usr/bin/nvidia-container-runtime"' in dump
    assert '"/etc/containerd/conf.d/99-nvidia.toml"' in dump


def test_each_engine_starts_a_test_container(node):  # pylint: disable=unused-argument
    for engine in container_lab.ENGINES:
        done = container_lab.run_in_container(engine, "echo ready from $(cat /proc/1/comm)")
        assert done.stdout.startswith("ready"), (engine, done.stdout, done.stderr)
