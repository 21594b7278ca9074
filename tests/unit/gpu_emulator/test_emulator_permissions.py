# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi setters run by a non-root user fail with "Insufficient Permissions" and
exit code 4 (nvidia-smi(1), RETURN VALUE), and change nothing; queries still work."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import query

USER = {"GPUEMU_EUID": "1000"}
TERMINATING = "Terminating early due to previous errors.\n"


@pytest.mark.parametrize("argv, out", [
    (["-pm", "1"], "Unable to set persistence mode for GPU 00000000:07:00.0: Insufficient Permissions\n" + TERMINATING),
    (["-c", "3"], "Unable to set the compute mode for GPU 00000000:07:00.0: Insufficient Permissions\n" + TERMINATING),
    (["-mig", "1"], "Unable to enable MIG Mode for GPU 00000000:07:00.0: Insufficient Permissions\n" + TERMINATING),
    (["-mig", "0"], "Unable to disable MIG Mode for GPU 00000000:07:00.0: Insufficient Permissions\n" + TERMINATING),
    (["-r"], "The following GPUs could not be reset:\n  GPU 00000000:07:00.0: Insufficient Permissions\n"),
])
def test_setters_refuse_a_non_root_user(make_state, smi, argv, out):
    path = make_state("a100_8x_mig")
    before = api.read_state(path)["gpus"]
    assert smi(path, "-i", "0", *argv, env=USER) == (4, out, "")
    assert api.read_state(path)["gpus"] == before


def test_a_non_root_user_can_still_query(make_state, smi):
    path = make_state("a100_8x_mig")
    rc, out, _err = smi(path, "-L", env=USER)
    assert rc == 0 and out.startswith("GPU 0: ")
    assert smi(path, "-i", "0", "--query-gpu=persistence_mode", "--format=csv,noheader", env=USER) == (0, "Disabled\n", "")


def test_a_bad_value_is_refused_before_the_permission_check(make_state, smi):
    path = make_state("a100_8x_mig")
    assert smi(path, "-pm", "7", env=USER)[0] == 2


def test_root_may_change_settings(make_state, smi):
    path = make_state("a100_8x_mig")
    assert smi(path, "-i", "0", "-pm", "1", env={"GPUEMU_EUID": "0"})[0] == 0
    assert query(smi, path, "persistence_mode") == "Enabled"


def test_refusal_does_not_need_write_access_to_the_state(make_state, smi):
    path = make_state("a100_8x_mig")
    # An unprivileged user cannot create the state's lock file.
    os.makedirs(path + ".lock")
    assert smi(path, "-i", "0", "-pm", "1", env=USER)[0] == 4


def mig_instances(state):
    """GPU 0 with MIG on and a 3g.40gb GPU instance (id 2) holding compute instance 0."""
    state["gpus"][0]["mig"] = {"current": "Enabled", "pending": "Enabled"}
    state["gpus"][0]["gpu_instances"] = [{"id": 2, "profile_id": 9, "start": 0, "compute_instances": [
        {"id": 0, "profile_id": 2, "start": 0, "size": 3, "uuid": "MIG-0"}]}]


# Creating and destroying MIG instances needs root (NVML reference: "Requires privileged
# user"); the lines follow the layout of the other refused creates and destroys (an assumption).
@pytest.mark.parametrize("argv, out", [
    (["-cgi", "19"], "Unable to create a GPU instance on GPU  0 using profile 19: Insufficient Permissions\n"
                     "Failed to create GPU instances: Insufficient Permissions\n"),
    (["-cci", "0", "-gi", "2"], "Unable to create a compute instance on GPU  0 GPU instance ID  2 using profile 0: "
                                "Insufficient Permissions\nFailed to create compute instances: Insufficient Permissions\n"),
    (["-dci"], "Unable to destroy compute instance ID  0 from GPU  0 GPU instance ID  2: Insufficient Permissions\n"
               "Failed to destroy compute instances: Insufficient Permissions\n"),
    (["-dgi", "-gi", "2"], "Unable to destroy GPU instance ID  2 from GPU  0: Insufficient Permissions\n"
                           "Failed to destroy GPU instances: Insufficient Permissions\n"),
])
def test_mig_instance_changes_refuse_a_non_root_user(make_state, smi, argv, out):
    path = make_state("a100_8x_mig", mig_instances)
    # Without write access to the state: the refusal must not need its lock.
    os.makedirs(path + ".lock")
    before = api.read_state(path)
    assert smi(path, "mig", "-i", "0", *argv, env=USER) == (4, out, "")
    assert api.read_state(path) == before


def test_mig_listings_still_work_for_a_non_root_user(make_state, smi):
    path = make_state("a100_8x_mig", mig_instances)
    assert smi(path, "mig", "-i", "0", "-lgi", env=USER)[0] == 0
    assert smi(path, "mig", "-i", "0", "-cgi", "19", env={"GPUEMU_EUID": "0"})[0] == 0
