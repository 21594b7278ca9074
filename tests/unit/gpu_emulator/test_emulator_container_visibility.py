# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi where only some device nodes are present, as in a container: only the GPUs
whose /dev/nvidia<minor> is there, numbered from 0, and only the MIG devices whose two
capability nodes are there (MIG user guide, "Device Nodes and Capabilities"; the
nvidia-container-toolkit v1.19.1 CDI devices). With every node, or with none of the
emulated driver's nodes (a test host), nothing changes."""

from __future__ import annotations

import os

from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.test_emulator_container_nodes import (
    install, make_mig_device)
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api, visibility

CONTROL = ("nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset")


def container_dev(tmp_path, names):
    """A container's /dev: the control nodes and the named ones (plain files do: only presence counts)."""
    dev = tmp_path / "container-dev"
    (dev / "nvidia-caps").mkdir(parents=True, exist_ok=True)
    for name in CONTROL + tuple(names):
        (dev / name).touch()
    return {"GPUEMU_DEV_ROOT": str(dev)}


def listing(state, env, *argv):
    rc, out, err = api.run("nvidia-smi", list(argv) or ["-L"], state, env=env)
    assert rc == 0, err
    return out


def test_with_every_node_the_host_sees_every_gpu(tmp_path):
    root, state = install(tmp_path)
    everything = listing(state, {"GPUEMU_DEV_ROOT": os.path.join(root, "dev")})
    assert everything == listing(state, {"GPUEMU_DEV_ROOT": str(tmp_path / "no-dev")})
    assert len(everything.splitlines()) == 8


def test_a_container_given_one_gpu_sees_it_as_gpu_0(tmp_path):
    root, state = install(tmp_path)
    uuid = api.read_state(state)["gpus"][3]["uuid"]
    seen = listing(state, container_dev(tmp_path, ["nvidia3"]))
    assert seen == "GPU 0: NVIDIA A100-SXM4-80GB (UUID: %s)\n" % uuid
    xml = listing(state, container_dev(tmp_path, ["nvidia3"]), "-q", "-x")
    assert xml.count("<gpu id=") == 1 and "<attached_gpus>1</attached_gpus>" in xml and uuid in xml


def test_a_container_given_one_mig_device_sees_only_it(tmp_path):
    root, state = install(tmp_path)
    make_mig_device(root, state)
    make_mig_device(root, state, profile="14")
    host = listing(state, {"GPUEMU_DEV_ROOT": os.path.join(root, "dev")})
    mig_lines = [line for line in host.splitlines() if line.startswith("  MIG")]
    assert len(mig_lines) == 2
    gpu = api.read_state(state)["gpus"][0]
    second = sorted(gpu["gpu_instances"], key=lambda i: i["id"])[1]
    caps = ["nvidia-caps/nvidia-cap%d" % minor for minor in visibility.cap_minors(gpu, second, second["compute_instances"][0])]
    seen = listing(state, container_dev(tmp_path, ["nvidia0"] + caps)).splitlines()
    assert seen[0].startswith("GPU 0: NVIDIA A100-SXM4-80GB")
    assert seen[1:] == [mig_lines[1].replace("Device  1:", "Device  0:")]
    # The GPU alone, without its capability nodes: no MIG device.
    assert len(listing(state, container_dev(tmp_path / "bare", ["nvidia0"])).splitlines()) == 1
