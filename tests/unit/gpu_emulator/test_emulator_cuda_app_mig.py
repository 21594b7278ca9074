# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""cuda-app on a MIG device: CUDA_VISIBLE_DEVICES=MIG-<uuid>, the UUID nvidia-smi -L
shows (MIG user guide, "Running CUDA Applications on Bare-Metal"), puts its context
in that GPU instance and compute instance; an unknown one leaves no device."""

from __future__ import annotations

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import enable_mig

NO_DEVICE = "gpuemu-cuda-app: CUDA error 100 (cudaErrorNoDevice): no CUDA-capable device is detected\n"
IN_USE = "In use by another client"


def mig_devices(make_state, smi):
    """A state whose GPU 1 has a 3g.40gb (GI 2) and a 1g.10gb (GI 11), each with one compute instance;
    returns (path, {gpu instance id: MIG UUID from nvidia-smi -L})."""
    path = make_state("a100_8x_mig", lambda s: enable_mig(s, 1))
    assert smi(path, "mig", "-i", "1", "-cgi", "9,19", "-C")[0] == 0
    uuids = {}
    for gpu in api.read_state(path)["gpus"]:
        for instance in gpu["gpu_instances"]:
            uuids[instance["id"]] = instance["compute_instances"][0]["uuid"]
    assert sorted(uuids) == [2, 11]
    listed = smi(path, "-L")[1]
    assert all("(UUID: %s)" % uuid in listed for uuid in uuids.values())
    return path, uuids


def test_the_context_runs_in_the_mig_device(make_state, smi, mps_env, apps):
    path, uuids = mig_devices(make_state, smi)
    app = apps(path, dict(mps_env, CUDA_VISIBLE_DEVICES=uuids[11]))
    assert app.stdout.readline().endswith("CUDA context on GPU 1 GPU instance 11 compute instance 0\n")
    assert [(p["gpu"], p["pid"], p["gpu_instance_id"], p["compute_instance_id"]) for p in api.read_state(path)["processes"]] == [
        (1, app.pid, 11, 0)]
    assert smi(path, "mig", "-i", "1", "-gi", "11", "-dci") == (
        255, "Unable to destroy compute instance ID  0 from GPU  1 GPU instance ID 11: %s\n"
        "Failed to destroy compute instances: %s\n" % (IN_USE, IN_USE), "")
    # The other MIG device of the same GPU is free.
    assert smi(path, "mig", "-i", "1", "-gi", "2", "-dci")[0] == 0
    assert smi(path, "mig", "-i", "1", "-gi", "2", "-dgi")[0] == 0
    app.terminate()
    app.wait(timeout=10)
    assert api.read_state(path)["processes"] == []
    assert smi(path, "mig", "-i", "1", "-gi", "11", "-dci")[0] == 0


def test_the_row_goes_when_the_app_ends(make_state, smi, mps_env):
    path, uuids = mig_devices(make_state, smi)
    rc, out, err = api.run("cuda-app", ["--seconds", "0.2"], path, env=dict(mps_env, CUDA_VISIBLE_DEVICES=uuids[2]))
    assert (rc, err) == (0, "") and out.endswith("CUDA context on GPU 1 GPU instance 2 compute instance 0\n")
    assert api.read_state(path)["processes"] == []


def test_an_unknown_mig_uuid_finds_no_device(make_state, smi, mps_env):
    path, _uuids = mig_devices(make_state, smi)
    env = dict(mps_env, CUDA_VISIBLE_DEVICES="MIG-00000000-0000-0000-0000-000000000000")
    assert api.run("cuda-app", ["--seconds", "0"], path, env=env) == (1, "", NO_DEVICE)
    assert api.read_state(path)["processes"] == []
