# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Faults with "times": they fire on that many matching runs, then the command succeeds."""

from __future__ import annotations

import subprocess

import pytest

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import enable_mig


def test_reset_fails_once_then_succeeds(make_state, smi):
    path = make_state("a100_8x_mig", lambda s: s["faults"].update(reset_fail={"0": {"reason": "Unknown Error", "times": 1}}))
    assert smi(path, "-i", "0", "-r") == (255, "The following GPUs could not be reset:\n  GPU 00000000:07:00.0: Unknown Error\n", "")
    assert smi(path, "-i", "0", "-r") == (0, "GPU 00000000:07:00.0 was successfully reset.\n", "")
    assert api.read_state(path)["faults"]["reset_fail"] == {}


def test_a_counted_reset_failure_leaves_the_mig_mode_pending_until_the_retry(make_state, smi):
    def edit(state):
        state["gpus"][0]["mig"]["pending"] = "Enabled"
        state["faults"]["reset_fail"] = {"0": {"reason": "Unknown Error", "times": 2}}
    path = make_state("a100_8x_mig", edit)
    assert smi(path, "-i", "0", "-r")[0] == 255
    assert smi(path, "-i", "0", "-r")[0] == 255
    assert api.read_state(path)["gpus"][0]["mig"] == {"current": "Disabled", "pending": "Enabled"}
    assert smi(path, "-i", "0", "-r")[0] == 0
    assert api.read_state(path)["gpus"][0]["mig"] == {"current": "Enabled", "pending": "Enabled"}


def test_plain_reset_failure_still_fires_every_time(make_state, smi):
    path = make_state("a100_8x_mig", lambda s: s["faults"].update(reset_fail={"1": "Not Supported"}))
    for _run in range(2):
        assert smi(path, "-i", "1", "-r")[0] == 255
    assert api.read_state(path)["faults"]["reset_fail"] == {"1": "Not Supported"}


def test_forced_exit_with_times_counts_only_matching_runs(make_state, smi):
    forced = {"nvidia-smi": {"rc": 15, "stdout": "GPU is lost.\n", "match": ["-r"], "times": 2}}
    path = make_state("a100_8x_mig", lambda s: s["faults"].update(exit=forced))
    assert smi(path, "-L")[0] == 0  # does not match: not counted
    assert smi(path, "-i", "0", "-r") == (15, "GPU is lost.\n", "")
    assert api.read_state(path)["faults"]["exit"]["nvidia-smi"]["times"] == 1
    assert smi(path, "-i", "0", "-r") == (15, "GPU is lost.\n", "")
    assert smi(path, "-i", "0", "-r") == (0, "GPU 00000000:07:00.0 was successfully reset.\n", "")
    assert api.read_state(path)["faults"]["exit"] == {}


def test_hang_with_times_hangs_once(make_state, smi):
    path = make_state("a100_8x_mig", lambda s: s["faults"].update(hang=[{"tool": "nvidia-smi", "match": ["-r"], "times": 1}]))
    with pytest.raises(subprocess.TimeoutExpired):
        smi(path, "-i", "0", "-r", timeout=1.5)
    assert smi(path, "-i", "0", "-r", timeout=30)[0] == 0
    assert api.read_state(path)["faults"]["hang"] == []


def test_counted_faults_keep_other_mig_behaviour(make_state, smi):
    def edit(state):
        enable_mig(state, 0)
        state["faults"]["exit"] = {"nvidia-smi": {"rc": 3, "match": ["-cgi"], "times": 1}}
    path = make_state("a100_8x_mig", edit)
    assert smi(path, "mig", "-i", "0", "-cgi", "9")[0] == 3
    assert api.read_state(path)["gpus"][0]["gpu_instances"] == []
    assert smi(path, "mig", "-i", "0", "-cgi", "9")[0] == 0
