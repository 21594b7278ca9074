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
    reset_fail {"<gpu index>": "reason" | {"reason": "...", "times": N}}
                                             nvidia-smi -r fails with that reason
    persistenced_socket "unreachable"        nvidia-persistenced runs but its socket does
                                             not answer: nvidia-smi reads its persistence
                                             as Disabled, -pm falls back to Legacy, and the
                                             daemon's GPUs block -r and -mig (runtime.py)
    nvidia_drm "loaded"                      the display module holds every GPU: -r is
                                             refused ("In use by another client") and MIG
                                             mode changes stay pending; -cgi still works

Health faults (health.py), read by -q -x, --query-gpu, nvlink -s and dmesg; every
other GPU stays healthy:

    pcie_link     {"<gpu index>": {"gen": 2, "width": 8}}   current link gen/width drop, max stays
    ecc_errors    {"<gpu index>": {"volatile": {"dram_uncorrectable": 2, ...}, "aggregate": {...}}}
                                             counters sram_/dram_correctable/uncorrectable
                                             (Pascal: dram_* feed device_memory and total)
    retired_pages {"<gpu index>": {"single_bit": 3, "double_bit": 1, "pending": true}}
                                             page retirement GPUs (Pascal) only
    remapped_rows {"<gpu index>": {"correctable": 1, "uncorrectable": 2, "pending": true, "failure": true}}
                                             row remapping GPUs (Ampere and later)
    clock_reasons {"<gpu index>": ["hw_slowdown", "sw_thermal_slowdown", ...]}
                                             active clock event (throttle) reasons, by the
                                             element name after "clocks_event_reason_"
    fabric        {"<gpu index>": {"state": "In Progress", "status": "N/A"}}
                                             NVSwitch Hopper GPUs; state one of health.FABRIC_STATES;
                                             overrides what Fabric Manager made of the GPU (fabric.py)
    nvlink_down   {"<gpu index>": [link, ...]}  nvlink -s prints "<inactive>" for those links
    xid           [{"gpu": 0, "xid": 79, "message": "GPU has fallen off the bus.", "time": 5107.6,
                    "pid": 4242, "name": "python3"}]  (pid and name optional)
                                             NVRM Xid lines from the dmesg shim (kernel_log.py)
    kernel_log    "restricted"                 dmesg fails as without CAP_SYSLOG under
                                             kernel.dmesg_restrict=1 (exit 1)

GPUDirect faults (an IOMMU that translates, ACS redirect, nvidia_peermem missing) are written into the fake
sysfs tree instead, which the lab mounts from the host: sysfs_gpudirect.py, `gpuemu sysfs-faults`.

An exit, hang or reset_fail fault with "times": N fires on the next N matching runs
only, then goes away (counted down in the state under its lock), so that a test can
make a command fail once and then succeed. Without "times" it fires every time.
"""

import signal
import time

from . import state as state_file, texts


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


def use_once(container, key):
    """Whether the fault container[key] fires now. A fault with "times" is counted
    down and removed after its last firing; the caller holds the state's lock."""
    fault = container[key]
    if not isinstance(fault, dict) or "times" not in fault:
        return True
    if fault["times"] <= 0:
        del container[key]
        return False
    fault["times"] -= 1
    if fault["times"] == 0:
        del container[key]
    return True


def _fires(path, section, key, entry):
    """Whether a fault read without the lock still fires: counted ones are taken under it."""
    if not isinstance(entry, dict) or "times" not in entry or path is None:
        return True
    with state_file.editing(path) as live:
        container = live["faults"][section]
        if section == "hang":
            # The list may have changed since it was read: find the same fault again.
            key = next((i for i, e in enumerate(container) if e == entry), None)
        elif container.get(key) != entry:
            key = None
        return key is not None and use_once(container, key)


def check(state, tool, argv, path=None):
    """(rc, stdout, stderr) when a fault decides the outcome, else None. Hangs never
    return. path is the state file, where faults with "times" are counted down."""
    faults = state["faults"]
    if tool in faults.get("missing", []):
        return texts.RC_COMMAND_NOT_FOUND, "", "%s: command not found\n" % tool
    for index, entry in enumerate(faults.get("hang", [])):
        if _matches(entry, tool, argv) and _fires(path, "hang", index, entry):
            hang_forever(isinstance(entry, dict) and entry.get("ignore_sigterm", False))
    forced = faults.get("exit", {}).get(tool)
    if forced and _matches(dict(forced, tool=tool), tool, argv) and _fires(path, "exit", tool, forced):
        return int(forced.get("rc", 1)), forced.get("stdout", ""), forced.get("stderr", "")
    driver = faults.get("driver")
    if driver:
        if tool == "nvidia-smi":
            rc, stdout = texts.DRIVER_FAULTS[driver]
            return rc, stdout, ""
        if tool == "nvidia-persistenced":
            return 1, "", texts.PERSISTENCED_FAILED
    return None
