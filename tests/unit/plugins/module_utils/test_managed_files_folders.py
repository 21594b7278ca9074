# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""managed_files.ensure_folder and ensure_owner: honest changed, diff, check mode."""

from __future__ import annotations

import errno
import os
import stat

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import managed_files


class Failed(Exception):
    pass


class FakeModule:
    def __init__(self, check_mode=False):
        self.check_mode = check_mode
        self.owner_calls = []

    def fail_json(self, msg, **kwargs):
        raise Failed(msg)

    def set_owner_if_different(self, path, owner, changed):
        self.owner_calls.append(("owner", path, owner))
        return changed or owner == "someone-else"

    def set_group_if_different(self, path, group, changed):
        self.owner_calls.append(("group", path, group))
        return changed


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_missing_folder_and_parents_are_created(tmp_path):
    path = str(tmp_path / "a" / "b" / "c")
    result, diff = managed_files.ensure_folder(FakeModule(), path, 0o750)
    assert result["changed"] is True
    assert diff == {"before_header": path + " (absent)", "after_header": path, "before": "", "after": "directory\n"}
    assert _mode(path) == 0o750
    assert _mode(str(tmp_path / "a")) == 0o755 & ~_umask()

    again, diff = managed_files.ensure_folder(FakeModule(), path, 0o750)
    assert again["changed"] is False and diff is None


def _umask():
    current = os.umask(0)
    os.umask(current)
    return current


def test_folder_mode_is_corrected_without_a_content_diff(tmp_path):
    path = tmp_path / "d"
    path.mkdir(mode=0o700)
    result, diff = managed_files.ensure_folder(FakeModule(), str(path), 0o755)
    assert result["changed"] is True and diff is None
    assert _mode(str(path)) == 0o755


def test_check_mode_creates_nothing(tmp_path):
    path = tmp_path / "d"
    result, diff = managed_files.ensure_folder(FakeModule(check_mode=True), str(path), 0o755)
    assert result["changed"] is True and diff["after"] == "directory\n"
    assert not path.exists()


def test_a_file_in_the_way_is_refused(tmp_path):
    path = tmp_path / "d"
    path.write_text("data\n")
    with pytest.raises(Failed, match="exists and is not a directory"):
        managed_files.ensure_folder(FakeModule(), str(path), 0o755)
    assert path.read_text() == "data\n"


def test_folder_write_fault_names_the_path(tmp_path, monkeypatch):
    def read_only(path, mode):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)

    monkeypatch.setattr(managed_files.os, "makedirs", read_only)
    path = str(tmp_path / "d")
    with pytest.raises(Failed, match="could not write .*/d: Read-only file system; it was not created"):
        managed_files.ensure_folder(FakeModule(), path, 0o755)


def test_owner_is_asked_for_existing_paths_only(tmp_path):
    module = FakeModule()
    assert managed_files.ensure_owner(module, str(tmp_path / "absent"), "root", "root") is False
    assert module.owner_calls == []
    assert managed_files.ensure_owner(module, str(tmp_path), "root", "root") is False
    assert managed_files.ensure_owner(module, str(tmp_path), "someone-else", "root") is True
    assert module.owner_calls[:2] == [("owner", str(tmp_path), "root"), ("group", str(tmp_path), "root")]
