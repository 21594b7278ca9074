# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hidden GPU holders (DCGM's nv-hostengine, dcgm-exporter, nvsm): NVML handles without
a CUDA context. While one runs it blocks resets, MIG mode changes and MIG destroys
(NVIDIA/mig-parted deployments/systemd/hooks.sh stops these services before a MIG mode
change), but no process listing shows it. -cgi/-cci still work (an assumption)."""

from __future__ import annotations

import re
import subprocess

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import enable_mig, start_holder, stop

IN_USE = "In use by another client"
BUS_3 = "00000000:4E:00.0"
CLOCK = re.compile(r"^.*\d\d:\d\d:\d\d.*$", re.MULTILINE)


def with_instances(state):
    """GPU 0 and 1 with MIG on, each with a 3g.40gb GPU instance (id 2) holding compute instance 0."""
    for index in (0, 1):
        enable_mig(state, index)
        state["gpus"][index]["gpu_instances"] = [{"id": 2, "profile_id": 9, "start": 0, "compute_instances": [
            {"id": 0, "profile_id": 2, "start": 0, "size": 3, "uuid": "MIG-%d" % index}]}]


def test_the_holder_records_itself_and_goes_on_sigterm(make_state):
    path = make_state("a100_8x_mig")
    holder = start_holder(path, "nv-hostengine", "0,2")
    assert api.read_state(path)["holders"] == [{"name": "nv-hostengine", "pid": holder.pid, "gpus": [0, 2]}]
    stop(holder)
    assert api.read_state(path)["holders"] == []


def test_a_holder_of_all_gpus_blocks_resets_and_keeps_mig_pending(make_state, smi):
    path = make_state("a100_8x_mig")
    holder = start_holder(path, "nv-hostengine")
    assert api.read_state(path)["holders"][0]["gpus"] is None
    rc, out, _err = smi(path, "-i", "3", "-r")
    assert rc == 255
    assert out.startswith("The following GPUs could not be reset:\n  GPU %s: %s\n\n1 device is currently being used" % (BUS_3, IN_USE))
    rc, out, _err = smi(path, "-i", "3", "-mig", "1")
    assert rc == 0 and "Warning: MIG mode is in pending enable state for GPU" in out and IN_USE in out
    gpu = api.read_state(path)["gpus"][3]
    assert gpu["mig"] == {"current": "Disabled", "pending": "Enabled"}
    stop(holder)
    assert smi(path, "-i", "3", "-r")[0] == 0
    assert api.read_state(path)["gpus"][3]["mig"]["current"] == "Enabled"


def test_a_holder_blocks_destroys_only_on_its_gpus_and_creates_still_work(make_state, smi):
    path = make_state("a100_8x_mig", with_instances)
    holder = start_holder(path, "dcgm-exporter", "0")
    assert smi(path, "mig", "-i", "0", "-dci") == (255, "Unable to destroy compute instance ID  0 from GPU  0 GPU instance ID  2: "
                                                   "%s\nFailed to destroy compute instances: %s\n" % (IN_USE, IN_USE), "")
    assert smi(path, "mig", "-i", "0", "-cgi", "19")[0] == 0
    assert smi(path, "mig", "-i", "0", "-gi", "11", "-cci")[0] == 0
    assert smi(path, "mig", "-i", "0", "-gi", "11", "-dci")[0] == 255
    state = api.read_state(path)
    assert smi(path, "mig", "-i", "1", "-dci")[0] == 0
    assert smi(path, "mig", "-i", "1", "-dgi") == (0, "Successfully destroyed GPU instance ID  2 from GPU  1\n", "")
    assert len(state["gpus"][0]["gpu_instances"]) == 2
    stop(holder)
    assert smi(path, "mig", "-i", "0", "-gi", "11", "-dci")[0] == 0
    assert smi(path, "mig", "-i", "0", "-gi", "11", "-dgi")[0] == 0


def test_dgi_is_refused_while_a_holder_runs(make_state, smi):
    def empty_instance(state):
        with_instances(state)
        state["gpus"][0]["gpu_instances"][0]["compute_instances"] = []
    path = make_state("a100_8x_mig", empty_instance)
    holder = start_holder(path, "nvsm")
    assert smi(path, "mig", "-i", "0", "-dgi") == (255, "Unable to destroy GPU instance ID  2 from GPU  0: %s\n"
                                                   "Failed to destroy GPU instances: %s\n" % (IN_USE, IN_USE), "")
    stop(holder)


def _listings(smi, path):
    """-q -x, --query-compute-apps and the table, without their clock lines."""
    runs = [smi(path, *argv) for argv in (["-q", "-x"], ["--query-compute-apps=pid,name", "--format=csv"], [])]
    return [(rc, CLOCK.sub("", out), err) for rc, out, err in runs]


def test_holders_are_shown_nowhere(make_state, smi):
    path = make_state("a100_8x_mig")
    before = _listings(smi, path)
    holder = start_holder(path, "nv-hostengine")
    after = _listings(smi, path)
    stop(holder)
    assert after == before
    assert after[1] == (0, "pid, process_name\n", "")
    assert "<process_info>" not in after[0][1] and "No running processes found" in after[2][1]


def test_a_holder_record_counts_only_while_its_pid_runs(make_state, smi):
    # 2**22 + 1 is above the kernel's largest pid_max: no process has it.
    sleeper = subprocess.Popen(["sleep", "30"])  # pylint: disable=consider-using-with
    holders = [{"name": "dead", "pid": 2 ** 22 + 1, "gpus": None}, {"name": "alive", "pid": sleeper.pid, "gpus": [1]}]
    path = make_state("a100_8x_mig", lambda s: s.update(holders=holders))
    try:
        assert smi(path, "-i", "0", "-r")[0] == 0
        assert smi(path, "-i", "1", "-r")[0] == 255
    finally:
        sleeper.kill()
        sleeper.wait()
    assert smi(path, "-i", "1", "-r")[0] == 0


def test_the_holder_refuses_a_bad_command_line(make_state):
    path = make_state("a100_8x_mig")
    for argv in ([], ["--gpus", "0"], ["--name", "x", "--gpus", "8"], ["--name", "x", "--gpus", "a"], ["--name"]):
        assert api.run("gpu-holder", argv, path, timeout=10) == (2, "", "usage: gpuemu-gpu-holder --name NAME [--gpus INDEX[,INDEX...]]\n")
    assert api.read_state(path)["holders"] == []
