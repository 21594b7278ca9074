# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Injected failures, read from the state's "faults" section before a tool runs.

    missing    ["nvidia-smi", ...]           behave as if the binary were absent (rc 127)
    hang       ["nvidia-smi" | {"tool": ..., "match": [argv words], "ignore_sigterm": bool}]
                                             sleep until killed
    exit       {"nvidia-smi": {"rc": 3, "stdout": "...", "stderr": "...", "match": [argv words]}}
                                             fail with the given output
    driver     "not_loaded" | "no_devices" | "version_mismatch"
                                             nvidia-smi fails as the real one does; the
                                             persistence daemon fails to start
    gpu_busy   [gpu index, ...]              a client holds the GPU (reset refused, MIG
                                             mode changes stay pending, -cgi refused)
    reset_fail {"<gpu index>": "reason"}     nvidia-smi -r fails with that reason
    persistenced_socket "unreachable"        nvidia-persistenced runs but its socket does
                                             not answer: nvidia-smi reads its persistence
                                             as Disabled, -pm falls back to Legacy, and the
                                             daemon's GPUs block -r and -mig (runtime.py)
"""

import signal
import time

from . import texts


def _matches(entry, tool, argv):
    if isinstance(entry, str):
        return entry == tool
    wanted = entry.get("match") or []
    return entry.get("tool") == tool and all(word in argv for word in wanted)


def hang_forever(ignore_sigterm=False):
    if ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        time.sleep(3600)


def check(state, tool, argv):
    """(rc, stdout, stderr) when a fault decides the outcome, else None. Hangs never return."""
    faults = state["faults"]
    if tool in faults.get("missing", []):
        return texts.RC_COMMAND_NOT_FOUND, "", "%s: command not found\n" % tool
    for entry in faults.get("hang", []):
        if _matches(entry, tool, argv):
            hang_forever(isinstance(entry, dict) and entry.get("ignore_sigterm", False))
    forced = faults.get("exit", {}).get(tool)
    if forced and _matches(dict(forced, tool=tool), tool, argv):
        return int(forced.get("rc", 1)), forced.get("stdout", ""), forced.get("stderr", "")
    driver = faults.get("driver")
    if driver:
        if tool == "nvidia-smi":
            rc, stdout = texts.DRIVER_FAULTS[driver]
            return rc, stdout, ""
        if tool == "nvidia-persistenced":
            return 1, "", texts.PERSISTENCED_FAILED
    return None
