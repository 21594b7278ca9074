# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpudirect: the ACS capability walk on config space bytes built here, the IOMMU mode, the PCI path between a
GPU and its NIC, and the readers on a sysfs tree laid out as the kernel's (bus/pci/devices links into devices/)."""

from __future__ import annotations

import os
import struct

from ansible_collections.gpuops.hardening.plugins.module_utils import gpudirect


def config_space(capabilities=(), size=4096):
    """Config space bytes with extended capabilities [(id, offset, body bytes)] chained in the given order."""
    data = bytearray(size)
    for position, (capability, offset, body) in enumerate(capabilities):
        following = capabilities[position + 1][1] if position + 1 < len(capabilities) else 0
        struct.pack_into("<I", data, offset, capability | (1 << 16) | (following << 20))
        data[offset + 4:offset + 4 + len(body)] = body
    return bytes(data)


def acs_body(control, capability=0x005F):
    return struct.pack("<HH", capability, control)


def test_the_walk_follows_the_chain_from_0x100():
    config = config_space([(0x0001, 0x100, b""), (0x000B, 0x148, b""), (0x000D, 0x220, acs_body(0))])
    assert gpudirect.extended_capabilities(config) == [(0x0001, 1, 0x100), (0x000B, 1, 0x148), (0x000D, 1, 0x220)]


def test_a_short_read_is_unknown_and_conventional_config_space_has_no_capabilities():
    assert gpudirect.extended_capabilities(b"\x00" * 64) is None
    assert gpudirect.acs_state(b"\x00" * 64) == {"readable": False, "present": None, "capability": None,
                                                 "control": None, "request_redirect": None,
                                                 "completion_redirect": None}
    assert gpudirect.acs_state(None)["readable"] is False
    assert gpudirect.extended_capabilities(b"\x00" * 256) == []
    assert gpudirect.acs_state(b"\x00" * 256)["present"] is False


def test_an_empty_list_and_a_loop_end_the_walk():
    assert gpudirect.extended_capabilities(bytes(4096)) == []
    assert gpudirect.extended_capabilities(b"\x00" * 256 + b"\xff" * 3840) == []
    looping = bytearray(4096)
    struct.pack_into("<I", looping, 0x100, 0x0001 | (0x100 << 20))
    assert gpudirect.extended_capabilities(bytes(looping)) == [(0x0001, 0, 0x100)]


def test_the_reserved_low_bits_of_the_next_pointer_are_ignored():
    config = bytearray(config_space([(0x0001, 0x100, b""), (0x000D, 0x148, acs_body(0))]))
    struct.pack_into("<I", config, 0x100, 0x0001 | ((0x148 | 0x3) << 20))
    assert [offset for _cap, _version, offset in gpudirect.extended_capabilities(bytes(config))] == [0x100, 0x148]


def test_acs_control_bits_2_and_3_are_the_redirects():
    for control, request, completion in ((0x0000, False, False), (0x0004, True, False), (0x0008, False, True),
                                         (0x001D, True, True), (0x0013, False, False)):
        state = gpudirect.acs_state(config_space([(0x0001, 0x100, b""), (0x000D, 0x148, acs_body(control))]))
        assert state["readable"] and state["present"] and state["control"] == control
        assert (state["request_redirect"], state["completion_redirect"]) == (request, completion), hex(control)


def test_a_bridge_without_acs_redirects_nothing():
    state = gpudirect.acs_state(config_space([(0x0001, 0x100, b"")]))
    assert state["present"] is False and state["request_redirect"] is None


def test_iommu_modes():
    assert gpudirect.iommu_mode(False, None) == "off"
    assert gpudirect.iommu_mode(True, "identity") == "passthrough"
    assert gpudirect.iommu_mode(True, "DMA") == gpudirect.iommu_mode(True, "DMA-FQ") == "translated"
    assert gpudirect.iommu_mode(True, None) == gpudirect.iommu_mode(True, "blocked") == "unknown"


def test_the_pci_path_of_a_resolved_sysfs_path():
    resolved = "/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/0000:18:10.0/0000:1b:00.0"
    assert gpudirect.pci_path(resolved) == ("pci0000:16", ["0000:16:02.0", "0000:17:00.0", "0000:18:10.0"],
                                            "0000:1b:00.0")
    assert gpudirect.pci_path("/sys/devices/pci0009:00/0009:01:00.0") == ("pci0009:00", [], "0009:01:00.0")
    assert gpudirect.pci_path("/sys/devices/virtual/net/lo") == (None, [], None)


def test_the_bridges_between_two_devices():
    gpu = ("pci0000:16", ["0000:16:02.0", "0000:17:00.0", "0000:18:10.0"], "0000:1b:00.0")
    nic = ("pci0000:16", ["0000:16:02.0", "0000:17:00.0", "0000:18:14.0"], "0000:1d:00.0")
    # The switch's upstream port, where the traffic turns, then each side's downstream port.
    assert gpudirect.bridges_between(gpu, nic) == ["0000:17:00.0", "0000:18:10.0", "0000:18:14.0"]
    same_port = ("pci0000:16", ["0000:16:02.0", "0000:17:00.0", "0000:18:10.0"], "0000:1b:00.1")
    assert gpudirect.bridges_between(gpu, same_port) == ["0000:18:10.0"]
    elsewhere = ("pci0000:80", ["0000:80:01.0"], "0000:81:00.0")
    assert gpudirect.bridges_between(gpu, elsewhere) == gpu[1] + ["0000:80:01.0"]
    assert gpudirect.bridges_between(("pci0009:00", [], "0009:01:00.0"), ("pci0002:00", [], "0002:01:00.0")) == []


def test_the_iommu_words_of_the_kernel_command_line():
    cmdline = "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro intel_iommu=on iommu=pt quiet iommu.strict=0 amd_iommu=off"
    assert gpudirect.iommu_cmdline(cmdline) == ["intel_iommu=on", "iommu=pt", "iommu.strict=0", "amd_iommu=off"]
    assert gpudirect.iommu_cmdline("root=/dev/sda1 ro") == []


# ---- readers, on a tree laid out as the kernel's ----------------------------------------------------------

def _function(sysfs, chain, config=None, iommu_type=None, group="17"):
    """A PCI function at devices/<chain> with its bus/pci/devices link (relative, as the kernel's)."""
    folder = os.path.join(sysfs, "devices", *chain)
    os.makedirs(folder, exist_ok=True)
    link = os.path.join(sysfs, "bus", "pci", "devices", chain[-1])
    os.makedirs(os.path.dirname(link), exist_ok=True)
    os.symlink(os.path.join("..", "..", "..", "devices", *chain), link)
    if config is not None:
        with open(os.path.join(folder, "config"), "wb") as handle:
            handle.write(config)
    if iommu_type is not None:
        group_dir = os.path.join(sysfs, "kernel", "iommu_groups", group)
        os.makedirs(group_dir, exist_ok=True)
        with open(os.path.join(group_dir, "type"), "w", encoding="utf-8") as handle:
            handle.write(iommu_type + "\n")
        os.symlink(os.path.join("..", "..", "..", "..", "..", "..", "kernel", "iommu_groups", group)
                   if len(chain) == 5 else os.path.abspath(group_dir), os.path.join(folder, "iommu_group"))


def _node(tmp_path, acs_control=0, short=None, iommu="identity"):
    sysfs = str(tmp_path / "sys")
    acs = config_space([(0x0001, 0x100, b""), (0x000D, 0x148, acs_body(acs_control))])
    root = ["pci0000:16", "0000:16:02.0"]
    _function(sysfs, root, config=acs)
    _function(sysfs, root + ["0000:17:00.0"], config=short if short is not None else acs)
    _function(sysfs, root + ["0000:17:00.0", "0000:18:10.0"], config=acs)
    _function(sysfs, root + ["0000:17:00.0", "0000:18:14.0"], config=acs)
    _function(sysfs, root + ["0000:17:00.0", "0000:18:10.0", "0000:1b:00.0"], iommu_type=iommu, group="17")
    _function(sysfs, root + ["0000:17:00.0", "0000:18:14.0", "0000:1d:00.0"], iommu_type=iommu, group="18")
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "cmdline").write_text("BOOT_IMAGE=/vmlinuz ro intel_iommu=on iommu=pt\n")
    return sysfs, str(proc)


TOPOLOGY = {
    "gpus": [{"index": 0, "pci_bus_id": "0000:1b:00.0", "nearest_nics": ["mlx5_0"]},
             {"index": 1, "pci_bus_id": "0000:9b:00.0", "nearest_nics": []}],
    "nics": [{"name": "mlx5_0", "pci_bus_id": "0000:1d:00.0"}, {"name": "ib_only", "pci_bus_id": None}],
}


def test_the_fact_of_a_node_whose_gpu_and_nic_share_a_switch(tmp_path):
    sysfs, proc = _node(tmp_path)
    fact = gpudirect.read_gpudirect(sysfs, proc, TOPOLOGY)
    assert fact["rdma_devices"] == ["mlx5_0"]
    assert fact["iommu_cmdline"] == ["intel_iommu=on", "iommu=pt"]
    assert fact["peermem"] == {"loaded": False, "initstate": None, "registry": False, "clients": None}
    first, second = fact["gpus"]
    assert first["iommu"] == {"group": "17", "type": "identity", "mode": "passthrough"}
    assert first["nic"] == {"name": "mlx5_0", "pci_bus_id": "0000:1d:00.0",
                            "iommu": {"group": "18", "type": "identity", "mode": "passthrough"}}
    assert [bridge["pci_bus_id"] for bridge in first["bridges"]] == ["0000:17:00.0", "0000:18:10.0", "0000:18:14.0"]
    assert {bridge["config_bytes"] for bridge in first["bridges"]} == {4096}
    assert {bridge["acs"]["request_redirect"] for bridge in first["bridges"]} == {False}
    # No NIC near it, and sysfs does not list it: unknown, never "no IOMMU".
    assert second == {"index": 1, "pci_bus_id": "0000:9b:00.0", "nic": None, "bridges": None,
                      "iommu": {"group": None, "type": None, "mode": "unknown"}}


def test_redirect_a_short_read_and_a_translating_iommu_are_read_as_they_are(tmp_path):
    sysfs, proc = _node(tmp_path, acs_control=0x001D, short=b"\x86\x80" + b"\x00" * 62, iommu="DMA-FQ")
    gpu = gpudirect.read_gpudirect(sysfs, proc, TOPOLOGY)["gpus"][0]
    assert gpu["iommu"]["mode"] == "translated" and gpu["iommu"]["type"] == "DMA-FQ"
    upstream, down_gpu, _down_nic = gpu["bridges"]
    assert upstream["config_bytes"] == 64 and upstream["acs"]["readable"] is False
    assert down_gpu["acs"]["request_redirect"] and down_gpu["acs"]["completion_redirect"]


def test_no_iommu_group_is_off(tmp_path):
    sysfs = str(tmp_path / "sys")
    _function(sysfs, ["pci0000:00", "0000:00:01.0"])
    assert gpudirect.read_iommu(sysfs, "0000:00:01.0") == {"group": None, "type": None, "mode": "off"}


def test_peermem_loaded_and_registered(tmp_path):
    sysfs = tmp_path / "sys"
    (sysfs / "module" / "nvidia_peermem").mkdir(parents=True)
    (sysfs / "module" / "nvidia_peermem" / "initstate").write_text("live\n")
    assert gpudirect.read_peermem(str(sysfs)) == {"loaded": True, "initstate": "live", "registry": False,
                                                  "clients": None}
    for client in ("nv_mem", "nv_mem_nc"):
        (sysfs / "kernel" / "mm" / "memory_peers" / client).mkdir(parents=True)
    assert gpudirect.read_peermem(str(sysfs))["clients"] == ["nv_mem", "nv_mem_nc"]


def test_a_node_without_rdma_devices_reads_nothing_more_and_one_without_gpus_has_no_fact(tmp_path):
    topology = {"gpus": TOPOLOGY["gpus"], "nics": [{"name": "ib_only", "pci_bus_id": None}]}
    assert gpudirect.read_gpudirect(str(tmp_path), str(tmp_path), topology) == {
        "rdma_devices": [], "gpus": [], "peermem": None, "iommu_cmdline": None}
    assert gpudirect.read_gpudirect(str(tmp_path), str(tmp_path), {"gpus": [], "nics": []}) is None
