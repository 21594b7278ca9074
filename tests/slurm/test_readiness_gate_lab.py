# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/readiness.yml against Debian's real Slurm 22.05: the audit's verdict drains and resumes the node.

A pending row remap on GPU 0 (the emulator's remapped_rows fault) makes the verdict reset: the gate drains the
node with a reason that starts with "gpuops:" and names the check, read back with scontrol; once the fault
clears it resumes the node. An operator's drain (any other reason) stays as it is, reason and all, whatever the
verdict; --check changes neither the state nor the reason.
"""

from __future__ import annotations

import json
import os
import re
import time

import pytest

import slurm_lab

READINESS = os.path.join(slurm_lab.REPO_ROOT, "playbooks", "readiness.yml")
GATE_TASK = "TASK [gpuops.hardening.readiness_gate : Drain or resume the Slurm node by its readiness verdict]"
REMAP_PENDING = {"remapped_rows": {"0": {"pending": True}}}
NO_REMAP = {"remapped_rows": {}}
OUR_REASON = "gpuops: reset: hardware.gpu0.row_remap_pending"
OPERATOR_REASON = "maintenance window 42"
# Sets the emulator's faults in the node's state, under its lock (as molecule's lab_gpus.SET_FAULTS does).
SET_FAULTS = ("import json, sys\nfrom gpuemu import state\n"
              "with state.editing('/var/lib/gpuemu/state.json') as current:\n"
              "    current['faults'].update(json.loads(sys.argv[1]))\n")


def _set_faults(faults):
    slurm_lab.exec_in(["sh", "-c", "cd /opt/gpuemu && python3 -c \"$0\" \"$1\"", SET_FAULTS, json.dumps(faults)])


def _node():
    """(state, reason) as scontrol shows the node: State= as printed, Reason= without its [user@time] stamp."""
    line = slurm_lab.exec_in(["scontrol", "show", "node", "-o", slurm_lab.NODE]).stdout
    state = re.search(r"\bState=(\S+)", line).group(1)
    reason = re.search(r"\bReason=(.*?)(?: \[[^\]]+\])?\s*$", line)
    return state, reason.group(1) if reason else None


def _readiness(inventory, *flags):
    """The gate task's result for the node (its JSON, from the default callback at -v), and the output."""
    report = os.path.join(os.path.dirname(inventory), "readiness-report")
    output = slurm_lab.playbook_output(inventory, "-v", "-e", "audit_report_dir=%s" % report, *flags, playbook=READINESS,
                                       settings={"ANSIBLE_CALLBACK_RESULT_FORMAT": "json"})
    block = output.split(GATE_TASK, 1)[1].split("\nTASK [", 1)[0].split("\nPLAY RECAP", 1)[0]
    found = re.search(r"^(ok|changed): \[%s\] => " % re.escape(slurm_lab.NODE), block, re.M)
    assert found, block
    result, _end = json.JSONDecoder().raw_decode(block, found.end())
    return result, output


def _wait_idle(seconds=90):
    deadline = time.monotonic() + seconds
    while _node()[0] != "IDLE":
        assert time.monotonic() < deadline, _node()
        time.sleep(1)


@pytest.fixture(scope="module")
def gate(converged):
    inventory, _first = converged
    # slurmctld drained the node when slurmd first registered without gres.conf (INVALID_REG); it has it now.
    slurm_lab.exec_in(["scontrol", "update", "NodeName=%s" % slurm_lab.NODE, "State=RESUME"], check=False)
    _wait_idle()
    yield inventory
    _set_faults(NO_REMAP)
    slurm_lab.exec_in(["scontrol", "update", "NodeName=%s" % slurm_lab.NODE, "State=RESUME"], check=False)
    _wait_idle()


def test_a_pending_remap_drains_the_node_with_our_reason_and_clearing_it_resumes(gate):
    assert _node() == ("IDLE", None)
    _set_faults(REMAP_PENDING)
    try:
        checked, _output = _readiness(gate, "--check")
        assert (checked["changed"], checked["action"], checked["mark"]) == (True, "hold", OUR_REASON), checked
        assert _node() == ("IDLE", None), "--check changed the node"

        drained, _output = _readiness(gate)
        assert (drained["changed"], drained["action"]) == (True, "hold"), drained
        assert _node() == ("IDLE+DRAIN", OUR_REASON)
        # The check-mode run said what the real run then did.
        assert checked["after"] == drained["after"], (checked["after"], drained["after"])

        again, _output = _readiness(gate)
        assert (again["changed"], again["action"]) == (False, "keep"), again
    finally:
        _set_faults(NO_REMAP)
    checked, _output = _readiness(gate, "--check")
    assert (checked["changed"], checked["action"]) == (True, "release"), checked
    assert _node() == ("IDLE+DRAIN", OUR_REASON), "--check resumed the node"

    resumed, _output = _readiness(gate)
    assert (resumed["changed"], resumed["action"], resumed["verdict"]) == (True, "release", "ready"), resumed
    # Resuming a drained node makes slurmctld wait for slurmd to register again: the node reads
    # IDLE+NOT_RESPONDING until slurmd answers the ping slurmctld sends at once (slurmctld/node_mgr.c,
    # update_node: State=RESUME on a DRAIN node calls _require_node_reg). The drain and its reason are gone now.
    assert _node()[1] is None and "DRAIN" not in _node()[0], _node()
    _wait_idle()
    assert _node() == ("IDLE", None)


def test_an_operators_drain_is_never_touched(gate):
    slurm_lab.exec_in(["scontrol", "update", "NodeName=%s" % slurm_lab.NODE, "State=DRAIN",
                       "Reason=%s" % OPERATOR_REASON])
    try:
        # Ready: the gate does not resume a drain it did not make.
        kept, _output = _readiness(gate)
        assert (kept["changed"], kept["action"]) == (False, "keep"), kept
        assert _node() == ("IDLE+DRAIN", OPERATOR_REASON)
        # Reset: the gate does not write its reason over the operator's, and says so.
        _set_faults(REMAP_PENDING)
        kept, output = _readiness(gate)
        assert (kept["changed"], kept["action"]) == (False, "keep"), kept
        # Ansible may wrap a warning's lines.
        warned = "%s: the verdict reset would hold it, but held or marked by someone else (%s)" % (slurm_lab.NODE, OPERATOR_REASON)
        assert warned in " ".join(output.split()), output[-4000:]
        assert _node() == ("IDLE+DRAIN", OPERATOR_REASON)
    finally:
        _set_faults(NO_REMAP)
        slurm_lab.exec_in(["scontrol", "update", "NodeName=%s" % slurm_lab.NODE, "State=RESUME"])
    _wait_idle()
