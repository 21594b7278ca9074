# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""installed_files: paths to remove, and the units it enables or disables around its files."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import installed_files
from ansible_collections.gpuops.hardening.plugins.modules.installed_files import main as installed_files_main
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.recorded_systemctl import recorded_systemctl

OWNER = {"owner": str(os.getuid()), "group": str(os.getgid())}
UNIT = "demo-boot.service"
UNIT_PATH = "/etc/systemd/system/" + UNIT
SCRIPT = "/usr/local/libexec/demo-boot"
LIBRARY = "/usr/local/lib/demo"


@pytest.fixture
def systemd():
    with recorded_systemctl(installed_files) as recorded:
        yield recorded


def _install(root, **extra):
    args = dict(OWNER, root=str(root), folders=[{"path": LIBRARY}], files=[
        {"path": LIBRARY + "/engine.py", "content": "ENGINE = 1\n"},
        {"path": SCRIPT, "content": "#!/bin/sh\n", "mode": "0755"},
        {"path": UNIT_PATH, "content": "[Service]\nExecStart=%s\n" % SCRIPT},
    ], units=[{"name": UNIT, "enabled": True}])
    args.update(extra)
    return args


def _remove(root):
    return dict(OWNER, root=str(root), absent=[SCRIPT, LIBRARY, UNIT_PATH], units=[{"name": UNIT, "enabled": False}])


def _exists(root, path):
    return os.path.lexists(str(root) + path)


def test_a_unit_installed_is_reloaded_then_enabled_and_a_rerun_asks_nothing(tmp_path, systemd):
    result = run_module(installed_files_main, _install(tmp_path))
    assert not result["failed"], result
    assert systemd.calls == ["daemon-reload", "enable " + UNIT]
    assert result["changed"] and result["changed_units"] == [UNIT] and result["removed_paths"] == []

    systemd.calls = []
    again = run_module(installed_files_main, _install(tmp_path))
    assert again["changed"] is False and again["changed_units"] == [] and systemd.calls == []


def test_check_mode_reports_the_enable_of_a_unit_not_yet_installed(tmp_path, systemd):
    result = run_module(installed_files_main, _install(tmp_path), check_mode=True)
    assert result["changed"] and result["changed_units"] == [UNIT]
    assert systemd.calls == [] and not _exists(tmp_path, UNIT_PATH)


def test_a_changed_unit_file_is_reloaded_and_other_files_are_not(tmp_path, systemd):
    run_module(installed_files_main, _install(tmp_path))
    systemd.calls = []
    args = _install(tmp_path)
    args["files"][0]["content"] = "ENGINE = 2\n"
    assert run_module(installed_files_main, args)["changed"] and systemd.calls == []

    args["files"][2]["content"] = "[Service]\nExecStart=%s --again\n" % SCRIPT
    result = run_module(installed_files_main, args)
    assert result["changed_paths"] == [str(tmp_path) + UNIT_PATH] and systemd.calls == ["daemon-reload"]


def test_removal_disables_first_then_removes_in_order_and_reloads(tmp_path, systemd):
    run_module(installed_files_main, _install(tmp_path))
    systemd.calls = []
    result = run_module(installed_files_main, _remove(tmp_path), diff=True)
    assert not result["failed"], result
    assert systemd.calls == ["disable " + UNIT, "daemon-reload"]
    assert result["removed_paths"] == [str(tmp_path) + path for path in (SCRIPT, LIBRARY, UNIT_PATH)]
    assert result["changed"] and result["changed_units"] == [UNIT]
    assert not any(_exists(tmp_path, path) for path in (SCRIPT, LIBRARY, UNIT_PATH))
    assert [entry["after_header"] for entry in result["diff"]] == [path + " (absent)" for path in result["removed_paths"]]
    assert result["diff"][1]["before"] == "directory, with everything below it\n"
    assert result["diff"][2]["before"].startswith("[Service]")

    systemd.calls = []
    again = run_module(installed_files_main, _remove(tmp_path))
    assert again["changed"] is False and again["removed_paths"] == [] and systemd.calls == []


def test_removal_in_check_mode_reports_and_keeps_everything(tmp_path, systemd):
    run_module(installed_files_main, _install(tmp_path))
    systemd.calls = []
    result = run_module(installed_files_main, _remove(tmp_path), check_mode=True)
    assert result["changed"] and result["changed_units"] == [UNIT] and len(result["removed_paths"]) == 3
    assert systemd.calls == [] and systemd.enabled == {UNIT}
    assert all(_exists(tmp_path, path) for path in (SCRIPT, LIBRARY + "/engine.py", UNIT_PATH))


def test_a_unit_to_be_off_that_is_not_installed_needs_no_systemctl(tmp_path, systemd):
    result = run_module(installed_files_main, _remove(tmp_path))
    assert result["changed"] is False and systemd.calls == []


@pytest.mark.parametrize("absent, expected", [
    ("relative/path", "'relative/path' is not a path this module may remove"),
    ("/", "'/' is not a path this module may remove"),
    (SCRIPT, SCRIPT + " is also in folders or files"),
])
def test_a_bad_path_to_remove_fails_before_any_change(tmp_path, systemd, absent, expected):
    result = run_module(installed_files_main, _install(tmp_path, absent=[absent]))
    assert result["failed"] and expected in result["msg"], result
    assert not _exists(tmp_path, LIBRARY) and systemd.calls == []
