# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stopping the emulated daemons. systemd stops an MPS unit with its ExecStop, which
sends quit, then sends SIGTERM to what is left (systemd.kill(5)), so the two often come
at once. Every daemon must be gone within STOP_SECONDS; one still running then is
killed and fails the test instead of hanging it."""

from __future__ import annotations

import errno
import os
import signal
import stat
import time

import pytest

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api, daemon as daemon_signals, mps
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.mps_users import Client, child_rc_within

ROUNDS = 30
# A stopping daemon is gone in well under a second; the margin is for a loaded machine.
STOP_SECONDS = 5.0
READY_SECONDS = 10.0
POLL_SECONDS = 0.02


@pytest.fixture
def start_daemon(mps_env):
    """start_daemon(state path) -> a foreground daemon (-f) in a forked child, once it
    answers on its socket. Daemons a test left running are killed afterwards."""
    started = []

    def _start(path):
        daemon = Client(None, "nvidia-cuda-mps-control", ["-f"], dict(os.environ, GPUEMU_STATE=path, **mps_env))
        started.append(daemon)
        deadline = time.monotonic() + READY_SECONDS
        while mps.request(mps_env["CUDA_MPS_PIPE_DIRECTORY"], "")[0] is None:
            assert time.monotonic() < deadline, "the daemon did not answer within %s seconds" % READY_SECONDS
            time.sleep(POLL_SECONDS)
        return daemon
    yield _start
    for daemon in started:
        if not daemon.out.closed:
            daemon.rc_within(0)


def quit_daemon(mps_env):
    assert mps.request(mps_env["CUDA_MPS_PIPE_DIRECTORY"], "quit") == ("", None)


def test_every_stop_ends_the_daemon(make_state, mps_env, start_daemon):
    """Half the rounds stop by SIGTERM alone (systemctl stop of a daemon that missed
    quit), half by quit followed at once by SIGTERM."""
    path = make_state("l40s_4x")
    for round_number in range(ROUNDS):
        daemon = start_daemon(path)
        if round_number % 2:
            quit_daemon(mps_env)
        os.kill(daemon.pid, signal.SIGTERM)
        assert daemon.rc_within(STOP_SECONDS) == 0, "round %d: the daemon did not stop" % round_number
    assert api.read_state(path)["daemons"]["mps"] == []


def _writer_once_read(fifo):
    """The write end of fifo, opened once a reader has it open (until then Linux
    refuses a non-blocking writer with ENXIO, fifo(7))."""
    deadline = time.monotonic() + READY_SECONDS
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as error:
            if error.errno != errno.ENXIO or time.monotonic() > deadline:
                raise
        time.sleep(POLL_SECONDS)


def test_sigterm_while_the_quitting_daemon_holds_the_state_lock(make_state, mps_env, start_daemon):
    """The race itself, made certain: after quit the daemon takes the state file's
    lock to take its record out, and SIGTERM comes while it holds it. The state file
    is a FIFO here, so the daemon waits inside the lock, reading, until the test has
    sent SIGTERM and then the state."""
    path = make_state("l40s_4x")
    daemon = start_daemon(path)
    with open(path, "rb") as handle:
        state_bytes = handle.read()
    os.mkfifo(path + ".fifo")
    os.replace(path + ".fifo", path)
    try:
        quit_daemon(mps_env)
        writer = _writer_once_read(path)
        os.kill(daemon.pid, signal.SIGTERM)
        assert os.write(writer, state_bytes) == len(state_bytes)
        os.close(writer)
        assert daemon.rc_within(STOP_SECONDS) == 0
    finally:
        # A hung daemon never replaced the FIFO: the fixtures' cleanup must not wait on it.
        if stat.S_ISFIFO(os.stat(path).st_mode):
            with open(path + ".file", "wb") as handle:
                handle.write(state_bytes)
            os.replace(path + ".file", path)
    assert api.read_state(path)["daemons"]["mps"] == []


def _let_pending_handlers_run():
    # Python runs a signal's handler between two bytecodes of the main thread.
    for dummy in range(100):
        pass


def test_a_second_stop_signal_does_not_run_the_stop_again():
    """The stop handler runs once: a second signal while it runs (the handler sends
    itself one here) would run it again inside the first, which waits forever for
    the state lock when the first holds it (nvidia-persistenced's stop)."""
    child = os.fork()
    if child == 0:
        calls = []
        try:
            def stop():
                calls.append(signal.SIGTERM)
                os.kill(os.getpid(), signal.SIGTERM)
                _let_pending_handlers_run()
            daemon_signals.on_stop(stop)
            os.kill(os.getpid(), signal.SIGTERM)
            _let_pending_handlers_run()
        finally:
            os._exit(len(calls))  # pylint: disable=protected-access
    assert child_rc_within(child, STOP_SECONDS) == 1
