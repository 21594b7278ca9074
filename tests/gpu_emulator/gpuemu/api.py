# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stable Python API for tests.

    state = api.new_state("dgx_h100")
    api.write_state(state, path)
    rc, out, err = api.run("nvidia-smi", ["-L"], path)

run() starts the tool in a child process exactly as the installed wrapper would,
so daemons, hangs and exit codes behave as on a lab node.
"""

import os
import signal
import subprocess
import sys
import time

from . import catalog, cli, fabric, runtime, state as state_file

PROFILES = catalog.profile_names()
TOOLS = cli.TOOLS
PACKAGE_PARENT = os.path.dirname(catalog.PACKAGE_DIR)


def new_state(profile_name):
    """A fresh state dict for a profile name (see PROFILES) or a profile JSON path."""
    return state_file.new(profile_name)


def write_state(state, path):
    state_file.write(state, path)


def read_state(path):
    return state_file.load(path)


def command(tool, argv=()):
    """The argv that runs a tool through the emulator package."""
    return [sys.executable, "-m", "gpuemu", "exec", tool] + list(argv)


def environment(state_path, env=None):
    """os.environ plus env, pointing the tools at state_path."""
    merged = dict(os.environ)
    merged.update(env or {})
    merged[state_file.ENV_VAR] = state_path
    merged["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_PARENT, merged.get("PYTHONPATH")) if p)
    return merged


def run(tool, argv, state_path, env=None, stdin=None, timeout=None):
    """Run one tool invocation; returns (rc, stdout, stderr). env adds to os.environ.
    With a timeout, a tool still running after it is killed and TimeoutExpired raised."""
    if tool not in TOOLS:
        raise ValueError("unknown tool %r; known: %s" % (tool, ", ".join(TOOLS)))
    completed = subprocess.run(command(tool, argv), input=stdin, capture_output=True, text=True,
                               env=environment(state_path, env), timeout=timeout, check=False)
    return completed.returncode, completed.stdout, completed.stderr


def install_fabric_manager(state, version=None):
    """Fabric Manager installed in a state dict, as install --fabricmanager does it:
    version defaults to the driver's; the fabric of each GPU is Not Started until
    nv-fabricmanager runs (fabric.py)."""
    fabric.install(state, version)
    return state


def reboot(state_path, boot=False):
    """Apply what a host reboot does to the GPUs (see state.reboot); boot=True is a
    node boot, which also forgets every recorded daemon, holder and process."""
    with state_file.editing(state_path) as state:
        state_file.reboot(state, boot=boot)


def events(state_path):
    """The state's log: one dict per change the tools made, oldest first."""
    return read_state(state_path)["log"]


def add_process(state, gpu, pid, name="python3", used_memory_mib=1024, gpu_instance_id=None, compute_instance_id=None,
                process_type="C"):
    """Put a compute process on a GPU (or on a MIG instance) in a state dict."""
    state["processes"].append({
        "gpu": gpu, "pid": pid, "name": name, "type": process_type, "used_memory_mib": used_memory_mib,
        "gpu_instance_id": gpu_instance_id, "compute_instance_id": compute_instance_id,
    })
    return state


def stop_daemons(state_path, timeout=10.0):
    """Stop the persistence, Fabric Manager and MPS control daemons and the GPU
    holders a state records (tests' cleanup)."""
    state = state_file.load(state_path)
    pids = [d["pid"] for d in state["daemons"]["mps"]]
    # Only real gpu-holder runs: a test may record any live pid as a holder.
    pids += [h["pid"] for h in state["holders"] if runtime.process_alive(h["pid"], "gpu-holder")]
    for name in ("persistenced", fabric.DAEMON):
        if state["daemons"].get(name):
            pids.append(state["daemons"][name]["pid"])
    for pid in pids:
        if runtime.process_alive(pid):
            os.kill(pid, signal.SIGTERM)
    deadline = time.time() + timeout
    while time.time() < deadline and any(runtime.process_alive(pid) for pid in pids):
        time.sleep(0.05)
