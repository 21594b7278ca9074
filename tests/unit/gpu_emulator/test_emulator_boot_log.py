# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`reboot --boot` (a node boot: recorded pids are gone too) against a plain reboot,
and the state's log of the changes the tools make."""

from __future__ import annotations

import os
import subprocess

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import enable_mig

# Pids above the kernel's largest pid_max: the fixture's cleanup must find no process to stop.
NO_PID = 2 ** 22 + 1
DAEMONS = {"persistenced": {"pid": NO_PID, "persistence_mode": True, "gpus": [False] * 8, "run_dir": "/run/x"},
           "mps": [{"pid": NO_PID + 1, "pipe_dir": "/tmp/p", "log_dir": "/tmp/l", "multiuser": False}]}
HOLDERS = [{"name": "nv-hostengine", "pid": NO_PID + 2, "gpus": None}]


def recorded(state):
    """A state with a daemon, a holder and a process recorded, and a pending MIG mode on GPU 0."""
    state["daemons"] = {"persistenced": dict(DAEMONS["persistenced"]), "mps": list(DAEMONS["mps"])}
    state["holders"] = list(HOLDERS)
    state["gpus"][0]["mig"]["pending"] = "Enabled"
    api.add_process(state, 1, NO_PID + 3)


def test_a_plain_reboot_keeps_daemons_and_holders(make_state):
    path = make_state("a100_8x_mig", recorded)
    api.reboot(path)
    state = api.read_state(path)
    assert state["processes"] == [] and state["holders"] == HOLDERS
    assert state["daemons"]["mps"] == DAEMONS["mps"]
    # The persistence daemon re-applies its start-up mode.
    assert state["daemons"]["persistenced"]["gpus"] == [True] * 8
    assert state["gpus"][0]["mig"]["current"] == "Enabled"
    assert api.events(path) == [{"event": "reboot", "boot": False, "boot_count": 1}]


def test_a_boot_forgets_every_recorded_pid(make_state):
    path = make_state("a100_8x_mig", recorded)
    api.reboot(path, boot=True)
    state = api.read_state(path)
    assert state["processes"] == [] and state["holders"] == []
    assert state["daemons"] == {"persistenced": None, "mps": [], "fabricmanager": None}
    assert state["gpus"][0]["mig"]["current"] == "Enabled"
    assert api.events(path) == [{"event": "reboot", "boot": True, "boot_count": 1}]


def test_the_boot_flag_of_the_command(make_state, tmp_path):
    path = make_state("a100_8x_mig", recorded)
    env = dict(os.environ, PYTHONPATH=api.PACKAGE_PARENT)
    subprocess.run(["python3", "-m", "gpuemu", "reboot", "--state", path], env=env, check=True, cwd=str(tmp_path))
    assert api.read_state(path)["holders"] == HOLDERS
    subprocess.run(["python3", "-m", "gpuemu", "reboot", "--boot", "--state", path], env=env, check=True, cwd=str(tmp_path))
    assert api.read_state(path)["holders"] == []
    assert [e["boot"] for e in api.events(path)] == [False, True]


def test_a_boot_with_a_root_makes_the_device_nodes_again(make_state, tmp_path):
    # A container's /dev starts empty at each start; the driver makes its nodes when it loads.
    path = make_state("a100_8x_mig")
    root = tmp_path / "node"
    env = dict(os.environ, PYTHONPATH=api.PACKAGE_PARENT)
    subprocess.run(["python3", "-m", "gpuemu", "reboot", "--state", path, "--root", str(root)], env=env, check=True,
                   cwd=str(tmp_path))
    assert not (root / "dev").exists(), "a plain reboot is no boot: /dev stays as it is"
    subprocess.run(["python3", "-m", "gpuemu", "reboot", "--boot", "--state", path, "--root", str(root)], env=env,
                   check=True, cwd=str(tmp_path))
    # HGX A100: six NVSwitches, and the NVSwitch driver's control node.
    switches = ["nvidia-nvswitchctl"] + ["nvidia-nvswitch%d" % n for n in range(6)]
    control = ["nvidiactl", "nvidia-modeset", "nvidia-uvm", "nvidia-uvm-tools"]
    assert sorted(os.listdir(str(root / "dev"))) == sorted(control + ["nvidia%d" % n for n in range(8)] + switches)


def test_the_log_of_a_short_sequence(make_state, smi):
    path = make_state("a100_8x_mig", lambda s: enable_mig(s, 0))
    assert smi(path, "mig", "-i", "0", "-cgi", "9", "-C")[0] == 0
    assert smi(path, "mig", "-i", "0", "-gi", "2", "-dci")[0] == 0
    assert smi(path, "mig", "-i", "0", "-dgi")[0] == 0
    assert smi(path, "-i", "0", "-mig", "0")[0] == 0
    # Asking again for the mode already pending changes nothing.
    assert smi(path, "-i", "0", "-mig", "0")[0] == 0
    assert smi(path, "-i", "0", "-r")[0] == 0
    # A refused reset is no event.
    assert smi(path, "-i", "0,1", "-r", env={"GPUEMU_EUID": "1000"})[0] == 4
    api.reboot(path)
    assert api.events(path) == [
        {"event": "gi_create", "gpu": 0, "gpu_instance": 2, "profile_id": 9, "start": 0},
        {"event": "ci_create", "gpu": 0, "gpu_instance": 2, "compute_instance": 0, "profile_id": 2},
        {"event": "ci_destroy", "gpu": 0, "gpu_instance": 2, "compute_instance": 0, "profile_id": 2},
        {"event": "gi_destroy", "gpu": 0, "gpu_instance": 2, "profile_id": 9, "start": 0},
        {"event": "mig_mode", "gpu": 0, "pending": "Disabled", "applied": False},
        {"event": "reset", "gpu": 0},
        {"event": "reboot", "boot": False, "boot_count": 1},
    ]


def test_an_applied_mode_change_and_refusals_in_the_log(make_state, smi):
    def immediate(state):
        state["settings"]["mig_mode_apply"] = "immediate"
        api.add_process(state, 1, NO_PID)
    path = make_state("a100_8x_mig", immediate)
    assert smi(path, "-i", "0", "-mig", "1")[0] == 0
    assert smi(path, "-i", "1", "-mig", "1")[0] == 0
    assert smi(path, "-i", "1", "-r")[0] == 255
    assert smi(path, "mig", "-i", "0", "-cgi", "0,0")[0] == 255
    assert api.events(path) == [
        {"event": "mig_mode", "gpu": 0, "pending": "Enabled", "applied": True},
        {"event": "mig_mode", "gpu": 1, "pending": "Enabled", "applied": False},
        # -cgi stops at the first instance that does not fit; the one made before stays.
        {"event": "gi_create", "gpu": 0, "gpu_instance": 0, "profile_id": 0, "start": 0},
    ]
