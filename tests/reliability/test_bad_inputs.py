# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every invalid input stops the run before anything changes, in every way a role is used.

The cases of bad_inputs.yml run on one converged training node (the Molecule
gpu-train hardware) through site.yml, the case's role alone, and a user's own
play that lists the validation entry first. Each run must fail; each of its
cases must have one error message with all its fragments; the node's
fingerprint (managed files, live values, GPU state) must be as before. The
controller reports every input error at once, so cases share runs
(bad_input_cases.bundle).
"""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from bad_input_cases import case_vars, load_cases, runs_of
from fingerprint import differences, fingerprint
from lab import REPO_ROOT, SITE, playbook_argv, playbook_env, run_playbook, start_nodes, stop_nodes
from lab_playbook import NODE_TASK

# GPUOPS_LAB_NODE_PREFIX names the node apart, for runs of this test side by side with others.
NODE = os.environ.get("GPUOPS_LAB_NODE_PREFIX", "rel-") + "check-bad-inputs"
SPEC = {NODE: {"gpuops_gpu_profile": "dgx_h100", "gpuops_lab_persistenced_unit": "upstream", "gpuops_profile": "training"}}
PLAYBOOKS = {"site": SITE, "role": "tests/reliability/plays/role_alone.yml", "own_play": "tests/reliability/plays/own_play.yml",
             # A user's play of three roles without the validation entry: the first role checks the others.
             "first_role": "molecule/default/plays/own_play.yml"}
# What must never appear in a refused run's output: the first task after validation.
NOT_REACHED = {"site": "PLAY [Tune GPU nodes, one call per node]", "own_play": "TASK [gpuops.hardening.sysctl :"}
# A failed task's result line: "fatal: [node]: FAILED! => {...}" or "failed: [node] (item=...) => {...}".
FAILED_RESULT = re.compile(r"^(?:fatal|failed): \[[^\]]+\].*? => (?={)", re.M)
CASES = load_cases()
CASES_BY_ID = dict((case["id"], case) for case in CASES)


def _params():
    found = []
    for mode in ("site", "role", "own_play"):
        for role, run in runs_of(CASES, mode):
            found.append(pytest.param(mode, role, run, id="%s-%s" % (mode, "+".join(case["id"] for case in run))))
    return found


@pytest.fixture(scope="module")
def inventory(tmp_path_factory):
    path = start_nodes(SPEC, tmp_path_factory.mktemp("bad_inputs"))
    returncode, output = run_playbook(path)
    assert returncode == 0, output[-8000:]
    yield path
    stop_nodes(SPEC)


def failure_messages(output):
    """Every message of the failed task results in output (the callback writes results as JSON)."""
    messages = []
    decoder = json.JSONDecoder()
    for found in FAILED_RESULT.finditer(output):
        result, _end = decoder.raw_decode(output, found.end())
        messages.extend(result.get("errors") or [result.get("msg", "")])
    return messages


def _run(inventory, mode, role, run):
    extra = {}
    for case in run:
        extra.update(case_vars(case))
    if role:
        extra["bad_input_role"] = role
    # The audit only reads: alone, it runs in check mode.
    flags = ("--check",) if role == "audit" else ()
    done = subprocess.run(playbook_argv(inventory, PLAYBOOKS[mode], extra_vars=extra, flags=flags), cwd=REPO_ROOT,
                          env=playbook_env(ANSIBLE_CALLBACK_RESULT_FORMAT="json"), capture_output=True, text=True,
                          timeout=600, check=False)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize("mode, role, run", _params())
def test_bad_inputs_stop_the_run_before_any_change(inventory, mode, role, run):
    before = fingerprint(NODE)
    returncode, output = _run(inventory, mode, role, run)
    assert returncode != 0, output[-8000:]
    messages = failure_messages(output)
    for case in run:
        assert any(all(fragment in message for fragment in case["message"]) for message in messages), \
            "%s: no message with %r among %r\n%s" % (case["id"], case["message"], messages, output[-4000:])
    if mode in NOT_REACHED and not any(case["on_host"] for case in run):
        assert NOT_REACHED[mode] not in output, output[-8000:]
    assert differences(before, fingerprint(NODE)) == []


def test_the_first_role_of_a_users_play_without_validate_checks_the_later_roles(inventory):
    before = fingerprint(NODE)
    returncode, output = _run(inventory, "first_role", None, [CASES_BY_ID["thp_defrag_choice"]])
    assert returncode != 0, output[-8000:]
    assert any("thp_defrag" in message and "eager" in message for message in failure_messages(output)), output[-8000:]
    assert "TASK [gpuops.hardening.sysctl : Validate the inputs of every gpuops.hardening role]" in output
    for later in (NODE_TASK, "gpuops.hardening.thp :", "gpuops.hardening.memlock :"):
        assert later not in output, "%r ran:\n%s" % (later, output[-8000:])
    assert differences(before, fingerprint(NODE)) == []


def test_a_run_started_past_the_validation_changes_nothing(inventory):
    """--start-at-task skips the validation play, tagged always or not (README: Use it from a
    playbook): the roles find no checked inputs and stop there, and an invalid value never reaches the node."""
    before = fingerprint(NODE)
    returncode, output = run_playbook(inventory, extra_vars={"thp_enabled": "eager"}, flags=("--start-at-task", NODE_TASK))
    assert returncode != 0, output[-8000:]
    assert "'validate_inputs' is undefined" in output, output[-8000:]
    assert differences(before, fingerprint(NODE)) == []
