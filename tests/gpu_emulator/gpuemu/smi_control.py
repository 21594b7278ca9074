# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvidia-smi options that change a GPU: -pm, -c, -mig and -r.

Each returns (rc, stdout) and edits the state in place; the caller saves it.
"""

from . import fabric, faults, mig, pci, runtime, state as state_file, texts

COMPUTE_MODES = {
    "0": "Default", "DEFAULT": "Default",
    "2": "Prohibited", "PROHIBITED": "Prohibited",
    "3": "Exclusive_Process", "EXCLUSIVE_PROCESS": "Exclusive_Process",
}
ON_OFF = {"0": False, "DISABLED": False, "1": True, "ENABLED": True}


def persistence(state, gpus, value):
    wanted = ON_OFF.get(value.upper())
    if wanted is None:
        return texts.RC_INVALID_ARGUMENT, texts.INVALID_COMBINATION
    # Without a reachable daemon socket nvidia-smi falls back to the legacy mode.
    daemon = runtime.reachable_persistenced(state)
    out = []
    for gpu in gpus:
        if daemon:
            # With the daemon reachable, nvidia-smi asks it to change the mode.
            daemon["gpus"][gpu["index"]] = wanted
            kind = ""
        else:
            gpu["persistence_legacy"] = wanted
            kind = "Legacy "
        out.append("%s %spersistence mode for GPU %s.\n" % ("Enabled" if wanted else "Disabled", kind, _bus_id(gpu)))
    out.append(texts.ALL_DONE)
    return texts.RC_OK, "".join(out)


def compute_mode(gpus, value):
    mode = COMPUTE_MODES.get(value.upper())
    if mode is None:
        return texts.RC_INVALID_ARGUMENT, texts.INVALID_COMBINATION
    out = []
    for gpu in gpus:
        gpu["compute_mode"] = mode
        out.append("Set compute mode to %s for GPU %s.\n" % (mode.upper(), _bus_id(gpu)))
    out.append(texts.ALL_DONE)
    return texts.RC_OK, "".join(out)


def mig_mode(state, gpus, value):
    """A MIG mode change only takes effect when the driver can reset the GPU at once:
    nothing may hold it, and settings.mig_mode_apply must be "immediate". Otherwise
    it stays pending until `nvidia-smi -r` or a reboot, with the driver's warning."""
    wanted = ON_OFF.get(value.upper())
    if wanted is None:
        return texts.RC_INVALID_ARGUMENT, texts.INVALID_COMBINATION
    mode = "Enabled" if wanted else "Disabled"
    verb = "enable" if wanted else "disable"
    out = []
    for gpu in gpus:
        bus_id = _bus_id(gpu)
        if gpu["mig"] is None:
            out.append("Unable to %s MIG Mode for GPU %s: Not Supported\n" % (verb, bus_id))
            out.append(texts.TREATING_AS_WARNING)
            continue
        if not wanted and gpu["gpu_instances"] and mig.enabled(gpu):
            out.append("Unable to disable MIG Mode for GPU %s: %s\n" % (bus_id, texts.IN_USE))
            out.append(texts.TERMINATING)
            return texts.RC_OTHER, "".join(out)
        before = dict(gpu["mig"])
        gpu["mig"]["pending"] = mode
        if gpu["mig"]["current"] == mode:
            out.append("%s MIG Mode for GPU %s\n" % (mode, bus_id))
        elif runtime.is_held(state, gpu):
            out.append(texts.MIG_PENDING % (verb, bus_id, texts.IN_USE))
            out.append(texts.MIG_PENDING_IN_USE % bus_id)
        elif state["settings"].get("mig_mode_apply") == "immediate":
            gpu["mig"]["current"] = mode
            gpu["gpu_instances"] = []
            out.append("%s MIG Mode for GPU %s\n" % (mode, bus_id))
        else:
            out.append(texts.MIG_PENDING % (verb, bus_id, texts.NOT_SUPPORTED))
            out.append(texts.MIG_PENDING_RESET % bus_id)
        if gpu["mig"] != before:
            state_file.record(state, "mig_mode", gpu=gpu["index"], pending=mode, applied=gpu["mig"]["current"] == mode)
    out.append(texts.ALL_DONE)
    return texts.RC_OK, "".join(out)


def reset(state, gpus):
    """Refused while anything holds a GPU or a reset failure is injected, and always
    in a pass-through VM (settings.mig_mode_apply "reboot"); a successful reset
    applies the pending MIG mode and drops MIG instances."""
    failed = []
    busy = 0
    for gpu in gpus:
        reason = _injected_reset_failure(state, gpu)
        if reason is None and state["settings"].get("mig_mode_apply") == "reboot":
            # The hypervisor does not expose the reset (NVML nvmlDeviceSetMigMode: "VM
            # reboot is required"); nvidia-smi --gpu-reset answers Not Supported on a
            # GCP A100 VM (kubernetes-sigs/dra-driver-nvidia-gpu #883).
            reason = texts.NOT_SUPPORTED
        if reason is None and runtime.is_held(state, gpu):
            reason = texts.IN_USE
        if reason == texts.IN_USE:
            busy += 1
        if reason:
            failed.append((gpu, reason))
    if failed:
        out = ["The following GPUs could not be reset:\n"]
        out += ["  GPU %s: %s\n" % (_bus_id(gpu), reason) for gpu, reason in failed]
        if busy:
            out.append("\n" + texts.in_use_devices(busy))
        return texts.RC_OTHER, "".join(out)
    out = []
    for gpu in gpus:
        state_file.reset_gpu(gpu)
        fabric.after_reset(state, gpu)
        state_file.record(state, "reset", gpu=gpu["index"])
        out.append("GPU %s was successfully reset.\n" % _bus_id(gpu))
    return texts.RC_OK, "".join(out)


def _injected_reset_failure(state, gpu):
    """The reason of a reset_fail fault for this GPU, counting down one with "times"."""
    injected = state["faults"]["reset_fail"]
    key = str(gpu["index"])
    if key not in injected:
        return None
    fault = injected[key]
    reason = fault["reason"] if isinstance(fault, dict) else fault
    return reason if faults.use_once(injected, key) else None


def denied(gpus, key, value):
    """What a non-root setter prints: nvidia-smi stops at the first GPU it may not change.
    A malformed value is still refused as such first."""
    choices = COMPUTE_MODES if key == "compute" else ON_OFF
    if key != "reset" and value.upper() not in choices:
        return texts.RC_INVALID_ARGUMENT, texts.INVALID_COMBINATION
    if key == "reset":
        out = "The following GPUs could not be reset:\n"
        out += "".join("  GPU %s: %s\n" % (_bus_id(gpu), texts.INSUFFICIENT_PERMISSIONS) for gpu in gpus)
        return texts.RC_NO_PERMISSION, out
    if key == "mig":
        key = "mig_enable" if ON_OFF[value.upper()] else "mig_disable"
    return texts.RC_NO_PERMISSION, (texts.SETTER_DENIED[key] % _bus_id(gpus[0])) + texts.TERMINATING


def _bus_id(gpu):
    return pci.smi_id(gpu["pci_bus_id"])
