# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A real CDI consumer on the emulated node: Podman 4.3 (Debian 12) reads the spec the
emulated `nvidia-ctk cdi generate` writes to /etc/cdi, and a container started with
`--device nvidia.com/gpu=<name>` holds exactly that device's nodes; the emulated nvidia-smi
the spec mounts lists exactly that GPU or MIG device inside it. Docker 20.10 (Debian 12's)
does not read CDI (Docker reads it from 25.0 on, as an experimental feature), so Podman is
the CDI consumer here."""

from __future__ import annotations

import json
import re

import pytest

import container_lab

LIST_NODES = "ls /dev | grep -E '^nvidia[0-9]+$' | tr '\\n' ' '; echo; ls /dev/nvidia-caps 2>/dev/null | tr '\\n' ' '"


def host_gpus():
    return json.loads(container_lab.sh("cat %s/state.json" % container_lab.EMULATOR_STATE_DIR).stdout)["gpus"]


def in_podman(device, command):
    return container_lab.run_in_container("podman", command, "--device", "nvidia.com/gpu=%s" % device).stdout


@pytest.fixture(scope="module")
def spec(node):  # pylint: disable=unused-argument
    container_lab.generate_cdi_spec()
    yield
    container_lab.sh("rm -f /etc/cdi/nvidia.yaml")


def test_a_whole_gpu_by_index(spec):  # pylint: disable=unused-argument
    gpu = host_gpus()[3]
    nodes, caps = (in_podman("3", LIST_NODES).splitlines() + ["", ""])[:2]
    assert nodes.split() == ["nvidia3"] and caps.strip() == ""
    # NVML numbers what the container can reach from 0.
    assert in_podman("3", "nvidia-smi -L") == "GPU 0: %s (UUID: %s)\n" % (gpu["model"], gpu["uuid"])


def test_a_whole_gpu_by_uuid(spec):  # pylint: disable=unused-argument
    gpu = host_gpus()[5]
    assert gpu["uuid"] in in_podman(gpu["uuid"], "nvidia-smi -L")


def test_a_mig_device_by_name(node):  # pylint: disable=unused-argument
    container_lab.sh("nvidia-smi -i 1 -mig 1 && nvidia-smi -r -i 1 && nvidia-smi mig -i 1 -cgi 19,14 -C")
    try:
        container_lab.generate_cdi_spec()
        host = container_lab.sh("nvidia-smi -L").stdout
        mig_lines = re.findall(r"^  MIG .*$", host, re.M)
        assert len(mig_lines) == 2
        second_uuid = re.search(r"\(UUID: (MIG-[^)]+)\)", mig_lines[1]).group(1)
        nodes, caps = (in_podman("1:1", LIST_NODES).splitlines() + ["", ""])[:2]
        assert nodes.split() == ["nvidia1"] and len(caps.split()) == 2
        inside = in_podman("1:1", "nvidia-smi -L").splitlines()
        assert inside[0].startswith("GPU 0: ") and len(inside) == 2
        assert second_uuid in inside[1] and "Device  0:" in inside[1]
        # The same device by its MIG UUID.
        assert second_uuid in in_podman(second_uuid, "nvidia-smi -L")
    finally:
        container_lab.sh("nvidia-smi mig -i 1 -dci && nvidia-smi mig -i 1 -dgi && nvidia-smi -i 1 -mig 0 && nvidia-smi -r -i 1",
                         check=False)
        container_lab.generate_cdi_spec()
