# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One lock per node, so that two runs never converge the same node at once.

Every module that changes the node takes it before it reads anything and holds it
until its process ends: the read, the plan and the apply of one run never
interleave with another run's. The lock is flock(2) on a file under /run/lock,
a tmpfs: the kernel drops it when its holder's process ends, however it ends,
so an interrupted run never leaves a stale lock, and a reboot leaves no file.
The file records its holder (module, pid, since when) for the message of a
module that waited in vain.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import atexit
import errno
import fcntl
import json
import os
import time

from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import under_root

LOCK_PATH = "/run/lock/gpuops-hardening.lock"
# Short enough that a waiter starts soon after the holder ends; a waiting module costs nothing else.
POLL_SECONDS = 0.2
# A wait shorter than this is not worth a warning (another module's last writes).
QUIET_WAIT_SECONDS = 1.0
# The locks this process holds, with its pid: released at its exit, or by release_held() in a process that runs
# several modules' main() (the unit tests).
_HELD = []


class LockTimeout(Exception):
    """The lock stayed held for the whole wait; the message names the holder."""


def describe_holder(record):
    """'MODULE, pid N, since T' from the lock file's text, or why there is no holder to name."""
    try:
        holder = json.loads(record)
        return "%s, pid %d, since %s" % (holder["module"], holder["pid"], holder["since"])
    except (ValueError, TypeError, KeyError):
        return "holder not recorded (a process outside gpuops.hardening, such as flock(1), may hold it)"


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


def acquire(path, module_name, timeout, clock=time.monotonic, sleep=time.sleep):
    """Take the lock at path, waiting at most timeout seconds.

    Returns (fd, waited seconds, the holder found when the wait began or None).
    The fd is not inherited by child processes (PEP 446), so a daemon a module
    starts never keeps the lock. Raises LockTimeout naming the holder when the
    wait runs out.
    """
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o755)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
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
    except (IOError, OSError) as exc:
        module.fail_json(msg="cannot take the node lock %s: %s; /run/lock must be a writable directory" % (path, exc),
                         changed=False)
    if not _HELD:
        atexit.register(release_held)
    _HELD.append((fd, os.getpid()))
    if waited >= QUIET_WAIT_SECONDS:
        module.warn("waited %.0f s for another gpuops.hardening run to release %s (held by %s); this run went on "
                    "after it" % (waited, path, holder))
