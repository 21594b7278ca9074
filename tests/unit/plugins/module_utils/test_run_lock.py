# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node lock against a second process: contention, the timeout's message, a dead holder, check mode;
and against a local user: a lock only the running user can reach."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import run_lock
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import under_root
from ansible_collections.gpuops.hardening.plugins.modules.sysctl_settings import main as sysctl_settings_main
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module

# A second process that takes the lock through run_lock itself, says so on stdout, and holds it until killed.
HOLDER = textwrap.dedent("""
    import sys, time
    sys.path[:0] = %r
    from ansible_collections.gpuops.hardening.plugins.module_utils import run_lock
    fd, waited, holder = run_lock.acquire(sys.argv[1], "gpuops.hardening.nvidia_mig", timeout=30)
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
    run_lock.release(fd)
""") % (sys.path,)


@pytest.fixture
def lock_path(tmp_path):
    """The node lock below tmp_path as the modules' root."""
    return under_root(str(tmp_path), run_lock.LOCK_PATH)


def start_holder(lock_path, seconds=60):
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, lock_path, str(seconds)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    return holder


def test_a_free_lock_is_taken_at_once_and_records_its_holder(lock_path):
    fd, waited, holder = run_lock.acquire(lock_path, "gpuops.hardening.thp", timeout=5)
    try:
        assert waited < run_lock.QUIET_WAIT_SECONDS and holder is None
        with open(lock_path) as handle:
            record = json.load(handle)
        assert record["module"] == "gpuops.hardening.thp"
        assert record["pid"] == os.getpid()
        assert time.strptime(record["since"], "%Y-%m-%dT%H:%M:%SZ")
    finally:
        run_lock.release(fd)
    with open(lock_path) as handle:
        assert handle.read() == "", "a released lock names no holder"


def test_a_second_process_waits_until_the_holder_releases(lock_path):
    holder_process = start_holder(lock_path, seconds=1.5)
    try:
        fd, waited, holder = run_lock.acquire(lock_path, "gpuops.hardening.thp", timeout=30)
        assert holder_process.wait(timeout=5) == 0, "the holder ended before the lock was given to the waiter"
        run_lock.release(fd)
    finally:
        holder_process.kill()
        holder_process.wait()
    assert 0.5 < waited < 10
    assert holder.startswith("gpuops.hardening.nvidia_mig, pid %d, since " % holder_process.pid)


def test_the_timeout_message_names_the_holder_and_the_wait(lock_path):
    holder = start_holder(lock_path)
    try:
        started = time.monotonic()
        with pytest.raises(run_lock.LockTimeout) as raised:
            run_lock.acquire(lock_path, "gpuops.hardening.thp", timeout=1)
        assert 1 <= time.monotonic() - started < 5
    finally:
        holder.kill()
        holder.wait()
    message = str(raised.value)
    assert message.startswith("another gpuops.hardening run holds %s: gpuops.hardening.nvidia_mig, pid %d, since 20"
                              % (lock_path, holder.pid))
    # The holder's command line, from /proc, on one line.
    assert "Z, running %s -c import sys, time sys.path[:0] = " % sys.executable in message
    assert "waited 1 s (lock_timeout)" in message


def test_the_kernel_releases_the_lock_of_a_killed_holder(lock_path):
    holder = start_holder(lock_path)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    fd, waited, holder = run_lock.acquire(lock_path, "gpuops.hardening.thp", timeout=0)
    run_lock.release(fd)
    assert waited < run_lock.QUIET_WAIT_SECONDS


def test_a_holder_that_recorded_nothing_is_said_to_be_unknown():
    assert run_lock.describe_holder("").startswith("holder not recorded")
    assert run_lock.describe_holder('{"module": "x"}').startswith("holder not recorded")


def sysctl_args(root, **extra):
    os.makedirs(os.path.join(root, "proc", "sys", "vm"))
    with open(os.path.join(root, "proc", "sys", "vm", "swappiness"), "w") as handle:
        handle.write("60\n")
    return dict(settings={"vm.swappiness": 0}, root=root, apply_live=False, **extra)


def test_a_module_fails_with_the_holder_when_its_wait_runs_out(tmp_path, lock_path):
    args = sysctl_args(str(tmp_path), lock_timeout=0)
    holder = start_holder(lock_path)
    try:
        result = run_module(sysctl_settings_main, args)
    finally:
        holder.kill()
        holder.wait()
    assert result["failed"] and result["changed"] is False
    assert "gpuops.hardening.nvidia_mig, pid %d" % holder.pid in result["msg"]
    assert not os.path.exists(tmp_path / "etc"), "a module that did not get the lock wrote nothing"


def test_a_module_that_waited_says_so(tmp_path, lock_path):
    holder = start_holder(lock_path, seconds=1.5)
    try:
        result = run_module(sysctl_settings_main, sysctl_args(str(tmp_path)))
    finally:
        holder.kill()
        holder.wait()
    assert result["changed"] is True
    assert any(w.startswith("waited ") and "%s (held by gpuops.hardening.nvidia_mig, pid %d," % (lock_path, holder.pid) in w
               for w in result["warnings"]), result["warnings"]


def test_a_module_releases_the_lock_when_it_ends(tmp_path, lock_path):
    args = sysctl_args(str(tmp_path), lock_timeout=0)
    assert run_module(sysctl_settings_main, args)["changed"] is True
    assert run_module(sysctl_settings_main, args)["changed"] is False


def test_check_mode_takes_no_lock_and_writes_no_lock_file(tmp_path, lock_path):
    holder = start_holder(lock_path)
    try:
        result = run_module(sysctl_settings_main, sysctl_args(str(tmp_path), lock_timeout=0), check_mode=True)
    finally:
        holder.kill()
        holder.wait()
    assert result["failed"] is False and result["changed"] is True
    os.unlink(lock_path)
    result = run_module(sysctl_settings_main, sysctl_args(str(tmp_path / "fresh")), check_mode=True)
    assert result["changed"] is True
    assert not os.path.exists(tmp_path / "fresh" / "run"), "check mode created the lock's folder"


def test_a_negative_lock_timeout_is_refused(tmp_path):
    result = run_module(sysctl_settings_main, sysctl_args(str(tmp_path), lock_timeout=-1))
    assert result["failed"] and "lock_timeout must be 0 or more seconds, got -1" in result["msg"]


def refusal(tmp_path):
    """The message of a module refused the node lock below tmp_path; it must not have changed anything."""
    result = run_module(sysctl_settings_main, sysctl_args(str(tmp_path), lock_timeout=0))
    assert result["failed"] and result["changed"] is False, result
    assert not os.path.exists(tmp_path / "etc"), "a module refused the lock wrote nothing"
    return result["msg"]


def test_the_lock_file_is_0600_in_a_folder_0700(tmp_path, lock_path):
    old_umask = os.umask(0)
    try:
        fd, _waited, _holder = run_lock.acquire(lock_path, "gpuops.hardening.thp", timeout=0)
        run_lock.release(fd)
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(os.lstat(lock_path).st_mode) == 0o600
    assert stat.S_IMODE(os.lstat(os.path.dirname(lock_path)).st_mode) == 0o700


def test_a_symlink_planted_at_the_lock_path_is_refused_and_its_target_untouched(tmp_path, lock_path):
    os.makedirs(os.path.dirname(lock_path), 0o700)
    target = tmp_path / "etc-shadow"
    target.write_text("precious\n")
    os.symlink(str(target), lock_path)
    message = refusal(tmp_path)
    assert target.read_text() == "precious\n"
    assert message == "refusing the node lock %s: %s is a symbolic link; remove it, and a run creates the lock file " \
                      "again" % (lock_path, lock_path)


def test_a_symlink_in_place_of_the_lock_folder_is_refused(tmp_path, lock_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    os.makedirs(os.path.dirname(os.path.dirname(lock_path)))
    os.symlink(str(elsewhere), os.path.dirname(lock_path))
    assert "%s is not a directory (a symbolic link" % os.path.dirname(lock_path) in refusal(tmp_path)
    assert os.listdir(str(elsewhere)) == []


def test_a_lock_folder_others_may_write_is_refused(tmp_path, lock_path):
    # As /run/lock is: world-writable with the sticky bit.
    os.makedirs(os.path.dirname(lock_path))
    os.chmod(os.path.dirname(lock_path), 0o1777)
    assert "%s is writable by group or others" % os.path.dirname(lock_path) in refusal(tmp_path)
    assert not os.path.exists(lock_path)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user takes root")
def test_a_lock_folder_of_another_user_is_refused(tmp_path, lock_path):
    os.makedirs(os.path.dirname(lock_path), 0o700)
    os.chown(os.path.dirname(lock_path), 65534, 65534)
    assert "%s belongs to uid 65534, not to the running user" % os.path.dirname(lock_path) in refusal(tmp_path)
