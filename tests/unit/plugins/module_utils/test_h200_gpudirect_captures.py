# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpudirect on the captures of a real H200 VM (fixtures/h200_gpudirect, its README says how they were taken).

The values below are read by hand from the capture text: the extended capability headers at 0x100, 0x12c,
0x134, 0x1b8, 0x248, 0x250, 0x2a4, 0x2b8 and 0x2f0 of the od dump, the resolved path, the empty group list."""

from __future__ import annotations

import os

from ansible_collections.gpuops.hardening.plugins.module_utils import gpudirect

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "h200_gpudirect")
GPU = "0000:00:06.0"


def _lines(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle if not line.startswith("#")]


def _config_bytes():
    """The od -A x -t x1 dump back to bytes (the last line is the end offset alone)."""
    data = bytearray()
    for line in _lines("config_0000_00_06.0.txt"):
        words = line.split()
        data.extend(int(word, 16) for word in words[1:])
    return bytes(data)


def test_the_gpu_s_config_space_walks_to_its_serial_number_and_holds_no_acs():
    config = _config_bytes()
    assert len(config) == 4096 and config[:4] == b"\xde\x10\x35\x23"  # 10de:2335, as dev_*.txt says
    # The hypervisor hides some capabilities as ID 0 and keeps their next pointers: the walk goes on.
    assert gpudirect.extended_capabilities(config) == [
        (0x0000, 0, 0x100), (0x0018, 1, 0x12C), (0x0000, 1, 0x134), (0x0001, 2, 0x1B8), (0x0000, 1, 0x248),
        (0x0000, 1, 0x250), (0x000B, 1, 0x2A4), (0x0004, 1, 0x2B8), (0x0003, 1, 0x2F0)]
    acs = gpudirect.acs_state(config)
    assert acs["readable"] and acs["present"] is False and acs["request_redirect"] is None


def test_what_a_user_who_is_not_root_reads_of_it_is_unknown():
    assert gpudirect.acs_state(_config_bytes()[:64])["readable"] is False


def test_the_gpu_hangs_on_the_host_bridge_with_no_bridge_above_it():
    resolved, = _lines("gpu_sysfs_path.txt")
    assert gpudirect.pci_path(resolved) == ("pci0000:00", [], GPU)


def test_no_iommu_group_and_no_iommu_word_on_the_command_line():
    assert [line for line in _lines("iommu_groups.txt") if line.startswith("/sys/kernel/iommu_groups/")
            and "No such file" not in line] == []
    assert "iommu_group: iommu_group type: cat:" in "\n".join(_lines("dev_0000_00_06.0.txt"))
    cmdline, = _lines("proc_cmdline.txt")
    assert gpudirect.iommu_cmdline(cmdline) == []


def test_the_readers_on_a_tree_laid_out_as_the_capture_shows(tmp_path):
    """The GPU as the VM's sysfs has it: its config file, no iommu_group, and the modules of the capture."""
    sysfs = tmp_path / "sys"
    folder = sysfs / "devices" / "pci0000:00" / GPU
    folder.mkdir(parents=True)
    (folder / "config").write_bytes(_config_bytes())
    (sysfs / "bus" / "pci" / "devices").mkdir(parents=True)
    os.symlink("../../../devices/pci0000:00/" + GPU, str(sysfs / "bus" / "pci" / "devices" / GPU))
    listed = _lines("modules.txt")
    # The /sys/module names come first, before /proc/modules' lines and the memory_peers error.
    modules = listed[:next(i for i, line in enumerate(listed) if " " in line)]
    for name in modules:
        (sysfs / "module" / name).mkdir(parents=True, exist_ok=True)
    assert "nvidia_peermem" not in modules and {"nvidia", "mlx5_ib", "ib_core"} <= set(modules)
    assert gpudirect.read_device_path(str(sysfs), GPU) == ("pci0000:00", [], GPU)
    assert gpudirect.read_iommu(str(sysfs), GPU) == {"group": None, "type": None, "mode": "off"}
    assert gpudirect.read_bridge(str(sysfs), GPU)["config_bytes"] == 4096
    assert gpudirect.read_peermem(str(sysfs)) == {"loaded": False, "initstate": None, "registry": False,
                                                  "clients": None}
