# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nv-fabricmanager and the NVSwitch fabric it trains: Not Started until the daemon runs,
In Progress for exactly one nvidia-smi run, then Completed (NVIDIA/NVSentinel #883);
the version check's real log line (NVIDIA/gpu-operator #544); CUDA refused with
cudaErrorSystemNotReady until the fabric is trained (pytorch/pytorch #35710)."""

from __future__ import annotations

import os
import signal

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api

FM_COMMAND = ["-c", "/usr/share/nvidia/nvswitch/fabricmanager.cfg"]
NOT_READY = "gpuemu-cuda-app: CUDA error 802 (cudaErrorSystemNotReady): system not yet initialized\n"


def fabric_states(smi, path):
    rc, out, _err = smi(path, "--query-gpu=fabric.state,fabric.status", "--format=csv,noheader")
    assert rc == 0
    return out.splitlines()


def installed(version=None):
    return lambda state: api.install_fabric_manager(state, version)


def start(path):
    return api.run("nv-fabricmanager", FM_COMMAND, path)


def test_fabric_trains_in_one_read_after_the_daemon_starts(make_state, smi):
    path = make_state("dgx_h100", installed())
    assert fabric_states(smi, path) == ["Not Started, N/A"] * 8
    assert start(path) == (0, "", "")
    record = api.read_state(path)["daemons"]["fabricmanager"]
    with open(os.path.join(record["run_dir"], "nv-fabricmanager.pid"), encoding="utf-8") as handle:
        assert int(handle.read()) == record["pid"]
    # The first run after the start still sees the training, every later one its end.
    assert fabric_states(smi, path) == ["In Progress, N/A"] * 8
    assert fabric_states(smi, path) == ["Completed, Success"] * 8
    assert fabric_states(smi, path) == ["Completed, Success"] * 8


def test_cuda_waits_for_the_fabric(make_state, smi):
    path = make_state("dgx_h100", installed())
    assert api.run("cuda-app", [], path) == (1, "", NOT_READY)
    assert start(path)[0] == 0
    # Training: still refused, and a CUDA start does not move the fabric on.
    assert api.run("cuda-app", [], path) == (1, "", NOT_READY)
    smi(path, "-L")
    rc, out, _err = api.run("cuda-app", [], path)
    assert rc == 0 and "CUDA context on GPU 0" in out


def test_a_stopped_daemon_keeps_the_fabric_but_refuses_new_cuda_work(make_state, smi):
    path = make_state("dgx_h100", installed())
    assert start(path)[0] == 0
    smi(path, "-L")
    api.stop_daemons(path)
    assert api.read_state(path)["daemons"]["fabricmanager"] is None
    assert not os.listdir(api.read_state(path)["settings"]["fabricmanager_run_dir"])
    # fabricmanager.cfg, ABORT_CUDA_JOBS_ON_FM_EXIT: "new CUDA job launch will fail".
    assert fabric_states(smi, path) == ["Completed, Success"] * 8
    assert api.run("cuda-app", [], path) == (1, "", NOT_READY)


def test_a_version_other_than_the_drivers_is_refused_with_the_real_log_line(make_state, smi):
    path = make_state("dgx_h100", installed("535.104.05"))
    assert api.run("nv-fabricmanager", ["--version"], path) == (0, "Fabric Manager version is : 535.104.05\n", "")
    assert start(path) == (1, "", "fabric manager NVIDIA GPU driver interface version 535.104.05 don't match with "
                                  "driver version 525.60.13. Please update with matching NVIDIA driver package.\n")
    state = api.read_state(path)
    assert state["daemons"]["fabricmanager"] is None and state["log"] == []
    assert fabric_states(smi, path) == ["Not Started, N/A"] * 8


def test_no_nvswitch_no_fabric_manager(make_state):
    path = make_state("l40s_4x", installed())
    rc, out, err = start(path)
    assert (rc, out) == (1, "") and "Nothing to do [NV_WARN_NOTHING_TO_DO]" in err
    # CUDA on a PCIe node never waits for a fabric.
    assert api.run("cuda-app", [], path)[0] == 0


def test_a_second_instance_is_refused(make_state):
    path = make_state("dgx_h100", installed())
    assert start(path)[0] == 0
    rc, _out, err = start(path)
    assert rc == 1 and "already runs" in err


def test_reset_and_reboot_leave_the_fabric(make_state, smi):
    path = make_state("dgx_h100", installed())
    assert start(path)[0] == 0
    smi(path, "-L")
    # A reset GPU registers again with the running daemon: one read In Progress.
    assert smi(path, "-i", "2", "-r")[0] == 0
    assert fabric_states(smi, path)[1:4] == ["Completed, Success", "In Progress, N/A", "Completed, Success"]
    assert fabric_states(smi, path) == ["Completed, Success"] * 8
    # A boot forgets the daemon: nothing trains until it starts again.
    daemon_pid = api.read_state(path)["daemons"]["fabricmanager"]["pid"]
    api.reboot(path, boot=True)
    assert api.read_state(path)["daemons"]["fabricmanager"] is None
    # The boot also ends the daemon's process, which the cleanup (it stops the daemons the state records) cannot.
    os.kill(daemon_pid, signal.SIGTERM)
    assert fabric_states(smi, path) == ["Not Started, N/A"] * 8
    assert api.run("cuda-app", [], path) == (1, "", NOT_READY)


def test_a_fabric_fault_overrides_the_daemon(make_state, smi):
    def stuck(state):
        api.install_fabric_manager(state)
        state["faults"]["fabric"] = {"3": {"state": "In Progress"}}
    path = make_state("dgx_h100", stuck)
    assert start(path)[0] == 0
    smi(path, "-L")
    states = fabric_states(smi, path)
    assert states[3] == "In Progress, N/A" and states[:3] + states[4:] == ["Completed, Success"] * 7
    assert api.run("cuda-app", [], path) == (1, "", NOT_READY)
    failed = make_state("dgx_h100", lambda s: (api.install_fabric_manager(s), s["faults"].update(
        fabric={"3": {"state": "Completed", "status": "Insufficient Resources"}})), name="failed.json")
    assert start(failed)[0] == 0
    smi(failed, "-L")
    # A GPU whose registration failed loses its NVLink peers, not CUDA.
    assert api.run("cuda-app", [], failed)[0] == 0


def test_without_fabric_manager_in_the_state_the_fabric_reads_trained(make_state, smi):
    path = make_state("dgx_h100")
    assert fabric_states(smi, path) == ["Completed, Success"] * 8
    assert api.run("cuda-app", [], path)[0] == 0
    stuck = make_state("dgx_h100", lambda s: s["faults"].update(fabric={"0": {"state": "Not Started"}}), name="stuck.json")
    assert api.run("cuda-app", [], stuck) == (1, "", NOT_READY)


def test_a100_needs_the_daemon_though_its_fabric_reads_na(make_state, smi):
    path = make_state("a100_8x_mig", installed())
    assert fabric_states(smi, path) == ["[N/A], [N/A]"] * 8
    assert api.run("cuda-app", [], path) == (1, "", NOT_READY)
    assert start(path)[0] == 0
    smi(path, "-L")
    assert api.run("cuda-app", [], path)[0] == 0
