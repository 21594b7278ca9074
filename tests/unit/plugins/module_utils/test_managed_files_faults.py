# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write faults in managed_files: a full or read-only file system fails with the path and
the system's reason, the old file stays whole and no .gpuops-* temporary is left."""

from __future__ import annotations

import errno
import os

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import managed_files

OLD = "old content\n"
NEW = "new content\n"


class Failed(Exception):
    pass


class FakeModule:
    check_mode = False

    def fail_json(self, msg, **kwargs):
        raise Failed(msg)

    def atomic_move(self, source, destination):
        os.rename(source, destination)


def _os_error(code, path):
    return OSError(code, os.strerror(code), path)


class FullDiskHandle:
    """A file object whose write fails as a full file system's does."""

    def __init__(self, fd):
        os.close(fd)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return False

    def write(self, data):
        raise _os_error(errno.ENOSPC, "handle")


@pytest.fixture
def managed(tmp_path):
    path = tmp_path / "90-gpuops.conf"
    path.write_text(OLD)
    return path


def _left_over(folder):
    return sorted(name for name in os.listdir(str(folder)) if name.startswith(".gpuops-"))


def test_a_full_disk_keeps_the_old_file_and_leaves_no_temporary(managed, monkeypatch):
    monkeypatch.setattr(managed_files.os, "fdopen", lambda fd, mode: FullDiskHandle(fd))
    with pytest.raises(Failed) as failure:
        managed_files.ensure_content(FakeModule(), str(managed), NEW)
    assert "could not write %s: No space left on device" % managed in str(failure.value)
    assert managed.read_text() == OLD
    assert _left_over(managed.parent) == []


@pytest.fixture
def read_only_folder(monkeypatch):
    """The folder refuses new files, as a read-only /etc does."""
    def refuse(**kwargs):
        raise _os_error(errno.EROFS, kwargs["dir"])
    monkeypatch.setattr(managed_files.tempfile, "mkstemp", refuse)


@pytest.mark.usefixtures("read_only_folder")
def test_a_read_only_file_system_names_the_path_and_changes_nothing(managed):
    with pytest.raises(Failed) as failure:
        managed_files.ensure_content(FakeModule(), str(managed), NEW)
    assert "could not write %s: Read-only file system" % managed in str(failure.value)
    assert managed.read_text() == OLD


def test_a_failed_rename_removes_the_temporary(managed, monkeypatch):
    def refuse_rename(source, destination):
        raise _os_error(errno.EXDEV, destination)
    module = FakeModule()
    module.atomic_move = refuse_rename
    with pytest.raises(Failed) as failure:
        managed_files.ensure_content(module, str(managed), NEW)
    assert "Invalid cross-device link" in str(failure.value)
    assert managed.read_text() == OLD and _left_over(managed.parent) == []


@pytest.mark.usefixtures("read_only_folder")
def test_check_writable_fails_before_any_change_when_the_folder_refuses_files(managed):
    with pytest.raises(Failed) as failure:
        managed_files.check_writable(FakeModule(), str(managed), NEW)
    assert "could not write %s: Read-only file system; nothing was changed" % managed in str(failure.value)
    # Unchanged content needs no write, so a read-only folder is no reason to fail.
    managed_files.check_writable(FakeModule(), str(managed), OLD)


def test_check_writable_leaves_no_probe_behind(managed):
    managed_files.check_writable(FakeModule(), str(managed.parent / "sub" / "new.conf"), NEW)
    assert _left_over(managed.parent) == [] and not (managed.parent / "sub").exists()


def test_a_link_that_cannot_be_made_names_the_path_and_leaves_no_temporary(tmp_path, monkeypatch):
    def refuse(source, destination):
        raise _os_error(errno.ENOSPC, destination)
    monkeypatch.setattr(managed_files.os, "rename", refuse)
    path = tmp_path / "unit.service"
    with pytest.raises(Failed) as failure:
        managed_files.ensure_symlink(FakeModule(), str(path), "/dev/null")
    assert "could not write %s: No space left on device" % path in str(failure.value)
    assert not os.path.lexists(str(path)) and _left_over(tmp_path) == []


def test_remove_path_names_the_path_and_the_reason(managed, monkeypatch):
    def refuse(path):
        raise _os_error(errno.EROFS, path)
    monkeypatch.setattr(managed_files.os, "unlink", refuse)
    with pytest.raises(Failed) as failure:
        managed_files.remove_path(FakeModule(), str(managed))
    assert "could not write %s: Read-only file system; it was not removed" % managed in str(failure.value)
    assert managed.read_text() == OLD


def test_a_backup_is_made_whole_before_the_write(managed):
    result, diff = managed_files.ensure_content(FakeModule(), str(managed), NEW, backup=True)
    backup = result["backup_file"]
    assert backup.startswith(str(managed) + ".%d." % os.getpid()) and backup.endswith("~")
    with open(backup) as handle:
        assert handle.read() == OLD
    assert managed.read_text() == NEW and diff["before"] == OLD
    assert _left_over(managed.parent) == []


def test_a_full_disk_during_the_backup_leaves_no_partial_backup(managed, monkeypatch):
    def copy_fails(source, destination):
        with open(destination, "w") as handle:
            handle.write(OLD[:3])
        raise _os_error(errno.ENOSPC, destination)
    monkeypatch.setattr(managed_files.shutil, "copy2", copy_fails)
    with pytest.raises(Failed) as failure:
        managed_files.ensure_content(FakeModule(), str(managed), NEW, backup=True)
    assert "could not write %s: No space left on device" % managed in str(failure.value)
    assert managed.read_text() == OLD
    assert sorted(os.listdir(str(managed.parent))) == [managed.name]


def test_a_folder_that_cannot_be_made_names_the_path(tmp_path, monkeypatch):
    def refuse(path, mode):
        raise _os_error(errno.EROFS, path)
    monkeypatch.setattr(managed_files.os, "makedirs", refuse)
    target = tmp_path / "missing" / "x.conf"
    with pytest.raises(Failed) as failure:
        managed_files.ensure_content(FakeModule(), str(target), NEW)
    assert "could not write %s: Read-only file system" % target in str(failure.value)
    with pytest.raises(Failed) as failure:
        managed_files.ensure_symlink(FakeModule(), str(target), "/dev/null")
    assert "could not write %s: Read-only file system" % target in str(failure.value)
