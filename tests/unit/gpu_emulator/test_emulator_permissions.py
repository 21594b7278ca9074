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
