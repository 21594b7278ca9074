# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fake sysfs's PCI hierarchy, bridges' config space, IOMMU groups and nvidia_peermem, and each GPUDirect
fault, written in place and cleared again."""

from __future__ import annotations

import os
import struct
import subprocess

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import gpudirect
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api, pci, sysfs, sysfs_gpudirect

RDMA_PROFILES = [name for name in api.PROFILES if api.new_state(name)["nics"]]


def _devices(out):
    return os.path.join(out, "bus", "pci", "devices")


def _config(out, bdf):
    with open(os.path.join(_devices(out), bdf, "config"), "rb") as handle:
        return handle.read()


def _acs_control(config):
    header, = struct.unpack_from("<I", config, sysfs_gpudirect.ACS_OFFSET)
    assert header & 0xFFFF == 0x000D
    return struct.unpack_from("<H", config, sysfs_gpudirect.ACS_OFFSET + 6)[0]


@pytest.fixture(params=api.PROFILES)
def tree(request, tmp_path):
    out = str(tmp_path / "sys")
    sysfs.generate(request.param, out)
    return request.param, out


def test_every_device_links_into_its_hierarchy_below_its_profile_s_bridges(tree):
    profile, out = tree
    state = api.new_state(profile)
    plan = sysfs_gpudirect.layout(state)
    for item in state["gpus"] + state["nics"]:
        bdf = pci.sysfs_id(item["pci_bus_id"])
        link = os.path.join(_devices(out), bdf)
        assert os.path.islink(link) and not os.path.isabs(os.readlink(link))
        root, bridges, device = gpudirect.pci_path(os.path.realpath(link))
        assert device == bdf and root.startswith("pci%s:" % bdf[:4])
        # One bridge per pcie_path element after the host bridge.
        assert len(bridges) == len(item["pcie_path"]) - 1
        assert bridges[-1:] == ([plan["above"][bdf]] if bridges else [])


def test_the_bridges_between_a_gpu_and_a_nic_agree_with_topo_m(tree):
    profile, out = tree
    state = api.new_state(profile)
    for gpu in state["gpus"]:
        for nic in state["nics"]:
            between = gpudirect.bridges_between(*[gpudirect.read_device_path(out, pci.sysfs_id(item["pci_bus_id"]))
                                                  for item in (gpu, nic)])
            shared = 0
            for left, right in zip(gpu["pcie_path"], nic["pcie_path"]):
                if left != right:
                    break
                shared += 1
            below = len(gpu["pcie_path"]) + len(nic["pcie_path"]) - 2 * max(shared, 1)
            code = pci.relation(gpu, nic)
            # Below one switch (PIX, PXB): the bridge where the traffic turns, then each side's own; else each
            # side's bridges below the host bridge(s).
            assert len(between) == (below + 1 if code in ("PIX", "PXB") else below), (gpu, nic, between)
            if code == "PIX":
                assert len(between) == 1


def test_each_bridge_holds_an_acs_capability_with_redirect_off(tree):
    profile, out = tree
    for bridge in sysfs_gpudirect.layout(api.new_state(profile))["bridges"]:
        config = _config(out, bridge)
        assert len(config) == 4096
        assert struct.unpack_from("<HH", config, 0) == (0x1000, 0xC030)
        assert config[0x0E] == 0x01 and struct.unpack_from("<I", config, 8)[0] >> 8 == 0x060400
        assert _acs_control(config) == 0
        assert gpudirect.extended_capabilities(config) == [(0x0001, 2, 0x100), (0x000D, 1, 0x148)]


def test_iommu_groups_and_peermem_follow_the_profile(tree):
    profile, out = tree
    state = api.new_state(profile)
    for item in state["gpus"] + state["nics"]:
        group = os.path.join(_devices(out), pci.sysfs_id(item["pci_bus_id"]), "iommu_group")
        if state["iommu"] == "passthrough":
            with open(os.path.join(group, "type"), encoding="utf-8") as handle:
                assert handle.read() == "identity\n"
        else:
            assert not os.path.exists(group)
    module = os.path.join(out, "module", "nvidia_peermem")
    assert os.path.isdir(module) == bool(state["nics"])
    if state["nics"]:
        with open(os.path.join(module, "initstate"), encoding="utf-8") as handle:
            assert handle.read() == "live\n"


@pytest.mark.parametrize("profile", RDMA_PROFILES)
def test_each_fault_flips_in_place_and_clears(tmp_path, profile):
    out = str(tmp_path / "sys")
    sysfs.generate(profile, out)
    state = api.new_state(profile)
    plan = sysfs_gpudirect.layout(state)
    gpu = pci.sysfs_id(state["gpus"][0]["pci_bus_id"])
    devices_inode = os.stat(_devices(out)).st_ino
    module_inode = os.stat(os.path.join(out, "module")).st_ino
    faults = {"iommu_type": {"0": "DMA-FQ"}, "peermem": "missing"}
    if gpu in plan["above"]:
        faults["acs_redirect"] = ["0"]
    sysfs.set_faults(profile, out, faults)
    assert gpudirect.read_iommu(out, gpu)["type"] == "DMA-FQ"
    assert gpudirect.read_iommu(out, pci.sysfs_id(state["nics"][0]["pci_bus_id"]))["mode"] != "translated"
    assert not os.path.exists(os.path.join(out, "module", "nvidia_peermem"))
    if gpu in plan["above"]:
        assert _acs_control(_config(out, plan["above"][gpu])) == 0x001D
        others = [bridge for bridge in plan["bridges"] if bridge != plan["above"][gpu]]
        assert {_acs_control(_config(out, bridge)) for bridge in others} <= {0}
    # The folders a node has mounted are the same ones, changed in place.
    assert os.stat(_devices(out)).st_ino == devices_inode
    assert os.stat(os.path.join(out, "module")).st_ino == module_inode
    sysfs.set_faults(profile, out, {})
    fresh = str(tmp_path / "fresh")
    sysfs.generate(profile, fresh)
    for bridge in plan["bridges"]:
        assert _config(out, bridge) == _config(fresh, bridge)
    assert gpudirect.read_iommu(out, gpu) == gpudirect.read_iommu(fresh, gpu)
    assert os.path.isdir(os.path.join(out, "module", "nvidia_peermem"))


def test_the_command_line_sets_and_clears_faults(tmp_path):
    out = str(tmp_path / "sys")
    env = dict(os.environ, PYTHONPATH=api.PACKAGE_PARENT)

    def gpuemu(*argv):
        done = subprocess.run(["python3", "-m", "gpuemu", *argv], env=env, capture_output=True, text=True,
                              check=False)
        assert done.returncode == 0, done.stderr

    gpuemu("sysfs", "--profile", "dgx_h100", "--out", out)
    gpuemu("sysfs-faults", "--profile", "dgx_h100", "--out", out, "--faults", '{"acs_redirect": ["2"]}')
    above = sysfs_gpudirect.layout(api.new_state("dgx_h100"))["above"]
    bridge = above[pci.sysfs_id(api.new_state("dgx_h100")["gpus"][2]["pci_bus_id"])]
    assert gpudirect.acs_state(_config(out, bridge))["request_redirect"] is True
    gpuemu("sysfs-faults", "--profile", "dgx_h100", "--out", out)
    assert gpudirect.acs_state(_config(out, bridge))["request_redirect"] is False
