# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The JSON state file every tool reads and writes.

A state is built once from a profile (``new``) and then changed only by the tools
and by the test helpers. Writers hold an flock on ``<state>.lock`` and replace the
file atomically, so concurrent tools never see a half-written state.
"""

import contextlib
import copy
import fcntl
import json
import os
import tempfile

from . import catalog

DEFAULT_PATH = "/var/lib/gpuemu/state.json"
ENV_VAR = "GPUEMU_STATE"
FORMAT = 1


def path_from_env(explicit=None):
    return explicit or os.environ.get(ENV_VAR) or DEFAULT_PATH


def empty_faults():
    return {"missing": [], "hang": [], "exit": {}, "driver": None, "gpu_busy": [], "reset_fail": {},
            "persistenced_socket": None, "nvidia_drm": None}


def empty_daemons():
    return {"persistenced": None, "mps": [], "fabricmanager": None}


def new(profile_name):
    """A fresh state for a profile (name or JSON path): power-on defaults."""
    profile = catalog.load_profile(profile_name)
    gpus = []
    for index, spec in enumerate(profile["gpus"]):
        gpu = copy.deepcopy(spec)
        gpu["index"] = index
        gpu.setdefault("minor_number", index)
        gpu.setdefault("module_id", index + 1)
        gpu["persistence_legacy"] = False
        gpu["compute_mode"] = "Default"
        capable = catalog.mig_table(gpu["model"]) is not None
        gpu["mig"] = {"current": "Disabled", "pending": "Disabled"} if capable else None
        gpu["gpu_instances"] = []
        gpu["mig_serial"] = 0
        gpus.append(gpu)
    return {
        "format": FORMAT,
        "profile": profile["name"],
        "description": profile.get("description", ""),
        "architecture": profile.get("architecture", "x86_64"),
        "driver_version": profile["driver_version"],
        "cuda_version": profile["cuda_version"],
        "settings": {
            "mig_uuid_format": profile.get("mig_uuid_format", "modern"),
            "mig_mode_apply": profile.get("mig_mode_apply", "reset"),
            "persistenced_run_dir": "/var/run/nvidia-persistenced",
            "fabricmanager_run_dir": "/var/run/nvidia-fabricmanager",
        },
        "cpus_possible": profile["cpus_possible"],
        "numa_nodes": copy.deepcopy(profile["numa_nodes"]),
        "numa_distances": copy.deepcopy(profile["numa_distances"]),
        "nvlink": copy.deepcopy(profile.get("nvlink")),
        "nics": copy.deepcopy(profile.get("nics", [])),
        # The IOMMU mode the fake sysfs shows: off or passthrough (sysfs_gpudirect.py).
        "iommu": profile.get("iommu", "off"),
        "gpus": gpus,
        "processes": [],
        "daemons": empty_daemons(),
        "holders": [],
        # {"version": ...} once Fabric Manager is installed (fabric.py); null: not modelled.
        "fabric_manager": None,
        "faults": empty_faults(),
        "boot_count": 0,
        "log": [],
    }


def load(path):
    with open(path, encoding="utf-8") as handle:
        state = json.load(handle)
    # Hand-written states may leave out whole sections.
    state.setdefault("processes", [])
    state.setdefault("daemons", {})
    for key, value in empty_daemons().items():
        state["daemons"].setdefault(key, value)
    state.setdefault("fabric_manager", None)
    state.setdefault("settings", {}).setdefault("fabricmanager_run_dir", "/var/run/nvidia-fabricmanager")
    state.setdefault("holders", [])
    state.setdefault("log", [])
    faults = state.setdefault("faults", {})
    for key, value in empty_faults().items():
        faults.setdefault(key, value)
    return state


def write(state, path):
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".state-", dir=directory)
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump(state, out, indent=2, sort_keys=True)
        out.write("\n")
    os.chmod(temporary, 0o644)
    os.replace(temporary, path)


@contextlib.contextmanager
def _lock(path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".lock", "a", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@contextlib.contextmanager
def editing(path):
    """Load the state under the lock, let the caller change it, write it back."""
    with _lock(path):
        state = load(path)
        yield state
        write(state, path)


def record(state, event, **fields):
    """Append one change to the state's log; the caller writes the state under its lock."""
    state.setdefault("log", []).append(dict(fields, event=event))


def reset_gpu(gpu):
    """A GPU reset: the pending MIG mode takes effect and MIG instances are gone."""
    if gpu["mig"]:
        gpu["mig"]["current"] = gpu["mig"]["pending"]
    gpu["gpu_instances"] = []


def reboot(state, boot=False):
    """What a host reboot does to the GPUs: pending MIG modes take effect, and all
    volatile settings (MIG instances, legacy persistence, compute mode, processes)
    are gone. Daemons are services of the node and keep running; the persistence
    daemon re-applies its start-up mode, and every GPU leaves the NVSwitch fabric
    (fabric.after_reset). boot=True is a node boot: pids are not valid across it (a
    restarted container reuses them), so every recorded daemon and holder is gone too."""
    state["boot_count"] = state.get("boot_count", 0) + 1
    state["processes"] = []
    if boot:
        state["daemons"] = empty_daemons()
        state["holders"] = []
    # Imported here: fabric edits states through this module.
    from . import fabric  # pylint: disable=import-outside-toplevel
    for gpu in state["gpus"]:
        reset_gpu(gpu)
        fabric.after_reset(state, gpu)
        gpu["persistence_legacy"] = False
        gpu["compute_mode"] = "Default"
    daemon = state["daemons"].get("persistenced")
    if daemon:
        daemon["gpus"] = [daemon["persistence_mode"]] * len(state["gpus"])
    record(state, "reboot", boot=boot, boot_count=state["boot_count"])
