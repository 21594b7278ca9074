# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Running emulated tools as another user, for the MPS access tests.

As root (CI), a forked child drops to an unprivileged uid that no account needs to
exist for, with or without the pipe directory's group: nothing is created system-wide.
As a plain user, the child keeps the current uid and the pipe directory's mode
includes or excludes its owner instead.
"""

from __future__ import annotations

import io
import os
import select
import signal
import time
import traceback

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import cli

AS_ROOT = os.geteuid() == 0
OTHER_UID = OTHER_GID = 4242
PIPE_GROUP = 4343


def grant(pipe_dir, member):
    """Set the pipe directory's access; returns the identity (uid, gid, groups) a
    client runs as, or None for the current user."""
    if AS_ROOT:
        # The role's layout: 0770 root:<group>.
        os.chown(pipe_dir, 0, PIPE_GROUP)
        os.chmod(pipe_dir, 0o770)
        return (OTHER_UID, OTHER_GID, [PIPE_GROUP] if member else [])
    os.chmod(pipe_dir, 0o700 if member else 0o070)
    return None


def _child(identity, tool, argv, environ, stdin_text, out_fd, err_fd):
    out = os.fdopen(out_fd, "w", buffering=1, encoding="utf-8")
    err = os.fdopen(err_fd, "w", buffering=1, encoding="utf-8")
    code = 70
    try:
        if identity:
            # The collection may lie where the other uid cannot read it (CI builds under /root).
            cli.load(tool)
            uid, gid, groups = identity
            os.setgroups(groups)
            os.setgid(gid)
            os.setuid(uid)
        code = cli.main(tool, argv, stdin=io.StringIO(stdin_text or ""), stdout=out, stderr=err, environ=environ)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 0
    except BaseException as error:  # pylint: disable=broad-except
        # The error first: formatting the traceback can fail where the uid cannot read the code.
        err.write("%s: %s\n" % (type(error).__name__, error))
        err.write(traceback.format_exc())
    finally:
        out.flush()
        err.flush()
        os._exit(code)  # pylint: disable=protected-access


class Client(object):
    """One tool run in a forked child as identity (see grant)."""

    def __init__(self, identity, tool, argv, environ, stdin_text=None):
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(out_read)
            os.close(err_read)
            _child(identity, tool, list(argv), environ, stdin_text, out_write, err_write)
        os.close(out_write)
        os.close(err_write)
        self.out = os.fdopen(out_read, encoding="utf-8")
        self.err = os.fdopen(err_read, encoding="utf-8")

    def first_line(self, timeout=10.0):
        """The first stdout line ("" when none came within timeout)."""
        if not select.select([self.out], [], [], timeout)[0]:
            return ""
        return self.out.readline()

    def finish(self):
        """(rc, rest of stdout, stderr) once the child has ended."""
        out, err = self.out.read(), self.err.read()
        self.out.close()
        self.err.close()
        return _rc(os.waitpid(self.pid, 0)[1]), out, err

    def rc_within(self, timeout):
        """The child's rc once it ended, or None when it still ran after timeout seconds
        (see child_rc_within)."""
        rc = child_rc_within(self.pid, timeout)
        self.out.close()
        self.err.close()
        return rc


def _rc(status):
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)


def child_rc_within(pid, timeout):
    """The rc of child pid once it ended, or None when it still ran after timeout
    seconds: then it is killed, so a hung child fails a test instead of hanging it."""
    deadline = time.monotonic() + timeout
    while True:
        ended, status = os.waitpid(pid, os.WNOHANG)
        if ended or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    if not ended:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return _rc(status) if ended else None


def run_as(identity, tool, argv, environ, stdin_text=None):
    return Client(identity, tool, argv, environ, stdin_text).finish()
