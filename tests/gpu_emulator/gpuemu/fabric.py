# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NVSwitch fabric of each GPU, as Fabric Manager trains it.

A state whose "fabric_manager" is null does not model Fabric Manager: the fabric reads
trained (the emulator's behaviour before nv-fabricmanager was emulated, kept for the
nodes whose Fabric Manager nothing here manages). With {"version": ...} (install
--fabricmanager) each GPU of an NVSwitch profile keeps its own "fabric":

    Not Started   after a boot, a reset, or before the daemon ever ran;
    In Progress   from the daemon's start (or, while it runs, a GPU's reset);
    Completed     from the first nvidia-smi run after that: the run still reports
                  In Progress, and completes the training as it ends.

The step is counted in nvidia-smi runs, never in time, so a test sees In Progress
exactly once. NVIDIA/NVSentinel #883 shows the order Not Started, In Progress,
Completed per GPU. A "fabric" fault (faults.py) overrides a GPU's state.
"""

from . import runtime, state as state_file

NOT_STARTED, IN_PROGRESS, COMPLETED = "Not Started", "In Progress", "Completed"
# nvmlGpuFabricState_t as nvidia-smi words it (NVML API reference, nvmlGpuFabricInfo_t).
STATES = ("Not Supported", NOT_STARTED, IN_PROGRESS, COMPLETED)
DAEMON = "fabricmanager"
PROCESS_MARKER = "nv-fabricmanager"


def nvswitch(state):
    return bool((state.get("nvlink") or {}).get("nvswitch"))


def modelled(state):
    """Whether Fabric Manager is installed in this state (install --fabricmanager)."""
    return bool(state.get("fabric_manager")) and nvswitch(state)


def install(state, version=None):
    """Record the package (the driver's version unless given). A first install puts
    every GPU's fabric at Not Started; a version change keeps what the GPUs show."""
    first = not state.get("fabric_manager")
    state["fabric_manager"] = {"version": version or state["driver_version"]}
    if first:
        for gpu in state["gpus"]:
            gpu["fabric"] = NOT_STARTED


def _fault(state, gpu):
    return state.get("faults", {}).get("fabric", {}).get(str(gpu["index"]))


def gpu_state(state, gpu):
    """(state, status) of the GPU's fabric, before the model decides whether it is shown."""
    fault = _fault(state, gpu)
    if fault:
        # The probe's status is only meaningful once it has completed.
        return fault["state"], fault.get("status", "Success" if fault["state"] == COMPLETED else "N/A")
    current = gpu.get("fabric", NOT_STARTED) if modelled(state) else COMPLETED
    return current, "Success" if current == COMPLETED else "N/A"


def daemon(state):
    """The running Fabric Manager's record, or None."""
    record = state["daemons"].get(DAEMON)
    if record and runtime.process_alive(record.get("pid"), PROCESS_MARKER):
        return record
    return None


def start_training(state):
    """The daemon came up: every GPU not yet registered starts training."""
    for gpu in state["gpus"]:
        if gpu.get("fabric", NOT_STARTED) == NOT_STARTED:
            gpu["fabric"] = IN_PROGRESS


def after_reset(state, gpu):
    """A reset GPU leaves the fabric; a running daemon takes it in again (an
    assumption: no source shows how a reset GPU re-registers)."""
    if modelled(state):
        gpu["fabric"] = IN_PROGRESS if daemon(state) else NOT_STARTED


def training(state):
    """The indexes of the GPUs an nvidia-smi run may complete (read before it runs)."""
    if not modelled(state):
        return []
    return [gpu["index"] for gpu in state["gpus"] if gpu.get("fabric") == IN_PROGRESS]


def finish_training(state_path, indexes):
    """After an nvidia-smi run: those GPUs, still In Progress under a running daemon,
    complete. So a GPU that a reset in this very run sent back waits for the next run.
    A reader who cannot write the state (not root) leaves them as they are."""
    try:
        with state_file.editing(state_path) as live:
            if not daemon(live):
                return
            for gpu in live["gpus"]:
                if gpu["index"] in indexes and gpu.get("fabric") == IN_PROGRESS:
                    gpu["fabric"] = COMPLETED
    except (OSError, ValueError):
        pass


def cuda_ready(state):
    """Whether CUDA may start on this node. On NVSwitch systems CUDA initialisation
    fails with cudaErrorSystemNotReady until Fabric Manager has trained the fabric
    (pytorch/pytorch #35710, aws-samples/aws-deep-learning-ami-ubuntu-dcv-desktop #33),
    and new CUDA launches fail once it has exited (the packaged fabricmanager.cfg,
    ABORT_CUDA_JOBS_ON_FM_EXIT: "new CUDA job launch will fail"). A GPU whose fabric is
    Completed with a failed status lost its NVLink peers, not CUDA."""
    if not nvswitch(state):
        return True
    if modelled(state) and not daemon(state):
        return False
    return not any(gpu_state(state, gpu)[0] in (NOT_STARTED, IN_PROGRESS) for gpu in state["gpus"])
