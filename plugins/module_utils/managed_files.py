# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Idempotent whole-file writes with check mode, diff and backups.

The role modules converge several files in one call; each file goes through
ensure_content() so that every module reports changes and diffs the same way.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import stat
import tempfile
import time

from ansible.module_utils.common.text.converters import to_bytes

from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import read_text


def managed_header(module_name):
    """The first line of every file a module renders itself."""
    return "# Managed by gpuops.hardening (module %s); edits here are overwritten." % module_name


def file_diff(path, before, after):
    """One entry of an Ansible diff list."""
    return {
        "before_header": path if before is not None else "%s (absent)" % path,
        "after_header": path,
        "before": before or "",
        "after": after,
    }


def removal_diff(host_path, shown_path=None):
    """The diff entry of removing host_path: a link's target, a folder with everything below it, or a file's
    text. shown_path is the path on the node, where host_path lies below a module's root option."""
    shown = shown_path or host_path
    if os.path.islink(host_path):
        before = "symlink to %s\n" % os.readlink(host_path)
    elif os.path.isdir(host_path):
        before = "directory, with everything below it\n"
    else:
        before = read_text(host_path) or ""
    return {"before_header": shown, "after_header": "%s (absent)" % shown, "before": before, "after": ""}


def _current_mode(path):
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return None


def write_error(path, error, outcome="the file was left as it was, with no partial content"):
    """The message for an OSError while changing path: the path, the system's reason, what is left."""
    reason = getattr(error, "strerror", None) or str(error)
    return "could not write %s: %s; %s. Make its file system writable and give it room, then run again" % (
        path, reason, outcome)


def check_writable(module, path, content):
    """Fail before any other change when path is to get content but its folder refuses new
    files (read-only, full, not permitted): a module must not apply live settings it then
    cannot persist."""
    if module.check_mode or read_text(path) == content:
        return
    directory = os.path.dirname(path)
    while not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    try:
        fd, probe = tempfile.mkstemp(prefix=".gpuops-", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except (IOError, OSError) as error:
        module.fail_json(msg=write_error(path, error, "nothing was changed"))


def remove_path(module, path):
    """Remove a file, link or folder tree this module owns; an OSError fails with its path."""
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except (IOError, OSError) as error:
        module.fail_json(msg=write_error(path, error, "it was not removed"))


def backup_copy(path, now=None, folder=None):
    """Copy path beside itself (or into folder, for files in a folder a daemon reads whole), named as Ansible
    names backups (path.PID.DATE@TIME~); returns the copy's path.

    The copy is written to a temporary file and renamed, so a full disk leaves
    no partial backup: either the whole copy or none. OSError propagates.
    """
    stamp = time.strftime("%Y-%m-%d@%H:%M:%S~", time.localtime(now if now is not None else time.time()))
    if folder and not os.path.isdir(folder):
        os.makedirs(folder, 0o700)
    backup_path = "%s.%s.%s" % (os.path.join(folder, os.path.basename(path)) if folder else path, os.getpid(), stamp)
    fd, tmp_path = tempfile.mkstemp(prefix=".gpuops-", dir=os.path.dirname(backup_path))
    os.close(fd)
    try:
        shutil.copy2(path, tmp_path)
        os.rename(tmp_path, backup_path)
    finally:
        if os.path.exists(tmp_path):
            os.unlink(tmp_path)
    return backup_path


def _replace_file(module, path, content, mode, backup, result):
    """Write a temporary file beside path and rename it over path; the temporary goes on failure.

    Every step (the folder, the backup, the write, the rename) raises OSError, which
    ensure_content turns into one message.
    """
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o755)
    if backup and os.path.exists(path):
        result["backup_file"] = backup_copy(path)
    fd, tmp_path = tempfile.mkstemp(prefix=".gpuops-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(to_bytes(content, errors="surrogate_or_strict"))
        os.chmod(tmp_path, mode)
        module.atomic_move(tmp_path, path)
    finally:
        if os.path.exists(tmp_path):
            os.unlink(tmp_path)


def ensure_content(module, path, content, mode=0o644, backup=False):
    """Make path hold exactly content with the given mode.

    Returns (result, diff): result has path, changed, backup_file; diff is None
    when nothing changes. Honours check mode. The write is atomic (temporary
    file in the same directory, then rename), so a reader never sees half a file.
    ``mode=None`` keeps an existing file's mode (for files the module only edits,
    such as /etc/fstab) and gives a new file 0644.
    """
    before = read_text(path)
    content_changed = before != content
    if mode is None:
        mode = _current_mode(path) or 0o644
    mode_changed = _current_mode(path) not in (None, mode)
    result = {"path": path, "changed": content_changed or mode_changed, "backup_file": None}
    diff = file_diff(path, before, content) if content_changed else None
    if not result["changed"] or module.check_mode:
        return result, diff

    try:
        if content_changed:
            _replace_file(module, path, content, mode, backup, result)
        os.chmod(path, mode)
    except (IOError, OSError) as error:
        module.fail_json(msg=write_error(path, error))
    return result, diff


def _describe_link_state(path):
    if os.path.islink(path):
        return "symlink to %s\n" % os.readlink(path)
    if os.path.lexists(path):
        return read_text(path) or ""
    return ""


def ensure_symlink(module, path, target, backup=False):
    """Make path a symlink to target (a systemd mask is a link to /dev/null).

    A regular file in the way is backed up first when backup is set. Returns
    (result, diff) like ensure_content. The link is created beside path and
    renamed over it, so there is no moment without one.
    """
    result = {"path": path, "changed": False, "backup_file": None}
    if os.path.islink(path) and os.readlink(path) == target:
        return result, None
    if os.path.isdir(path) and not os.path.islink(path):
        module.fail_json(msg="%s is a directory; refusing to replace it with a link to %s" % (path, target))
    existed = os.path.lexists(path)
    result["changed"] = True
    diff = {
        "before_header": path if existed else "%s (absent)" % path,
        "after_header": path,
        "before": _describe_link_state(path),
        "after": "symlink to %s\n" % target,
    }
    if module.check_mode:
        return result, diff
    directory = os.path.dirname(path)
    tmp_path = os.path.join(directory, ".gpuops-link-%d-%s" % (os.getpid(), os.path.basename(path)))
    try:
        if not os.path.isdir(directory):
            os.makedirs(directory, 0o755)
        if backup and existed and not os.path.islink(path):
            result["backup_file"] = backup_copy(path)
        if os.path.lexists(tmp_path):
            os.unlink(tmp_path)
        os.symlink(target, tmp_path)
        os.rename(tmp_path, path)
    except (IOError, OSError) as error:
        if os.path.lexists(tmp_path):
            os.unlink(tmp_path)
        module.fail_json(msg=write_error(path, error))
    return result, diff


def ensure_folder(module, path, mode=0o755):
    """Make path a folder with the given mode; missing parents are created with 0755.

    Returns (result, diff) like ensure_content. Something else in the way is
    refused, never removed.
    """
    result = {"path": path, "changed": False, "backup_file": None}
    if os.path.lexists(path) and not os.path.isdir(path):
        module.fail_json(msg="%s exists and is not a directory; refusing to replace it with one" % path)
    existed = os.path.isdir(path)
    diff = None
    if not existed:
        diff = {"before_header": "%s (absent)" % path, "after_header": path, "before": "", "after": "directory\n"}
    result["changed"] = not existed or _current_mode(path) != mode
    if not result["changed"] or module.check_mode:
        return result, diff
    try:
        if not existed:
            os.makedirs(path, 0o755)
        os.chmod(path, mode)
    except (IOError, OSError) as error:
        module.fail_json(msg=write_error(path, error, "it was not created"))
    return result, diff


def ensure_owner(module, path, owner, group):
    """Give an existing path this owner and group (names or ids); True when it had another.

    In check mode it only reports; a path check mode did not create is already
    reported by its content or folder.
    """
    if not os.path.lexists(path):
        return False
    changed = module.set_owner_if_different(path, owner, False)
    return module.set_group_if_different(path, group, changed)
