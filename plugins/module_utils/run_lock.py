# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One lock per node, so that two runs never converge the same node at once.

Every module that changes the node takes it before it reads anything and holds it
until its process ends: the read, the plan and the apply of one run never
interleave with another run's. The lock is flock(2) on /run/gpuops-hardening/node.lock,
on the /run tmpfs: the kernel drops it when its holder's process ends, however it
ends, so an interrupted run never leaves a stale lock, and a reboot leaves no file.
The file records its holder (module, pid, since when) for the message of a
module that waited in vain, which adds the holder's command line where /proc has it.

Only the running user (root) may reach the lock. Its folder is created mode 0700
and refused when it is a symbolic link, not a directory, not ours, or writable by
group or others; the file is opened without following a symbolic link, without
truncating it (the record is rewritten only once the lock is held), and kept mode
0600. A lock any local user could open would let that user hold it and block every
run, and a link planted in its place would have root write over the link's target.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import atexit
import errno
import fcntl
import json
import os
import stat
import time

from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import read_text, under_root

LOCK_PATH = "/run/gpuops-hardening/node.lock"
# Short enough that a waiter starts soon after the holder ends; a waiting module costs nothing else.
POLL_SECONDS = 0.2
# A wait shorter than this is not worth a warning (another module's last writes).
QUIET_WAIT_SECONDS = 1.0
# A holder's command line is said up to this many characters (an Ansible module's is a long path).
COMMAND_CHARS = 300
# The locks this process holds, with its pid: released at its exit, or by release_held() in a process that runs
# several modules' main() (the unit tests).
_HELD = []


class LockTimeout(Exception):
    """The lock stayed held for the whole wait; the message names the holder."""


class LockRefused(Exception):
    """The lock's folder or file is not ours alone; the message says what stands there."""


def describe_holder(record):
    """'MODULE, pid N, since T' (and its command line) from the lock file's text, or why there is no holder to name."""
    try:
        holder = json.loads(record)
        text = "%s, pid %d, since %s" % (holder["module"], holder["pid"], holder["since"])
    except (ValueError, TypeError, KeyError):
        return "holder not recorded (a process outside gpuops.hardening, such as flock(1), may hold it)"
    command = _holder_command(holder["pid"])
    return text + (", running %s" % command if command else "")


def _holder_command(pid):
    """The command line of process pid, on one line and cut short, or None once it is gone."""
    # The holder is a process of this kernel, whatever the module's root: /proc is the host's own.
    arguments = read_text("/proc/%d/cmdline" % pid)
    if not arguments:
        return None
    command = " ".join(arguments.replace("\0", " ").split())
    return command if len(command) <= COMMAND_CHARS else command[:COMMAND_CHARS] + "..."


def holder_record(module_name, now=None):
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now if now is not None else time.time()))
    return json.dumps({"module": module_name, "pid": os.getpid(), "since": since}, sort_keys=True) + "\n"


def _read_record(fd):
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, 4096).decode("utf-8", "replace")


def _write_record(fd, record):
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, record.encode("utf-8"))


def _try_lock(fd):
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except (IOError, OSError) as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            return False
        raise


def open_lock_file(path):
    """The lock file at path, opened read-write, created 0600 in a folder of ours alone. Raises LockRefused."""
    folder = _open_private_folder(os.path.dirname(path))
    try:
        fd = os.open(os.path.basename(path), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                     dir_fd=folder)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LockRefused("%s is a symbolic link; remove it, and a run creates the lock file again" % path)
        raise
    finally:
        os.close(folder)
    try:
        _check_ours(fd, path, stat.S_ISREG, "a regular file")
        os.fchmod(fd, 0o600)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_private_folder(directory):
    """The lock's folder as an fd: created 0700, or the one there if only we may write it. Raises LockRefused."""
    parent = os.path.dirname(directory)
    if not os.path.isdir(parent):
        # Below a test's root; on a host /run is there.
        os.makedirs(parent, 0o755)
    try:
        os.mkdir(directory, 0o700)
        created = True
    except OSError as exc:
        if exc.errno != errno.EEXIST:
            raise
        created = False
    try:
        folder = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise LockRefused("%s is not a directory (a symbolic link or a file stands there); remove it, and a run "
                              "creates it again" % directory)
        raise
    try:
        _check_ours(folder, directory, stat.S_ISDIR, "a directory")
        if created:
            os.fchmod(folder, 0o700)  # whatever the umask left
        elif os.fstat(folder).st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise LockRefused("%s is writable by group or others; only its owner may write it (chmod 0700)" % directory)
    except BaseException:
        os.close(folder)
        raise
    return folder


def _check_ours(fd, path, is_kind, kind):
    """LockRefused unless the open fd is of the kind wanted and owned by the running user."""
    info = os.fstat(fd)
    if not is_kind(info.st_mode):
        raise LockRefused("%s is not %s" % (path, kind))
    if info.st_uid != os.geteuid():
        raise LockRefused("%s belongs to uid %d, not to the running user (uid %d); remove it, and a run creates it "
                          "again" % (path, info.st_uid, os.geteuid()))


def acquire(path, module_name, timeout, clock=time.monotonic, sleep=time.sleep):
    """Take the lock at path, waiting at most timeout seconds.

    Returns (fd, waited seconds, the holder found when the wait began or None).
    The fd is not inherited by child processes (O_CLOEXEC), so a daemon a module
    starts never keeps the lock. Raises LockTimeout naming the holder when the
    wait runs out, LockRefused when the folder or the file is not ours alone.
    """
    fd = open_lock_file(path)
    started = clock()
    first_holder = None
    while not _try_lock(fd):
        if first_holder is None:
            first_holder = describe_holder(_read_record(fd))
        if clock() - started >= timeout:
            holder = describe_holder(_read_record(fd))
            os.close(fd)
            raise LockTimeout("another gpuops.hardening run holds %s: %s; waited %d s (lock_timeout). Let that run "
                              "finish, or end it, and run again" % (path, holder, timeout))
        sleep(POLL_SECONDS)
    _write_record(fd, holder_record(module_name))
    return fd, clock() - started, first_holder


def release(fd):
    """Forget the holder, then unlock: the next holder writes its own record after locking.

    Unlocked explicitly rather than by close(): a child forked without exec
    shares the open file, and would otherwise keep the lock after we end.
    """
    try:
        _write_record(fd, "")
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def locks_held():
    """How many locks this process holds (a count for release_held's keep)."""
    return len(_HELD)


def release_held(keep=0):
    """Release this process's locks but the first keep; a child forked without exec leaves its parent's alone."""
    while len(_HELD) > keep:
        fd, owner = _HELD.pop()
        if owner == os.getpid():
            release(fd)


def hold_node_lock(module, module_name, in_check_mode=False):
    """Hold the node lock until this module's process ends; nothing at all in check mode.

    Check mode writes nothing, not even the lock file. A module that does the
    same work in check mode (one that measures) passes in_check_mode=True, so
    that its work never overlaps another run's changes in either mode. A wait
    that was long enough to notice is said as a warning; one that runs out
    fails the module before it has read or changed anything.
    """
    if module.check_mode and not in_check_mode:
        return
    path = under_root(module.params["root"], LOCK_PATH)
    timeout = module.params["lock_timeout"]
    if timeout < 0:
        module.fail_json(msg="lock_timeout must be 0 or more seconds, got %d" % timeout)
    try:
        fd, waited, holder = acquire(path, module_name, timeout)
    except LockTimeout as exc:
        module.fail_json(msg=str(exc), changed=False)
    except LockRefused as exc:
        module.fail_json(msg="refusing the node lock %s: %s" % (path, exc), changed=False)
    except (IOError, OSError) as exc:
        module.fail_json(msg="cannot take the node lock %s: %s; %s must be a writable directory" % (
            path, exc, os.path.dirname(os.path.dirname(path))), changed=False)
    if not _HELD:
        atexit.register(release_held)
    _HELD.append((fd, os.getpid()))
    if waited >= QUIET_WAIT_SECONDS:
        module.warn("waited %.0f s for another gpuops.hardening run to release %s (held by %s); this run went on "
                    "after it" % (waited, path, holder))
