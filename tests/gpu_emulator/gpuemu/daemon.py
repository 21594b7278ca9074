# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Forking into the background the classic way, with a readiness handshake so the
starting command only returns once the daemon really serves (as systemd's
Type=forking expects)."""

import os
import select
import signal
import sys

from . import state as state_file


def detach(start, ready_timeout=10.0):
    """Run start(report) in a detached grandchild. start must call report(None) when
    ready or report("message") on failure, then serve. Returns (ok, message) in the
    calling process; never returns in the daemon."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child:
        os.close(write_end)
        os.waitpid(child, 0)
        message = b""
        while select.select([read_end], [], [], ready_timeout)[0]:
            chunk = os.read(read_end, 4096)
            if not chunk:
                break
            message += chunk
        os.close(read_end)
        text = message.decode("utf-8", "replace")
        return text.startswith("ok"), text[3:] if text.startswith("ok") else text
    os.close(read_end)
    os.setsid()
    if os.fork():
        os._exit(0)  # pylint: disable=protected-access
    _detach_stdio()

    def report(error):
        os.write(write_end, ("ok\n" if error is None else error).encode("utf-8"))
        os.close(write_end)

    try:
        start(report)
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 0
    except Exception as error:  # pylint: disable=broad-except
        try:
            report("%s\n" % error)
        except OSError:
            pass
        code = 1
    os._exit(code)  # pylint: disable=protected-access


def _detach_stdio():
    # Inherited pipes would keep the caller's subprocess.run waiting for EOF.
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    sys.stdin = open(os.devnull, encoding="utf-8")  # pylint: disable=consider-using-with
    sys.stdout = sys.stderr = open(os.devnull, "w", encoding="utf-8")  # pylint: disable=consider-using-with


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def on_stop(handler):
    """Call handler() once, on the first of SIGTERM/SIGINT/SIGHUP (systemctl stop,
    kill, Ctrl-C). Later ones are ignored: a second call, run while the first one
    holds the state file's lock, would wait for that lock forever."""
    def _stop(signum, frame):
        del signum, frame
        for each in STOP_SIGNALS:
            signal.signal(each, signal.SIG_IGN)
        handler()
    for signum in STOP_SIGNALS:
        signal.signal(signum, _stop)


class StopRequest(object):
    """Notes a stop signal (see on_stop) for a main loop that stops between two of its
    steps. The handler does nothing else: it interrupts the loop anywhere, also while
    the loop holds the state file's lock, and an flock taken again through another
    open of the lock file waits even in the process that holds it (flock(2))."""

    def __init__(self):
        self.requested = False
        on_stop(self._note)

    def _note(self):
        self.requested = True


def serve_until_stopped(report, state_path, name, files, stop_event=None):
    """Report readiness, then wait for a stop signal: clear the daemon's record in the
    state (only when it is still this process's: a newer instance may own it), note
    stop_event when given, remove the daemon's files, and exit."""
    def stop():
        with state_file.editing(state_path) as current:
            record = current["daemons"].get(name)
            if record and record.get("pid") == os.getpid():
                current["daemons"][name] = None
                if stop_event:
                    state_file.record(current, stop_event, pid=os.getpid())
        for path in files:
            if os.path.exists(path):
                os.unlink(path)
        sys.exit(0)

    on_stop(stop)
    report(None)
    while True:
        signal.pause()
