# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Live facts derived from the state: which daemons really run, who holds a GPU."""

import os
import stat


EUID_VARIABLE = "GPUEMU_EUID"


def effective_uid():
    """The caller's effective uid; GPUEMU_EUID overrides it so that tests running as
    root can play an unprivileged user."""
    forced = os.environ.get(EUID_VARIABLE)
    return int(forced) if forced not in (None, "") else os.geteuid()


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


def socket_reachable(state, daemon):
    """nvidia-smi talks to the daemon through <run_dir>/socket; the fault
    persistenced_socket="unreachable" models a daemon that runs but whose socket does
    not answer (a container without /run/nvidia-persistenced mounted: NVIDIA/mig-parted
    #259, NVIDIA/dgx-selinux #3)."""
    if state["faults"].get("persistenced_socket") == "unreachable":
        return False
    try:
        return stat.S_ISSOCK(os.stat(os.path.join(daemon["run_dir"], "socket")).st_mode)
    except (OSError, KeyError, TypeError):
        return False


def reachable_persistenced(state):
    """The running daemon when nvidia-smi can reach its socket, else None."""
    daemon = persistenced(state)
    return daemon if daemon and socket_reachable(state, daemon) else None


def persistence_enabled(state, gpu):
    """Without the socket nvidia-smi cannot see the daemon's persistence and reports
    it Disabled (NVIDIA/dgx-selinux #3: "Persistence Mode is reported as Off")."""
    daemon = reachable_persistenced(state)
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


def live_holders(state):
    """The recorded holders whose pid still runs. A holder stands for a program that
    keeps NVML handles open without a CUDA context (DCGM's nv-hostengine, dcgm-exporter,
    nvsm): it holds the GPU but no process row shows it."""
    return [h for h in state.get("holders", []) if process_alive(h.get("pid"))]


def held_by_holder(state, gpu):
    """A running holder keeps this GPU (its "gpus" lists it, or is null: all GPUs).
    NVIDIA/mig-parted deployments/systemd/hooks.sh stops nvsm.service,
    nvidia-dcgm.service and dcgm-exporter.service before a MIG mode change, so that
    the GPU reset can happen."""
    return any(h.get("gpus") is None or gpu["index"] in h["gpus"] for h in live_holders(state))


def is_held(state, gpu):
    """Anything attached to the GPU: a reset is refused and a MIG mode change stays
    pending. Legacy persistence mode holds the GPU (NVIDIA/NVSentinel #1690: the reset
    is refused until `-pm 0`). A running nvidia-persistenced does not, as long as its
    socket answers: nvidia-smi asks it to let go of the GPU for the reset
    (NVIDIA/gpu-operator #118, NVIDIA/mig-parted #259). When the socket does not
    answer, the daemon's own handle on the GPU blocks the reset. A loaded nvidia_drm
    module holds every GPU (NVIDIA/mig-parted #181: the reset is refused with "In use
    by another client" until `rmmod nvidia_drm`; ComputeCanada/puppet-magic_castle #387)."""
    if has_clients(state, gpu) or gpu.get("persistence_legacy") or state["faults"].get("nvidia_drm") == "loaded":
        return True
    if held_by_holder(state, gpu):
        return True
    daemon = persistenced(state)
    return bool(daemon and daemon["gpus"][gpu["index"]] and not socket_reachable(state, daemon))


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
