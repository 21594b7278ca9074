# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The memlock limit's dialects, its systemd drop-ins, and what the running system allows."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import memlock
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import dropin_files, last_setting, parse_show


# --- the limit ---------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    ("unlimited", "unlimited"),
    (" unlimited ", "unlimited"),
    (65536, 65536),
    ("65536", 65536),
    (memlock.MAX_KIB, memlock.MAX_KIB),
])
def test_parse_limit_accepts(value, expected):
    assert memlock.parse_limit(value) == expected


@pytest.mark.parametrize("value", ["abc", "0", 0, -5, "-1", "1.5", 1.5, True, "", "infinity", "64K", memlock.MAX_KIB + 1, "007"])
def test_parse_limit_rejects_with_what_is_allowed(value):
    with pytest.raises(ValueError, match="allowed: unlimited or a positive integer"):
        memlock.parse_limit(value)


def test_dialects_of_unlimited_and_kib():
    assert memlock.systemd_value("unlimited") == "infinity"
    assert memlock.systemd_value(65536) == "65536K"
    assert memlock.limit_bytes("unlimited") is None
    assert memlock.limit_bytes(8) == 8192


@pytest.mark.parametrize("text, expected", [("infinity", "unlimited"), ("8388608", 8192), ("", None), (None, None), ("x", None)])
def test_from_systemd_bytes(text, expected):
    assert memlock.from_systemd_bytes(text) == expected


@pytest.mark.parametrize("have, wanted, expected", [
    ("unlimited", "unlimited", True), ("unlimited", 10, True), (8192, "unlimited", False),
    (8192, 8192, True), (8192, 8193, False), (None, 1, False),
])
def test_covers(have, wanted, expected):
    assert memlock.covers(have, wanted) is expected


# --- systemd drop-ins -------------------------------------------------------

@pytest.mark.parametrize("limit, value", [("unlimited", "infinity"), (65536, "65536K")])
def test_rendered_dropins_set_the_limit_and_say_who_manages_them(limit, value):
    manager = memlock.render_manager_dropin(limit)
    unit = memlock.render_unit_dropin(limit)
    assert last_setting(manager, "Manager", "DefaultLimitMEMLOCK") == value
    assert last_setting(unit, "Service", "LimitMEMLOCK") == value
    assert manager.startswith("# Managed by gpuops.hardening") and unit.startswith("# Managed by gpuops.hardening")


# --- the running system ------------------------------------------------------

LIMITS_8M = (
    "Limit                     Soft Limit           Hard Limit           Units     \n"
    "Max open files            1048576              1048576              files     \n"
    "Max locked memory         8388608              8388608              bytes     \n"
)


def test_proc_memlock_hard():
    assert memlock.proc_memlock_hard(LIMITS_8M) == 8192
    assert memlock.proc_memlock_hard(LIMITS_8M.replace("8388608              bytes", "unlimited            bytes")) == "unlimited"
    assert memlock.proc_memlock_hard("") is None


def test_has_capability():
    assert not memlock.has_capability("CapEff:\t00000000a80425fb\n", memlock.CAP_SYS_RESOURCE)
    assert memlock.has_capability("CapEff:\t000001ffffffffff\n", memlock.CAP_SYS_RESOURCE)


def test_process_start_epoch_handles_spaces_in_the_name():
    stat = "42 (my (odd) daemon) S 1 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 500 1000 10\n"
    assert memlock.process_start_epoch(stat, 1000, 100) == 1005.0
    assert memlock.boot_epoch("cpu 1 2 3\nbtime 1700000000\n") == 1700000000


# --- systemd helpers this module added ---------------------------------------

def test_last_setting_takes_the_last_value_in_the_section():
    text = "[Manager]\n#DefaultLimitMEMLOCK=8M\nDefaultLimitMEMLOCK=64K\n[Other]\nDefaultLimitMEMLOCK=1\n[Manager]\nDefaultLimitMEMLOCK=infinity\n"
    assert last_setting(text, "Manager", "DefaultLimitMEMLOCK") == "infinity"
    assert last_setting("[Manager]\nDefaultLimitMEMLOCK=\n", "Manager", "DefaultLimitMEMLOCK") == ""
    assert last_setting("", "Manager", "DefaultLimitMEMLOCK") is None


def test_dropin_files_order_and_masking(tmp_path):
    etc, lib = tmp_path / "etc", tmp_path / "lib"
    etc.mkdir()
    lib.mkdir()
    for directory, name in ((etc, "90-a.conf"), (lib, "90-a.conf"), (lib, "10-b.conf"), (etc, "50-c.conf"), (etc, "x.txt")):
        (directory / name).write_text("")
    assert dropin_files([str(etc), str(lib), str(tmp_path / "absent")]) == [str(lib / "10-b.conf"), str(etc / "50-c.conf"), str(etc / "90-a.conf")]


def test_parse_show_blocks():
    text = "Id=docker.service\nLimitMEMLOCK=infinity\n\nId=slurmd.service\nExecStart={ path=/x ; argv[]=/x --a=b }\n"
    assert parse_show(text) == [{"Id": "docker.service", "LimitMEMLOCK": "infinity"}, {"Id": "slurmd.service", "ExecStart": "{ path=/x ; argv[]=/x --a=b }"}]
