# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The swap_off module against a temporary root: fstab, /proc, unit and zram-generator directories."""

from __future__ import annotations

import contextlib
import os
from unittest import mock

import pytest
from ansible.module_utils import basic

from ansible_collections.gpuops.hardening.plugins.module_utils import swap, systemd
from ansible_collections.gpuops.hardening.plugins.module_utils.engines import swap_off
from ansible_collections.gpuops.hardening.plugins.modules.swap_off import main as swap_off_main
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module

FSTAB = (
    "# /etc/fstab\n"
    "UUID=0a1b-2c3d / ext4 errors=remount-ro 0 1\n"
    "UUID=5e6f-7a8b none swap sw 0 0\n"
    "/swapfile none swap sw 0 0\n"
    "tmpfs /tmp tmpfs defaults 0 0\n"
)
PROC_SWAPS = (
    "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
    "/dev/sda2                               partition\t2097148\t\t524288\t\t-2\n"
    "/swapfile                               file\t\t1048572\t\t0\t\t-3\n"
)
NO_SWAPS = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"


def _meminfo(available_mib):
    return "MemTotal:       16314984 kB\nMemFree:         1000000 kB\nMemAvailable:   %d kB\n" % (available_mib * 1024)


@pytest.fixture
def node(tmp_path):
    """A node with fstab swap, two active swap areas, zram-generator and zram-tools configured."""
    (tmp_path / "etc/systemd/system").mkdir(parents=True)
    (tmp_path / "usr/lib/systemd/system").mkdir(parents=True)
    (tmp_path / "proc").mkdir()
    (tmp_path / "etc/fstab").write_text(FSTAB)
    os.chmod(str(tmp_path / "etc/fstab"), 0o640)
    (tmp_path / "proc/swaps").write_text(PROC_SWAPS)
    (tmp_path / "proc/meminfo").write_text(_meminfo(8192))
    (tmp_path / "usr/lib/systemd/system/zramswap.service").write_text("[Service]\nExecStart=/usr/sbin/zramswap start\n")
    (tmp_path / "etc/systemd/zram-generator.conf").write_text("[zram0]\nzram-size = ram / 2\n\n[zram1]\nmount-point = /var/compressed\n")
    return tmp_path


class FakeRun:
    """Records swapoff calls; empties /proc/swaps as the kernel would."""

    def __init__(self, node, rc=0):
        self.node = node
        self.rc = rc
        self.calls = []

    def __call__(self, module, argv, timeout=30, check_rc=False, data=None):
        self.calls.append(argv)
        if self.rc == 0:
            (self.node / "proc/swaps").write_text(NO_SWAPS)
            return 0, "", ""
        return self.rc, "", "swapoff: %s: Cannot allocate memory" % argv[-1]


@contextlib.contextmanager
def swapoff_tools(node, container=None, fake_run=None):
    """The node's swapoff (a FakeRun, which the block gets) and the container the module finds itself in."""
    fake_run = fake_run or FakeRun(node)
    with mock.patch.object(swap_off, "container_type", return_value=container), \
            mock.patch.object(swap_off, "run", fake_run), \
            mock.patch.object(basic.AnsibleModule, "get_bin_path", return_value="/sbin/swapoff"):
        yield fake_run


def _run(node, container=None, fake_run=None, check_mode=False, **extra):
    args = dict(root=str(node))
    args.update(extra)
    with swapoff_tools(node, container, fake_run) as used:
        result = run_module(swap_off_main, args, check_mode=check_mode, diff=True)
    return result, used


def _mask(node, unit):
    path = node / "etc/systemd/system" / unit
    return os.path.islink(str(path)) and os.readlink(str(path)) == "/dev/null"


def test_converges_everything_on_a_host(node):
    result, fake_run = _run(node)
    assert not result["failed"], result
    assert result["changed"] and result["live_applied"]
    assert fake_run.calls == [["/sbin/swapoff", "/dev/sda2"], ["/sbin/swapoff", "/swapfile"]]
    assert result["swapoff"] == ["/dev/sda2", "/swapfile"] and result["swap_used_kib"] == 524288

    fstab = (node / "etc/fstab").read_text()
    assert "#UUID=5e6f-7a8b none swap sw 0 0\n" in fstab and "#/swapfile none swap sw 0 0\n" in fstab
    assert fstab.replace(swap.FSTAB_MARKER + "\n", "").replace("#UUID=5e6f", "UUID=5e6f").replace("#/swapfile", "/swapfile") == FSTAB
    assert oct(os.stat(str(node / "etc/fstab")).st_mode & 0o777) == "0o640"
    backup = result["fstab"]["backup_file"]
    assert backup and open(backup).read() == FSTAB
    assert result["fstab"]["commented"] == ["UUID=5e6f-7a8b none swap sw 0 0", "/swapfile none swap sw 0 0"]

    expected = ["swap.target", "dev-disk-by\\x2duuid-5e6f\\x2d7a8b.swap", "swapfile.swap", "dev-sda2.swap",
                "dev-zram0.swap", "systemd-zram-setup@zram0.service", "zramswap.service"]
    assert result["masked_units"] == expected
    assert all(_mask(node, unit) for unit in expected)
    assert not _mask(node, "dev-zram1.swap")  # a file system, not swap

    dropin = node / "etc/systemd/zram-generator.conf.d/99-gpuops-hardening-no-swap.conf"
    assert systemd.parse_ini_sections(dropin.read_text()) == [("zram0", {"host-memory-limit": "0"})]
    assert result["zram"] == {"devices": ["zram0"], "dropin": str(dropin), "changed": True}
    headers = [d["after_header"] for d in result["diff"]]
    assert headers[0] == str(node / "etc/fstab") and headers[-1] == "/proc/swaps (live)"
    assert "/dev/sda2 partition" in result["diff"][-1]["before"]


def test_second_run_is_a_no_op(node):
    _run(node)
    result, fake_run = _run(node)
    assert not result["changed"], result["diff"]
    assert result["diff"] == [] and fake_run.calls == []
    assert result["masks_changed"] == [] and result["live_applied"]


def test_check_mode_changes_nothing(node):
    result, fake_run = _run(node, check_mode=True)
    assert result["changed"] and fake_run.calls == []
    assert result["swapoff"] == ["/dev/sda2", "/swapfile"]
    assert (node / "etc/fstab").read_text() == FSTAB
    assert os.listdir(str(node / "etc/systemd/system")) == []
    assert not (node / "etc/systemd/zram-generator.conf.d").exists()
    assert len(result["masks_changed"]) == 7


def test_refuses_when_swap_in_use_does_not_fit(node):
    (node / "proc/meminfo").write_text(_meminfo(1024))  # 512 MiB used, 1024 available, 1024 margin
    result, fake_run = _run(node)
    assert result["failed"]
    assert result["msg"].startswith("refusing to turn swap off: 512 MiB of swap is in use")
    assert "sysctl_swapoff_force" in result["msg"] and "Nothing was changed" in result["msg"]
    assert fake_run.calls == []
    assert (node / "etc/fstab").read_text() == FSTAB
    assert os.listdir(str(node / "etc/systemd/system")) == []


def test_smaller_margin_lets_it_through(node):
    (node / "proc/meminfo").write_text(_meminfo(1024))
    result, dummy = _run(node, margin_mib=256)
    assert not result["failed"] and result["live_applied"]


def test_force_turns_swap_off_with_a_warning(node):
    (node / "proc/meminfo").write_text(_meminfo(600))
    result, fake_run = _run(node, force=True)
    assert not result["failed"]
    assert len(fake_run.calls) == 2
    assert any("force is set" in w for w in result["warnings"])


def test_container_persists_and_says_why_it_skips_swapoff(node):
    result, fake_run = _run(node, container="docker")
    assert not result["failed"] and result["changed"]
    assert fake_run.calls == [] and result["swapoff"] == []
    assert not result["live_applied"]
    assert "docker container" in result["live_skipped_reason"]
    assert any("swapoff skipped" in w for w in result["warnings"])
    # The host's swap areas are not this node's units.
    assert not _mask(node, "dev-sda2.swap")
    assert _mask(node, "swapfile.swap") and _mask(node, "swap.target")
    assert "#/swapfile none swap sw 0 0" in (node / "etc/fstab").read_text()
    again, dummy = _run(node, container="docker")
    assert not again["changed"] and again["warnings"]


def test_container_ignores_the_host_swap_for_the_safety_check(node):
    (node / "proc/meminfo").write_text(_meminfo(10))
    result, dummy = _run(node, container="docker")
    assert not result["failed"]


def test_unit_file_in_the_way_is_backed_up(node):
    unit = node / "etc/systemd/system/data-swapfile.swap"
    unit.write_text("[Swap]\nWhat=/data/swapfile\n")
    result, dummy = _run(node)
    assert _mask(node, "data-swapfile.swap")
    changed = dict((m["unit"], m["backup_file"]) for m in result["masks_changed"])
    assert open(changed["data-swapfile.swap"]).read() == "[Swap]\nWhat=/data/swapfile\n"
    assert changed["swap.target"] is None


def test_generated_swap_units_are_masked(node):
    generator = node / "run/systemd/generator"
    generator.mkdir(parents=True)
    (generator / "dev-vdb.swap").write_text("[Swap]\nWhat=/dev/vdb\n")
    result, dummy = _run(node)
    assert "dev-vdb.swap" in result["masked_units"] and _mask(node, "dev-vdb.swap")


def test_zram_generator_installed_without_config_still_covers_zram0(node):
    (node / "etc/systemd/zram-generator.conf").unlink()
    (node / "usr/lib/systemd/system-generators").mkdir(parents=True)
    (node / "usr/lib/systemd/system-generators/zram-generator").write_text("")
    result, dummy = _run(node)
    assert result["zram"]["devices"] == ["zram0"]


def test_no_zram_at_all_writes_no_dropin(node):
    (node / "etc/systemd/zram-generator.conf").unlink()
    (node / "usr/lib/systemd/system/zramswap.service").unlink()
    result, dummy = _run(node)
    assert result["zram"] == {"devices": [], "dropin": None, "changed": False}
    assert not (node / "etc/systemd/zram-generator.conf.d").exists()
    assert "zramswap.service" not in result["masked_units"]


def test_swapoff_failure_names_what_was_done(node):
    result, dummy = _run(node, fake_run=FakeRun(node, rc=255))
    assert result["failed"]
    assert "swapoff /dev/sda2 failed: swapoff: /dev/sda2: Cannot allocate memory" in result["msg"]
    assert "already off: none" in result["msg"]


def test_no_fstab_and_no_swap(node):
    (node / "etc/fstab").unlink()
    (node / "proc/swaps").write_text(NO_SWAPS)
    result, fake_run = _run(node, mask_swap_target=False, zram_services=[])
    assert result["fstab"] is None and fake_run.calls == []
    assert result["masked_units"] == ["dev-zram0.swap", "systemd-zram-setup@zram0.service"]


def test_negative_margin_fails(node):
    result, dummy = _run(node, margin_mib=-1)
    assert result["failed"] and "margin_mib" in result["msg"]


def test_fstab_link_is_kept(node):
    real = node / "etc/fstab.real"
    (node / "etc/fstab").rename(real)
    (node / "etc/fstab").symlink_to("fstab.real")
    result, dummy = _run(node)
    assert os.path.islink(str(node / "etc/fstab"))
    assert "#/swapfile none swap sw 0 0" in real.read_text()
    assert result["fstab"]["path"] == str(real)


def test_labelled_fstab_entry_masks_the_unit_systemd_generates(node):
    (node / "etc/fstab").write_text("LABEL=GPU\\040swap\\040(nvme,1) none swap sw 0 0\n")
    result, dummy = _run(node)
    assert not result["failed"], result
    unit = "dev-disk-by\\x2dlabel-GPU\\x5cx20swap\\x5cx20\\x5cx28nvme\\x5cx2c1\\x5cx29.swap"
    assert unit in result["masked_units"] and _mask(node, unit)
