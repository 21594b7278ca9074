# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""State transitions, refusals, daemons and injected faults of the emulated tools."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import enable_mig, query, single_gpu


def test_profiles_are_the_documented_ones():
    assert set(api.PROFILES) >= {"dgx_h100", "a100_8x_mig", "l40s_4x", "workstation_2gpu", "gh200"}


# ---- MIG mode ---------------------------------------------------------------------

def test_pending_mig_mode_becomes_current_only_after_reset(make_state, smi):
    path = make_state("a100_8x_mig")
    rc, out, _err = smi(path, "-i", "2", "-mig", "1")
    assert rc == 0 and "pending enable state" in out
    assert query(smi, path, "mig.mode.current,mig.mode.pending", "2") == "Disabled, Enabled"
    assert smi(path, "mig", "-lgi") == (0, "No MIG-enabled devices found.\n", "")
    rc, out, _err = smi(path, "-i", "2", "-r")
    assert (rc, out) == (0, "GPU 00000000:47:00.0 was successfully reset.\n")
    assert query(smi, path, "mig.mode.current,mig.mode.pending", "2") == "Enabled, Enabled"
    assert query(smi, path, "mig.mode.current", "3") == "Disabled"


def test_reboot_applies_pending_modes_and_clears_volatile_state(make_state, smi, tmp_path):
    path = make_state("a100_8x_mig", enable_mig)
    smi(path, "-i", "0", "mig", "-cgi", "9", "-C")
    smi(path, "mig", "-i", "0", "-cgi", "9", "-C")
    smi(path, "-i", "1", "-mig", "1")
    smi(path, "-i", "2", "-pm", "1")
    smi(path, "-i", "3", "-c", "EXCLUSIVE_PROCESS")
    api.reboot(path)
    assert query(smi, path, "mig.mode.current", "1") == "Enabled"
    assert query(smi, path, "persistence_mode,compute_mode", "2") == "Disabled, Default"
    assert query(smi, path, "compute_mode", "3") == "Default"
    assert smi(path, "mig", "-lgi") == (6, "No GPU instances found: Not Found\n", "")
    env = dict(os.environ, GPUEMU_STATE=path, PYTHONPATH=api.PACKAGE_PARENT)
    subprocess.run(["python3", "-m", "gpuemu", "reboot"], env=env, check=True, cwd=str(tmp_path))
    assert api.read_state(path)["boot_count"] == 2


def test_mig_change_with_a_client_stays_pending_with_the_in_use_warning(make_state, smi):
    path = make_state(api.add_process(api.new_state("a100_8x_mig"), 0, 777))
    rc, out, _err = smi(path, "-i", "0", "-mig", "1")
    assert rc == 0
    assert out.splitlines()[0] == "Warning: MIG mode is in pending enable state for GPU 00000000:07:00.0:In use by another client"
    assert "Please first kill all processes using the device" in out
    assert query(smi, path, "mig.mode.current,mig.mode.pending") == "Disabled, Enabled"


def test_mig_mode_on_a_gpu_without_mig(make_state, smi):
    path = make_state("l40s_4x")
    rc, out, _err = smi(path, "-i", "0", "-mig", "1")
    assert (rc, out) == (0, "Unable to enable MIG Mode for GPU 00000000:17:00.0: Not Supported\n"
                            "Treating as warning and moving on.\nAll done.\n")
    assert smi(path, "mig", "-lgip") == (6, "No MIG-supported devices found.\n", "")


def test_mig_disable_refused_while_instances_exist(make_state, smi):
    path = make_state("a100_8x_mig", enable_mig)
    smi(path, "mig", "-i", "0", "-cgi", "19")
    rc, out, _err = smi(path, "-i", "0", "-mig", "0")
    assert rc == 255
    assert out == ("Unable to disable MIG Mode for GPU 00000000:07:00.0: In use by another client\n"
                   "Terminating early due to previous errors.\n")


# ---- MIG instances ----------------------------------------------------------------

def test_placement_tuples(make_state, smi):
    path = make_state("a100_8x_mig", enable_mig)
    rc, out, _err = smi(path, "mig", "-i", "0", "-cgi", "9:4,19:2", "-C")
    assert rc == 0
    assert out.splitlines()[0] == "Successfully created GPU instance ID  1 on GPU  0 using profile MIG 3g.40gb (ID  9)"
    assert out.splitlines()[2] == "Successfully created GPU instance ID  9 on GPU  0 using profile MIG 1g.10gb (ID 19)"
    assert "using profile 19:3: Invalid Argument" not in smi(path, "mig", "-i", "0", "-cgi", "19:3")[1]
    assert "using profile 19:4: Insufficient Resources" in smi(path, "mig", "-i", "0", "-cgi", "19:4")[1]
    assert "using profile 9:2: Invalid Argument" in smi(path, "mig", "-i", "0", "-cgi", "9:2")[1]


def test_requests_that_do_not_fit_fail_like_the_driver(make_state, smi):
    path = make_state("a100_8x_mig", enable_mig)
    rc, out, _err = smi(path, "mig", "-i", "0", "-cgi", "0,19", "-C")
    assert rc == 255
    assert out.splitlines()[-2:] == ["Unable to create a GPU instance on GPU  0 using profile 19: Insufficient Resources",
                                     "Failed to create GPU instances: Insufficient Resources"]
    rc, out, _err = smi(path, "mig", "-i", "0", "-cgi", "3g.99gb")
    assert rc != 0 and "using profile 3g.99gb: Invalid Argument" in out
    rc, out, _err = smi(path, "mig", "-i", "0", "-lgip")
    assert "|   0  MIG 1g.10gb       19     0/7        9.50" in out


def test_free_counts_follow_placements(make_state, smi):
    path = make_state("a100_8x_mig", enable_mig)
    smi(path, "mig", "-i", "0", "-cgi", "14", "-C")
    rc, out, _err = smi(path, "mig", "-i", "0", "-lgip")
    free = {line.split()[3]: line.split()[5] for line in out.splitlines() if "MIG " in line}
    assert free["1g.10gb"] == "5/7"
    assert free["2g.20gb"] == "2/3"
    assert free["3g.40gb"] == "1/2"
    assert free["4g.40gb"] == "0/1"
    assert free["7g.80gb"] == "0/1"


def test_process_on_a_mig_instance_blocks_destroy_and_is_reported(make_state, smi):
    path = make_state("a100_8x_mig", enable_mig)
    smi(path, "mig", "-i", "0", "-cgi", "9", "-C")
    state = api.read_state(path)
    gi = state["gpus"][0]["gpu_instances"][0]["id"]
    api.add_process(state, 0, 31337, "/usr/bin/python3", 4096, gpu_instance_id=gi, compute_instance_id=0)
    api.write_state(state, path)
    rc, out, _err = smi(path, "mig", "-dci")
    assert rc == 255
    assert out == ("Unable to destroy compute instance ID  0 from GPU  0 GPU instance ID  %d: In use by another client\n"
                   "Failed to destroy compute instances: In use by another client\n" % gi)
    rc, out, _err = smi(path, "mig", "-dgi")
    assert rc == 255 and "Unable to destroy GPU instance ID  %d from GPU  0: In use by another client" % gi in out
    rc, out, _err = smi(path, "--query-compute-apps=pid,process_name,used_memory,gpu_bus_id", "--format=csv")
    assert out.splitlines() == ["pid, process_name, used_gpu_memory [MiB], gpu_bus_id",
                                "31337, /usr/bin/python3, 4096 MiB, 00000000:07:00.0"]
    rc, out, _err = smi(path, "-q", "-x", "-i", "0")
    assert "<gpu_instance_id>%d</gpu_instance_id>\n\t\t\t\t<compute_instance_id>0</compute_instance_id>\n\t\t\t\t<pid>31337</pid>" % gi in out
    rc, out, _err = smi(path, "-i", "0", "-r")
    assert rc == 255 and "In use by another client" in out


def test_destroying_in_order_frees_the_gpu(make_state, smi):
    path = make_state("a100_8x_mig", enable_mig)
    smi(path, "mig", "-cgi", "19,19", "-C", "-i", "0")
    assert smi(path, "mig", "-dgi")[0] == 255  # compute instances still exist
    assert smi(path, "mig", "-dci")[0] == 0
    assert smi(path, "mig", "-dgi")[0] == 0
    assert smi(path, "mig", "-lgi") == (6, "No GPU instances found: Not Found\n", "")
    assert smi(path, "mig", "-dgi") == (6, "No GPU instances found: Not Found\n", "")


def test_compute_instances_inside_a_gpu_instance(make_state, smi):
    path = make_state("a100_8x_mig", enable_mig)
    smi(path, "mig", "-i", "0", "-cgi", "0")
    rc, out, _err = smi(path, "mig", "-i", "0", "-cci", "2,3", "-gi", "0")
    assert rc == 0
    assert out.splitlines() == [
        "Successfully created compute instance ID  0 on GPU  0 GPU instance ID  0 using profile MIG 3c.7g.80gb (ID  2)",
        "Successfully created compute instance ID  1 on GPU  0 GPU instance ID  0 using profile MIG 4c.7g.80gb (ID  3)",
    ]
    rc, out, _err = smi(path, "-L")
    assert [line.split()[1] for line in out.splitlines()[1:3]] == ["3c.7g.80gb", "4c.7g.80gb"]
    assert out.splitlines()[3].startswith("GPU 1: ")


# ---- reset, compute mode, selection -------------------------------------------------

def test_reset_refused_while_a_process_runs(make_state, smi):
    path = make_state(api.add_process(api.new_state("dgx_h100"), 3, 4321))
    rc, out, _err = smi(path, "-i", "3", "-r")
    assert rc == 255
    assert out.splitlines()[:2] == ["The following GPUs could not be reset:", "  GPU 00000000:5D:00.0: In use by another client"]
    assert "1 device is currently being used by one or more other processes" in out
    state = api.read_state(path)
    state["processes"] = []
    api.write_state(state, path)
    assert smi(path, "-i", "3", "-r")[0] == 0


def test_compute_mode(make_state, smi):
    path = make_state("l40s_4x")
    rc, out, _err = smi(path, "-i", "1", "-c", "EXCLUSIVE_PROCESS")
    assert (rc, out) == (0, "Set compute mode to EXCLUSIVE_PROCESS for GPU 00000000:31:00.0.\nAll done.\n")
    assert query(smi, path, "compute_mode", "1") == "Exclusive_Process"
    assert smi(path, "-i", "1", "-c", "0")[1].startswith("Set compute mode to DEFAULT for GPU")
    assert query(smi, path, "compute_mode", "1") == "Default"
    assert smi(path, "-c", "BOGUS")[0] == 2


def test_gpu_selection_by_index_uuid_and_bus_id(make_state, smi):
    path = make_state("dgx_h100")
    uuid = api.read_state(path)["gpus"][5]["uuid"]
    assert query(smi, path, "index", uuid) == "5"
    assert query(smi, path, "index", "00000000:AB:00.0") == "5"
    assert query(smi, path, "index", "0000:ab:00.0") == "5"
    assert smi(path, "-i", "9", "-L") == (6, "No devices were found\n", "")


def test_field_overrides_report_not_supported(make_state, smi):
    path = make_state("workstation_2gpu", lambda s: s["gpus"][0].update(field_overrides={"power.draw": "[Not Supported]"}))
    assert query(smi, path, "name,power.draw") == "NVIDIA RTX 6000 Ada Generation, [Not Supported]"
    assert query(smi, path, "fan.speed") == "30 %"


# ---- nvidia-persistenced ----------------------------------------------------------

def test_persistence_follows_the_daemon(make_state, smi):
    path = make_state("l40s_4x")
    assert query(smi, path, "persistence_mode") == "Disabled"
    rc, out, err = api.run("nvidia-persistenced", ["--verbose"], path)
    assert (rc, out, err) == (0, "", "")
    daemon = api.read_state(path)["daemons"]["persistenced"]
    run_dir = daemon["run_dir"]
    with open(os.path.join(run_dir, "nvidia-persistenced.pid"), encoding="utf-8") as handle:
        assert int(handle.read()) == daemon["pid"]
    assert query(smi, path, "persistence_mode", "0,1,2,3").splitlines() == ["Enabled"] * 4
    # A second instance cannot start.
    rc, _out, err = api.run("nvidia-persistenced", [], path)
    assert (rc, err) == (1, "nvidia-persistenced failed to initialize. Check syslog for more details.\n")
    # nvidia-smi -pm goes through the daemon.
    assert smi(path, "-i", "2", "-pm", "0")[1] == "Disabled persistence mode for GPU 00000000:98:00.0.\nAll done.\n"
    assert query(smi, path, "persistence_mode", "2") == "Disabled"
    # nvidia-smi coordinates the reset with the daemon through its socket.
    assert smi(path, "-i", "0", "-r") == (0, "GPU 00000000:17:00.0 was successfully reset.\n", "")
    api.stop_daemons(path)
    assert not os.path.exists(os.path.join(run_dir, "nvidia-persistenced.pid"))
    assert query(smi, path, "persistence_mode", "0,1,2,3").splitlines() == ["Disabled"] * 4
    assert smi(path, "-i", "0", "-pm", "1")[1] == "Enabled Legacy persistence mode for GPU 00000000:17:00.0.\nAll done.\n"
    assert query(smi, path, "persistence_mode") == "Enabled"


def test_persistence_daemon_without_persistence_mode(make_state, smi):
    path = make_state("gh200")
    assert api.run("nvidia-persistenced", ["--no-persistence-mode"], path)[0] == 0
    assert query(smi, path, "persistence_mode") == "Disabled"
    assert smi(path, "-pm", "1")[1] == "Enabled persistence mode for GPU 00000009:01:00.0.\nAll done.\n"
    assert query(smi, path, "persistence_mode") == "Enabled"


def test_persistence_daemon_fails_without_a_driver(make_state):
    path = make_state("gh200", lambda s: s["faults"].update(driver="not_loaded"))
    rc, _out, err = api.run("nvidia-persistenced", [], path)
    assert (rc, err) == (1, "nvidia-persistenced failed to initialize. Check syslog for more details.\n")
    assert api.read_state(path)["daemons"]["persistenced"] is None


# ---- nvidia-cuda-mps-control ------------------------------------------------------

def test_mps_answers_through_the_pipe_directory_it_was_given(make_state, tmp_path):
    path = make_state("l40s_4x")
    pipe, log = str(tmp_path / "pipe"), str(tmp_path / "log")
    env = {"CUDA_MPS_PIPE_DIRECTORY": pipe, "CUDA_MPS_LOG_DIRECTORY": log}
    assert api.run("nvidia-cuda-mps-control", [], path, env=env, stdin="get_server_list\n") == \
        (1, "", "Cannot find MPS control daemon process\n")
    assert api.run("nvidia-cuda-mps-control", ["-d"], path, env=env) == (0, "", "")
    assert os.path.exists(os.path.join(pipe, "control"))
    assert api.run("nvidia-cuda-mps-control", ["-d"], path, env=env) == (1, "", "An instance of this daemon is already running\n")
    other = {"CUDA_MPS_PIPE_DIRECTORY": str(tmp_path / "elsewhere")}
    assert api.run("nvidia-cuda-mps-control", [], path, env=other, stdin="get_server_list\n")[0] == 1
    commands = ("get_default_active_thread_percentage\nset_default_active_thread_percentage 50\n"
                "get_default_active_thread_percentage\nset_default_device_pinned_mem_limit 0 2G\n"
                "get_server_list\n")
    assert api.run("nvidia-cuda-mps-control", [], path, env=env, stdin=commands) == (0, "100.0\n50.0\n50.0\n", "")
    assert [d["pipe_dir"] for d in api.read_state(path)["daemons"]["mps"]] == [pipe]
    assert api.run("nvidia-cuda-mps-control", [], path, env=env, stdin="quit\n") == (0, "", "")
    deadline = time.time() + 5
    while os.path.exists(os.path.join(pipe, "control")) and time.time() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(os.path.join(pipe, "control"))
    with open(os.path.join(log, "control.log"), encoding="utf-8") as handle:
        logged = handle.read()
    assert "Starting control daemon using socket %s/control" % pipe in logged
    assert "Cmd:set_default_active_thread_percentage 50" in logged
    assert api.read_state(path)["daemons"]["mps"] == []


def test_mps_foreground_mode(make_state, tmp_path):
    path = make_state("l40s_4x")
    env = api.environment(path, {"CUDA_MPS_PIPE_DIRECTORY": str(tmp_path / "p"), "CUDA_MPS_LOG_DIRECTORY": str(tmp_path / "l")})
    with subprocess.Popen(api.command("nvidia-cuda-mps-control", ["-f"]), env=env, stdout=subprocess.PIPE, text=True) as daemon:
        first = daemon.stdout.readline()
        assert "Starting control daemon using socket" in first
        assert api.run("nvidia-cuda-mps-control", [], path, env=env, stdin="quit\n")[0] == 0
        assert daemon.wait(timeout=10) == 0


# ---- faults -----------------------------------------------------------------------

def test_missing_command(make_state):
    path = make_state("l40s_4x", lambda s: s["faults"].update(missing=["nvidia-smi"]))
    assert api.run("nvidia-smi", ["-L"], path) == (127, "", "nvidia-smi: command not found\n")


def test_hang_is_stopped_by_a_timeout(make_state, smi):
    path = make_state("l40s_4x", lambda s: s["faults"].update(hang=[{"tool": "nvidia-smi", "match": ["topo"]}]))
    started = time.time()
    with pytest.raises(subprocess.TimeoutExpired):
        smi(path, "topo", "-m", timeout=1.5)
    assert time.time() - started < 10
    assert smi(path, "-L")[0] == 0  # only the matching command hangs
    # The way modules run commands: coreutils timeout ends it with 124.
    completed = subprocess.run(["timeout", "1", *api.command("nvidia-smi", ["topo", "-m"])],
                               env=api.environment(path), capture_output=True, check=False)
    assert completed.returncode == 124


def test_driver_not_loaded(make_state, smi):
    path = make_state("dgx_h100", lambda s: s["faults"].update(driver="not_loaded"))
    rc, out, _err = smi(path, "-L")
    assert rc == 9
    assert out == ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                   "Make sure that the latest NVIDIA driver is installed and running.\n\n")


def test_forced_exit(make_state, smi):
    forced = {"nvidia-smi": {"rc": 15, "stdout": "Unable to determine the device handle for GPU0000:18:00.0: GPU is lost.\n",
                             "match": ["-q"]}}
    path = make_state("dgx_h100", lambda s: s["faults"].update(exit=forced))
    assert smi(path, "-q", "-x") == (15, forced["nvidia-smi"]["stdout"], "")
    assert smi(path, "-L")[0] == 0


def test_gpu_busy_and_reset_failure(make_state, smi):
    def faults(state):
        enable_mig(state, 0)
        state["faults"].update(gpu_busy=[0], reset_fail={"1": "Not Supported"})
    path = make_state("a100_8x_mig", faults)
    rc, out, _err = smi(path, "-i", "0", "-r")
    assert rc == 255 and "GPU 00000000:07:00.0: In use by another client" in out
    rc, out, _err = smi(path, "mig", "-i", "0", "-cgi", "9")
    assert rc == 255 and "using profile 9: In use by another client" in out
    rc, out, _err = smi(path, "-i", "1", "-r")
    assert (rc, out) == (255, "The following GPUs could not be reset:\n  GPU 00000000:0F:00.0: Not Supported\n")


def test_missing_state_looks_like_no_driver(tmp_path):
    rc, out, err = api.run("nvidia-smi", ["-L"], str(tmp_path / "absent.json"))
    assert rc == 9 and out.startswith("NVIDIA-SMI has failed") and "gpuemu: cannot read the emulator state" in err


def test_single_gpu_helper_keeps_one_gpu():
    state = api.new_state("dgx_h100")
    single_gpu("NVIDIA H100 PCIe", "0000:01:00.0", "Enabled")(state)
    assert [g["model"] for g in state["gpus"]] == ["NVIDIA H100 PCIe"]


def test_summary_shows_mig_devices_and_processes(make_state, smi):
    path = make_state("a100_8x_mig", enable_mig)
    smi(path, "mig", "-i", "0", "-cgi", "9", "-C")
    state = api.read_state(path)
    api.add_process(state, 0, 31337, "/usr/bin/python3", 8192, gpu_instance_id=2, compute_instance_id=0)
    api.write_state(state, path)
    rc, out, _err = smi(path, "-i", "0")
    assert rc == 0
    lines = out.splitlines()
    assert {len(line) for line in lines[1:] if line.strip()} == {91}
    assert any(line.startswith("|  0    2   0   0  |") and "8204MiB / 40192MiB" in line for line in lines)
    row = [line for line in lines if "31337" in line][0]
    assert row.split() == ["|", "0", "2", "0", "31337", "C", "/usr/bin/python3", "8192MiB", "|"]
    assert query(smi, path, "memory.used") == "8193 MiB"
