# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""cuda-app: a CUDA application that initialises CUDA, holds its context for
--seconds and ends, as nvidia-cuda-mps-control(1) describes CUDA initialisation:

* the driver tries the control daemon of $CUDA_MPS_PIPE_DIRECTORY (default
  /tmp/nvidia-mps); when it answers, it asks for a server for the client's uid and the
  application runs as an MPS client ("M+C" in nvidia-smi, NVIDIA/nvidia-docker #868),
  its rows written by the daemon;
* when the connection fails (no daemon, or no permission) the program "continues to
  run as it normally would without MPS": a compute context ("C") on its first visible
  GPU, refused with cudaErrorDevicesUnavailable on a GPU in Prohibited mode or in
  Exclusive_Process mode that already has a compute process (CUDA runtime API,
  cudaErrorDevicesUnavailable);
* on an NVSwitch node CUDA does not initialise until Fabric Manager has trained the
  fabric, nor after it has exited: cudaErrorSystemNotReady (fabric.cuda_ready).

The one line it prints about the path it took is the emulator's own: real
applications say nothing about MPS.
"""

import os
import signal
import sys
import time

from . import fabric, mig, mps, runtime, state as state_file, texts
from .mps_commands import CLIENT_MARKER, CLIENT_MEMORY_MIB, CLIENT_NAME, QUEUED, visible_gpus

USAGE = "usage: gpuemu-cuda-app [--seconds N]\n"
# How often a client queued behind another user's server asks again.
QUEUE_POLL_SECONDS = 0.1


def _seconds(argv):
    if not argv:
        return 0.0
    if len(argv) == 2 and argv[0] == "--seconds":
        try:
            value = float(argv[1])
        except ValueError:
            return None
        return value if value >= 0 else None
    return None


def _attach(pipe_dir):
    """("server PID GPUS" reply, None) from the control daemon, or (None, OSError)."""
    while True:
        reply, error = mps.request(pipe_dir, "%sattach %d" % (CLIENT_MARKER, runtime.effective_uid()))
        if reply is None or reply.strip() != QUEUED:
            return reply, error
        time.sleep(QUEUE_POLL_SECONDS)


def _refusal(state, gpu_index):
    """The CUDA error creating a context on the GPU, or None."""
    gpu = state["gpus"][gpu_index]
    busy = gpu["compute_mode"] == "Exclusive_Process" and runtime.processes_on(state, gpu_index)
    return texts.CUDA_DEVICES_UNAVAILABLE if gpu["compute_mode"] == "Prohibited" or busy else None


def _row(device):
    gpu_index, gpu_instance_id, compute_instance_id = device
    return {"gpu": gpu_index, "pid": os.getpid(), "name": CLIENT_NAME, "type": "C",
            "used_memory_mib": CLIENT_MEMORY_MIB, "gpu_instance_id": gpu_instance_id,
            "compute_instance_id": compute_instance_id}


def _device(state, environ):
    """(gpu index, gpu instance id, compute instance id) of the first visible device,
    or None. CUDA_VISIBLE_DEVICES=MIG-<uuid> selects that MIG device (MIG user guide,
    "Running CUDA Applications on Bare-Metal": the MIG UUID from nvidia-smi -L); an
    unknown MIG UUID leaves no device. Otherwise the whole GPU, outside MIG."""
    first = (environ.get("CUDA_VISIBLE_DEVICES") or "").split(",")[0].strip()
    if first.startswith("MIG-"):
        found = mig.device_by_uuid(state, first)
        return (found[0]["index"], found[1]["id"], found[2]["id"]) if found else None
    gpus = visible_gpus(state, environ)
    return (gpus[0], None, None) if gpus else None


def _take_gpu(state, state_path, device):
    """(refusal, recorded): create the context, recording it in the state when the
    user may write it; a refusal is decided under the state's lock."""
    try:
        with state_file.editing(state_path) as current:
            refusal = _refusal(current, device[0])
            if not refusal:
                current["processes"].append(_row(device))
        return refusal, not refusal
    except OSError:
        return _refusal(state, device[0]), False


def _leave_gpu(state_path):
    try:
        with state_file.editing(state_path) as current:
            current["processes"] = [p for p in current["processes"]
                                    if not (p["pid"] == os.getpid() and p["name"] == CLIENT_NAME)]
    except (OSError, ValueError):
        pass


def _without_mps(reason, state, state_path, environ, seconds, stdout, stderr):
    if state is None:
        return 1
    device = _device(state, environ)
    if device is None:
        stderr.write(texts.CUDA_ERROR % texts.CUDA_NO_DEVICE)
        return 1
    refusal, recorded = _take_gpu(state, state_path, device)
    if refusal:
        stderr.write(texts.CUDA_ERROR % refusal)
        return 1
    # From here a SIGTERM must still take the row away: the try starts before the announcement.
    try:
        where = "" if device[1] is None else " GPU instance %d compute instance %d" % device[1:]
        stdout.write("%s: without MPS (%s): CUDA context on GPU %d%s%s\n" % (
            CLIENT_NAME, reason, device[0], where, "" if recorded else ", not in the state (read-only)"))
        stdout.flush()
        time.sleep(seconds)
    finally:
        if recorded:
            _leave_gpu(state_path)
    return 0


def _stop(signum, frame):
    del frame
    sys.exit(128 + signum)


def main(argv, state, state_path, environ, stdout, stderr):
    seconds = _seconds(argv)
    if seconds is None:
        stderr.write(USAGE)
        return 2
    if state is not None and not fabric.cuda_ready(state):
        # cuInit fails before any device or MPS daemon is looked at.
        stderr.write(texts.CUDA_ERROR % texts.CUDA_SYSTEM_NOT_READY)
        return 1
    # SIGTERM ends the application cleanly, so that it leaves the process table.
    signal.signal(signal.SIGTERM, _stop)
    pipe_dir = mps.directories(environ)[0]
    reply, error = _attach(pipe_dir)
    if reply is None or not reply.startswith("server "):
        reason = "control daemon at %s: %s" % (pipe_dir, error.strerror if error else "no server")
        return _without_mps(reason, state, state_path, environ, seconds, stdout, stderr)
    _word, server_pid, gpus = (reply.split() + [""])[:3]
    try:
        stdout.write("%s: MPS client of server %s on GPU %s\n" % (CLIENT_NAME, server_pid, gpus or "none"))
        stdout.flush()
        time.sleep(seconds)
    finally:
        mps.request(pipe_dir, CLIENT_MARKER + "detach")
    return 0
