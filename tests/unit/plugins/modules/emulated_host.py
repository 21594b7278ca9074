# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A host made from a GPU emulator profile: its nvidia-smi, sysfs and procfs.

Shared by the gpu_numa_facts tests and by anything that needs the topology
fact of an emulated node (the report renderers' tests and samples).
"""

from __future__ import annotations

import shlex
import stat

from ansible_collections.gpuops.hardening.plugins.modules.gpu_numa_facts import main as gpu_numa_facts_main
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import state as emulator_state
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import sysfs as emulator_sysfs
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module


def emulated_host(tmp_path, profile, faults=None):
    """(module args, state, state path): nvidia-smi and dmesg from the emulator (as executables) and the profile's sysfs.

    faults: the state's "faults" section to start with (the emulator's faults.py lists them).
    """
    state_path = str(tmp_path / "state.json")
    state = api.new_state(profile)
    state["faults"].update(faults or {})
    api.write_state(state, state_path)
    environment = api.environment(state_path)
    tools = {}
    # nvidia-smi and the dmesg shim (the kernel log's Xid lines) of the emulator, as executables.
    for name in ("nvidia-smi", "dmesg"):
        tool = tools[name] = tmp_path / name
        tool.write_text("#!/bin/sh\nexport %s=%s PYTHONPATH=%s\nexec %s \"$@\"\n" % (
            emulator_state.ENV_VAR, shlex.quote(state_path), shlex.quote(environment["PYTHONPATH"]),
            " ".join(shlex.quote(part) for part in api.command(name))))
        tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    sysfs_root = str(tmp_path / "sys")
    emulator_sysfs.generate(profile, sysfs_root)
    proc = tmp_path / "proc" / "sys" / "kernel"
    proc.mkdir(parents=True)
    (proc / "numa_balancing").write_text("0\n")
    args = {"nvidia_smi_path": str(tools["nvidia-smi"]), "dmesg_path": str(tools["dmesg"]), "root": str(tmp_path)}
    return args, api.read_state(state_path), state_path


def emulated_facts(tmp_path, profile, faults=None):
    """The facts gpu_numa_facts returns on an emulated node of the profile (gpu_topology, gpu_health, gpu_kernel_log)."""
    args, _state, _path = emulated_host(tmp_path, profile, faults)
    result = run_module(gpu_numa_facts_main, args)
    assert not result["failed"], result
    return result["ansible_facts"]


def emulated_topology(tmp_path, profile):
    """The gpu_topology fact gpu_numa_facts returns on an emulated node of the profile."""
    return emulated_facts(tmp_path, profile)["gpu_topology"]
