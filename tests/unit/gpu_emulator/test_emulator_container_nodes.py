# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The driver's other device nodes and the MIG capability nodes `install` makes, and what
`nvidia-ctk cdi generate` reads from them.

Sources: NVIDIA/nvidia-modprobe modprobe-utils (nvidia-modeset is the nvidia major's
minor 254; nvidia-uvm and nvidia-uvm-tools minors 0 and 1 of the module's own major;
/dev/nvidia-caps/nvidia-cap<minor>), the MIG user guide "Device Nodes and Capabilities",
and nvidia-container-toolkit v1.19.1 internal/edits/device.go (a character device's major,
minor, mode and "rwm")."""

from __future__ import annotations

import os
import stat

import yaml

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api, installer, nvidia_caps
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.test_emulator_install_sysfs import gpuemu

MINORS = dict(nvidia_caps.mig_minor_lines())


def install(tmp_path, profile="a100_8x_mig"):
    root = str(tmp_path / "node")
    done = gpuemu("install", "--profile", profile, "--root", root)
    assert done.returncode == 0, done.stderr
    return root, os.path.join(root, "var", "lib", "gpuemu", "state.json")


def numbers(path):
    """(major, minor) of a character device; None where mknod was not allowed (a plain file)."""
    found = os.stat(path)
    return (os.major(found.st_rdev), os.minor(found.st_rdev)) if stat.S_ISCHR(found.st_mode) else None


def dev_env(root):
    return {"GPUEMU_DEV_ROOT": os.path.join(root, "dev")}


def make_mig_device(root, state, profile="19"):
    """GPU 0 in MIG mode (as after its reset), then one more GPU instance with its compute instance."""
    written = api.read_state(state)
    written["gpus"][0]["mig"] = {"current": "Enabled", "pending": "Enabled"}
    api.write_state(written, state)
    rc, _out, err = api.run("nvidia-smi", ["mig", "-i", "0", "-cgi", profile, "-C"], state, env=dev_env(root))
    assert rc == 0, err


def test_install_makes_the_uvm_and_modeset_nodes(tmp_path):
    root, _state = install(tmp_path)
    dev = os.path.join(root, "dev")
    for name in ("nvidia-modeset", "nvidia-uvm", "nvidia-uvm-tools", "nvidiactl", "nvidia7"):
        assert os.path.exists(os.path.join(dev, name)), name
    if numbers(os.path.join(dev, "nvidiactl")) is None:
        return  # no CAP_MKNOD here: plain files stand for the nodes
    assert numbers(os.path.join(dev, "nvidia-modeset")) == (195, 254)
    assert numbers(os.path.join(dev, "nvidia-uvm")) == (installer.UVM_MAJOR, 0)
    assert numbers(os.path.join(dev, "nvidia-uvm-tools")) == (installer.UVM_MAJOR, 1)
    # MIG is off everywhere: no capability node yet.
    assert not os.path.exists(os.path.join(dev, "nvidia-caps"))


def test_a_mig_device_gets_its_capability_nodes(tmp_path):
    root, state = install(tmp_path)
    make_mig_device(root, state)
    instance = api.read_state(state)["gpus"][0]["gpu_instances"][0]
    ci = instance["compute_instances"][0]
    expected = {1, 2, MINORS["gpu0/gi%d/access" % instance["id"]],
                MINORS["gpu0/gi%d/ci%d/access" % (instance["id"], ci["id"])]}
    caps = os.path.join(root, "dev", "nvidia-caps")
    assert sorted(os.listdir(caps)) == sorted("nvidia-cap%d" % minor for minor in expected)
    cap = os.path.join(caps, "nvidia-cap%d" % max(expected))
    if numbers(cap) is not None:
        assert numbers(cap) == (installer.CAPS_MAJOR, max(expected))


def test_a_mig_change_off_a_lab_node_makes_no_node(make_state, smi, tmp_path):
    """Without the emulated driver's nodes (a unit test's host) a MIG change touches no /dev."""
    path = make_state("a100_8x_mig")
    env = {"GPUEMU_DEV_ROOT": str(tmp_path / "dev")}
    assert smi(path, "-i", "0", "-mig", "1", env=env)[0] == 0
    assert smi(path, "mig", "-i", "0", "-cgi", "19", "-C", env=env)[0] == 0
    assert not os.path.exists(str(tmp_path / "dev"))


def test_cdi_generate_reads_the_numbers_from_the_node(tmp_path):
    root, state = install(tmp_path)
    if numbers(os.path.join(root, "dev", "nvidiactl")) is None:
        return
    make_mig_device(root, state)
    output = str(tmp_path / "nvidia.yaml")
    rc, _out, err = api.run("nvidia-ctk", ["cdi", "generate", "--dev-root", root, "--output", output], state)
    assert rc == 0, err
    with open(output, encoding="utf-8") as handle:
        spec = yaml.safe_load(handle)
    control = {node["path"]: node for node in spec["containerEdits"]["deviceNodes"]}
    assert control["/dev/nvidia-modeset"] == {
        "path": "/dev/nvidia-modeset", "hostPath": root + "/dev/nvidia-modeset", "major": 195, "minor": 254,
        "fileMode": 0o666, "permissions": "rwm"}
    assert control["/dev/nvidia-uvm-tools"]["minor"] == 1
    whole = next(device for device in spec["devices"] if device["name"] == "1")
    assert whole["containerEdits"]["deviceNodes"][0]["major"] == 195
    assert whole["containerEdits"]["deviceNodes"][0]["minor"] == 1
    mig_nodes = next(device for device in spec["devices"] if device["name"] == "0:0")["containerEdits"]["deviceNodes"]
    assert [node.get("major") for node in mig_nodes] == [195, installer.CAPS_MAJOR, installer.CAPS_MAJOR]
    assert [node["minor"] for node in mig_nodes[1:]] == [int(node["path"].rsplit("cap", 1)[1]) for node in mig_nodes[1:]]
