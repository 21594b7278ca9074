# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Live facts derived from the state: which daemons really run, who holds a GPU."""

import os


def process_alive(pid, marker=None):
    """True when pid runs (not a zombie) and, with a marker, its command line has it."""
    try:
        with open("/proc/%d/stat" % int(pid), encoding="utf-8", errors="replace") as handle:
            stat = handle.read()
    except (OSError, ValueError, TypeError):
        return False
    if stat.rsplit(")", 1)[-1].split()[0] in ("Z", "X"):
        return False
    if marker:
        try:
            with open("/proc/%d/cmdline" % int(pid), "rb") as handle:
                return marker.encode() in handle.read()
        except OSError:
            return False
    return True


def persistenced(state):
    """The running persistence daemon's record, or None when it is not running."""
    daemon = state["daemons"].get("persistenced")
    if daemon and process_alive(daemon.get("pid"), "nvidia-persistenced"):
        return daemon
    return None


def persistence_enabled(state, gpu):
    daemon = persistenced(state)
    through_daemon = bool(daemon and daemon["gpus"][gpu["index"]])
    return bool(gpu.get("persistence_legacy")) or through_daemon


def processes_on(state, gpu_index, gpu_instance_id=None, compute_instance_id=None):
    found = []
    for process in state["processes"]:
        if process["gpu"] != gpu_index:
            continue
        if gpu_instance_id is not None and process.get("gpu_instance_id") != gpu_instance_id:
            continue
        if compute_instance_id is not None and process.get("compute_instance_id") != compute_instance_id:
            continue
        found.append(process)
    return found


def has_clients(state, gpu):
    """CUDA clients or an injected busy GPU: blocks MIG instance changes and resets."""
    return bool(processes_on(state, gpu["index"])) or gpu["index"] in state["faults"]["gpu_busy"]


def is_held(state, gpu):
    """Anything attached to the GPU, persistence included: a reset is refused and a
    MIG mode change stays pending."""
    return has_clients(state, gpu) or persistence_enabled(state, gpu)


def set_process_name(name):
    """Best effort: give the process a recognisable comm name (for ps/pgrep)."""
    try:
        import ctypes  # pylint: disable=import-outside-toplevel
        libc = ctypes.CDLL(None)
        libc.prctl(15, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def mkdirs(path, mode=0o755):
    os.makedirs(path, mode=mode, exist_ok=True)
