# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""installed_files: folders and files in one call, with honest changed, per-file diff and check mode."""

from __future__ import annotations

import os
import stat

import pytest
from ansible.module_utils import basic

from ansible_collections.gpuops.hardening.plugins.modules.installed_files import main as installed_files_main
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import NODE_LOCK_PATHS, run_module

OWNER = {"owner": str(os.getuid()), "group": str(os.getgid())}


def _args(root, **extra):
    args = dict(OWNER, root=str(root), folders=[{"path": "/usr/local/lib/demo"}], files=[
        {"path": "/usr/local/lib/demo/helper.py", "content": "VALUE = 1\n"},
        {"path": "/usr/local/bin/demo", "content": "#!/usr/bin/python3\nprint('demo')\n", "mode": "0755"},
    ])
    args.update(extra)
    return args


def _mode(path):
    return stat.S_IMODE(os.stat(str(path)).st_mode)


def _tree(root):
    found = []
    for folder, names, files in os.walk(str(root)):
        for name in names + files:
            relative = os.path.relpath(os.path.join(folder, name), str(root))
            if relative not in NODE_LOCK_PATHS:
                found.append(relative)
    return sorted(found)


def test_first_run_creates_everything_then_nothing_changes(tmp_path):
    result = run_module(installed_files_main, _args(tmp_path), diff=True)
    assert not result["failed"], result
    lib = str(tmp_path / "usr/local/lib/demo")
    script = str(tmp_path / "usr/local/bin/demo")
    assert result["changed"] is True
    assert result["changed_paths"] == [lib, lib + "/helper.py", script]
    assert result["paths"] == result["changed_paths"]
    assert [entry["after_header"] for entry in result["diff"]] == result["changed_paths"]
    assert result["diff"][2]["before_header"] == script + " (absent)"
    assert (tmp_path / "usr/local/bin/demo").read_text() == "#!/usr/bin/python3\nprint('demo')\n"
    assert (_mode(lib), _mode(lib + "/helper.py"), _mode(script)) == (0o755, 0o644, 0o755)

    again = run_module(installed_files_main, _args(tmp_path), diff=True)
    assert again["changed"] is False and again["changed_paths"] == [] and again["diff"] == []
    assert not [name for name in _tree(tmp_path) if ".gpuops-" in name]


def test_check_mode_reports_and_writes_nothing(tmp_path):
    result = run_module(installed_files_main, _args(tmp_path), check_mode=True, diff=True)
    assert result["changed"] is True and len(result["diff"]) == 3
    assert _tree(tmp_path) == []


def test_only_what_differs_changes(tmp_path):
    run_module(installed_files_main, _args(tmp_path))
    helper = tmp_path / "usr/local/lib/demo/helper.py"
    script = tmp_path / "usr/local/bin/demo"
    helper.write_text("VALUE = 0\n")
    script.chmod(0o700)

    checked = run_module(installed_files_main, _args(tmp_path), check_mode=True, diff=True)
    assert checked["changed_paths"] == [str(helper), str(script)]
    assert [entry["before"] for entry in checked["diff"]] == ["VALUE = 0\n"]
    assert helper.read_text() == "VALUE = 0\n" and _mode(script) == 0o700

    result = run_module(installed_files_main, _args(tmp_path), diff=True)
    assert result["changed_paths"] == [str(helper), str(script)]
    assert helper.read_text() == "VALUE = 1\n" and _mode(script) == 0o755


def test_paths_not_given_are_left_alone(tmp_path):
    run_module(installed_files_main, _args(tmp_path))
    other = tmp_path / "usr/local/lib/demo/other.py"
    other.write_text("kept\n")
    result = run_module(installed_files_main, _args(tmp_path))
    assert result["changed"] is False and other.read_text() == "kept\n"


@pytest.mark.parametrize("mode", ["644", "rw-r--r--", "99999", "0800"])
def test_a_bad_mode_fails_before_any_change(tmp_path, mode):
    args = _args(tmp_path)
    args["files"][1]["mode"] = mode
    result = run_module(installed_files_main, args)
    if mode == "644":
        assert not result["failed"] and _mode(tmp_path / "usr/local/bin/demo") == 0o644
        return
    assert result["failed"] and "not an octal mode" in result["msg"] and "/usr/local/bin/demo" in result["msg"]
    assert _tree(tmp_path) == []


def test_src_without_the_action_plugin_fails_clearly(tmp_path):
    args = _args(tmp_path, files=[{"path": "/etc/demo", "src": "demo.conf"}])
    result = run_module(installed_files_main, args)
    assert result["failed"] and "/etc/demo: no content" in result["msg"]
    assert _tree(tmp_path) == []


def test_owner_is_set(tmp_path, monkeypatch):
    calls = []

    def record(self, path, owner, changed, diff=None):
        calls.append((path, owner))
        return changed

    monkeypatch.setattr(basic.AnsibleModule, "set_owner_if_different", record)
    result = run_module(installed_files_main, _args(tmp_path, owner="root"))
    assert not result["failed"], result
    assert [owner for path, owner in calls if path] == ["root"] * 3
