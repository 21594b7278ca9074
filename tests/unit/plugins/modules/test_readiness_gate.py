# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The readiness gate's engine on stand-ins of scontrol and kubectl (scheduler_fakes): every decision.

The gate holds a node whose verdict is one of hold_verdicts, marks the hold as its own ("gpuops: ..."),
releases only its own hold, and never touches an operator's drain, reason or cordon. Check mode runs no change
and returns what the real run then returns.
"""

from __future__ import annotations

import copy
import json
import os
import stat
import sys

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import readiness_gate as engine
from ansible_collections.gpuops.hardening.plugins.module_utils.node_host import FeatureFailed, NodeHost
from ansible_collections.gpuops.hardening.plugins.modules import readiness_gate as module
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.scheduler_fakes import FakeKubectl, FakeSlurm

RESET_REASONS = ["hardware.gpu0.row_remap_pending: 1 row waits for a GPU reset (reset)",
                 "hardware.gpu0.ecc_uncorrectable: 2 uncorrectable errors since the driver loaded (reset)"]
OUR_RESET = "gpuops: reset: hardware.gpu0.row_remap_pending, hardware.gpu0.ecc_uncorrectable"
HOLD = ["reset", "reboot", "replace"]


class FakeModule(object):
    """The part of AnsibleModule the engine reaches through NodeHost: the binaries and their runs."""

    def __init__(self, **tools):
        self.tools = tools
        self.calls = []

    def get_bin_path(self, name, required=False, opt_dirs=None):  # pylint: disable=unused-argument
        return "/usr/bin/%s" % name if name in self.tools else None

    def run_command(self, argv, environ_update=None, data=None, check_rc=False):  # pylint: disable=unused-argument
        assert environ_update["LC_ALL"] == "C"
        self.calls.append(list(argv))
        return self.tools[os.path.basename(argv[0])](list(argv[1:]))


def spec(scheduler="slurm", verdict="reset", reasons=None, **more):
    found = dict((name, option.get("default")) for name, option in engine.ARGUMENT_SPEC.items())
    found.update(scheduler=scheduler, node_name="n1", verdict=verdict, hold_verdicts=list(HOLD),
                 reasons=RESET_REASONS if reasons is None else reasons)
    found.update(more)
    return found


def converge(tool, check_mode=False, **spec_values):
    name = "scontrol" if isinstance(tool, FakeSlurm) else "kubectl"
    fake = FakeModule(**{name: tool})
    host = NodeHost(fake)
    result = engine.converge(spec(**spec_values), host, check_mode)
    return result, host.warnings, fake.calls


def changes(calls):
    """The calls that ask for a change (everything but the reads)."""
    return [call[1:] for call in calls if "show" not in call and "get" not in call]


def check_then_run(tool, **spec_values):
    """(check-mode result, real result): check mode must change nothing and say what the real run returns."""
    before = copy.deepcopy(tool.node)
    checked, checked_warnings, calls = converge(tool, check_mode=True, **spec_values)
    assert tool.node == before and changes(calls) == []
    done, warnings, _calls = converge(tool, **spec_values)
    assert checked == done and checked_warnings == warnings
    return done, warnings


# Slurm

def test_a_reset_verdict_drains_an_idle_node_with_the_gate_reason():
    slurm = FakeSlurm()
    result, warnings = check_then_run(slurm)
    assert (result["changed"], result["action"], result["mark"]) == (True, "hold", OUR_RESET)
    assert slurm.updates == [["State=DRAIN", "Reason=%s" % OUR_RESET]]
    assert (result["before"], result["after"]) == ("State=IDLE Reason=(none)", "State=IDLE+DRAIN Reason=%s" % OUR_RESET)
    assert warnings == []


def test_the_gate_drain_stays_as_it_is_while_the_verdict_holds():
    slurm = FakeSlurm(flags=["DRAIN"], reason=OUR_RESET)
    result, _warnings = check_then_run(slurm)
    assert (result["changed"], result["action"], result["commands"]) == (False, "keep", [])
    assert slurm.updates == []


def test_other_checks_change_the_gate_reason_only():
    slurm = FakeSlurm(flags=["DRAIN"], reason="gpuops: reset: hardware.gpu1.retired_pages")
    result, _warnings = check_then_run(slurm)
    assert (result["changed"], result["action"]) == (True, "update")
    assert slurm.node["reason"] == OUR_RESET and slurm.node["flags"] == ["DRAIN"]


@pytest.mark.parametrize("verdict", ["ready", "degraded"])
def test_a_verdict_that_does_not_hold_resumes_the_gate_drain(verdict):
    slurm = FakeSlurm(state="MIXED", flags=["DRAIN"], reason=OUR_RESET)
    result, _warnings = check_then_run(slurm, verdict=verdict, reasons=[])
    assert (result["changed"], result["action"]) == (True, "release")
    assert slurm.updates == [["State=RESUME"]]
    assert result["after"] == "State=MIXED Reason=(none)"


def test_degraded_drains_when_the_operator_opts_in():
    slurm = FakeSlurm()
    result, _warnings = check_then_run(slurm, verdict="degraded", reasons=["hardware.gpu3.nvlink: 1 of 18 links down (degraded)"],
                                       hold_verdicts=["degraded"] + HOLD)
    assert result["action"] == "hold" and slurm.node["reason"] == "gpuops: degraded: hardware.gpu3.nvlink"


@pytest.mark.parametrize("verdict", ["ready", "reset", "replace", None])
@pytest.mark.parametrize("state, flags, reason", [
    ("IDLE", ["DRAIN"], "maintenance window 42"),
    ("MIXED", ["DRAIN"], "bad DIMM, ticket 7 (gpuops: reset)"),
    ("DOWN", ["NOT_RESPONDING"], "Not responding"),
    ("DOWN", ["DRAIN"], None),
])
def test_an_operator_drain_or_reason_is_never_touched(verdict, state, flags, reason):
    slurm = FakeSlurm(state=state, flags=flags, reason=reason)
    before = copy.deepcopy(slurm.node)
    result, warnings = check_then_run(slurm, verdict=verdict)
    assert (result["changed"], result["action"], result["commands"]) == (False, "keep", [])
    assert slurm.node == before and slurm.updates == []
    if verdict in HOLD:
        assert len(warnings) == 1 and "would hold it" in warnings[0] and (reason or "without a reason") in warnings[0]
    else:
        assert warnings == []


def test_an_unknown_verdict_leaves_the_node_as_it_is():
    for slurm in (FakeSlurm(), FakeSlurm(flags=["DRAIN"], reason=OUR_RESET)):
        result, _warnings = check_then_run(slurm, verdict=None, reasons=["the GPUs' health was not read"])
        assert (result["changed"], result["action"], result["mark"]) == (False, "keep", None)
        assert slurm.updates == []


def test_the_gate_reason_on_a_node_that_is_not_drained_is_left():
    slurm = FakeSlurm(reason=OUR_RESET)
    result, _warnings = check_then_run(slurm, verdict="ready", reasons=[])
    assert (result["changed"], result["action"]) == (False, "keep") and slurm.updates == []


def test_a_down_node_with_the_gate_reason_is_resumed():
    slurm = FakeSlurm(state="DOWN", reason=OUR_RESET)
    result, _warnings = check_then_run(slurm, verdict="ready", reasons=[])
    assert result["action"] == "release" and slurm.node["state"] == "IDLE"


def test_the_slurm_name_defaults_to_the_short_host_name(monkeypatch):
    monkeypatch.setattr(engine.socket, "gethostname", lambda: "gpu-7.cluster.example.org")
    result, _warnings, calls = converge(FakeSlurm(name="gpu-7"), node_name="")
    assert result["node"] == "gpu-7" and calls[0] == ["/usr/bin/scontrol", "show", "node", "-o", "gpu-7"]


def test_an_unknown_node_fails_naming_the_command():
    with pytest.raises(FeatureFailed) as failed:
        converge(FakeSlurm(name="other"))
    assert failed.value.msg.startswith("/usr/bin/scontrol show node -o n1 failed with exit code 1: Node n1 not found")


def test_without_scontrol_the_gate_fails_before_reading_anything():
    host = NodeHost(FakeModule())
    with pytest.raises(FeatureFailed) as failed:
        engine.converge(spec(), host, False)
    assert "scontrol" in failed.value.msg


# Kubernetes

TAINT = {"key": "gpuops.io/readiness", "value": "reset", "effect": "NoSchedule"}
OPERATOR_TAINT = {"key": "maintenance", "value": "disk", "effect": "NoExecute"}


def kube_state(kubectl):
    spec_part, metadata = kubectl.node["spec"], kubectl.node["metadata"]
    return (bool(spec_part.get("unschedulable")), spec_part.get("taints", []),
            metadata["annotations"].get("gpuops.io/readiness-cordon"))


def test_a_reset_verdict_annotates_taints_and_cordons_the_node():
    kubectl = FakeKubectl(taints=[OPERATOR_TAINT])
    result, _warnings = check_then_run(kubectl, scheduler="kubernetes")
    assert (result["changed"], result["action"]) == (True, "hold")
    # The mark first: an interrupted run still finds its own cordon.
    assert [change[0] for change in kubectl.changes] == ["annotate", "taint", "cordon"]
    assert kube_state(kubectl) == (True, [OPERATOR_TAINT, TAINT], OUR_RESET)
    assert result["after"] == "cordoned=yes taint=gpuops.io/readiness=reset:NoSchedule annotation=%s" % OUR_RESET
    again, _warnings = check_then_run(kubectl, scheduler="kubernetes")
    assert (again["changed"], again["action"]) == (False, "keep")


def test_ready_uncordons_only_the_gate_cordon_and_removes_its_taint_and_mark():
    kubectl = FakeKubectl(unschedulable=True, taints=[OPERATOR_TAINT, TAINT], annotations={"gpuops.io/readiness-cordon": OUR_RESET})
    result, _warnings = check_then_run(kubectl, scheduler="kubernetes", verdict="ready", reasons=[])
    assert (result["changed"], result["action"]) == (True, "release")
    assert [change[0] for change in kubectl.changes] == ["uncordon", "taint", "annotate"]
    assert kube_state(kubectl) == (False, [OPERATOR_TAINT], None)


@pytest.mark.parametrize("verdict", ["ready", "reboot"])
def test_an_operator_cordon_is_never_touched(verdict):
    kubectl = FakeKubectl(unschedulable=True, taints=[OPERATOR_TAINT])
    before = copy.deepcopy(kubectl.node)
    result, warnings = check_then_run(kubectl, scheduler="kubernetes", verdict=verdict)
    assert (result["changed"], result["action"]) == (False, "keep")
    assert kubectl.node == before and kubectl.changes == []
    assert bool(warnings) == (verdict == "reboot")


def test_a_lost_taint_is_put_back_alone():
    kubectl = FakeKubectl(unschedulable=True, annotations={"gpuops.io/readiness-cordon": OUR_RESET})
    result, _warnings = check_then_run(kubectl, scheduler="kubernetes")
    assert result["action"] == "hold" and [change[0] for change in kubectl.changes] == ["taint"]
    assert kube_state(kubectl) == (True, [TAINT], OUR_RESET)


def test_a_half_released_node_is_finished():
    # An interrupted release: uncordoned, its taint gone, the mark still there.
    kubectl = FakeKubectl(annotations={"gpuops.io/readiness-cordon": OUR_RESET})
    result, _warnings = check_then_run(kubectl, scheduler="kubernetes", verdict="ready", reasons=[])
    assert result["action"] == "release" and [change[0] for change in kubectl.changes] == ["annotate"]
    assert kube_state(kubectl) == (False, [], None)


def test_a_cordon_without_the_gate_taint_is_left_when_the_verdict_clears():
    # A hold interrupted after its mark, then a cordon by hand: the gate cordons only after its taint, so this
    # cordon may be an operator's. The mark goes, the cordon stays, and the run says so.
    kubectl = FakeKubectl(unschedulable=True, annotations={"gpuops.io/readiness-cordon": OUR_RESET})
    result, warnings = check_then_run(kubectl, scheduler="kubernetes", verdict="ready", reasons=[])
    assert result["action"] == "release" and [change[0] for change in kubectl.changes] == ["annotate"]
    assert kube_state(kubectl) == (True, [], None)
    assert any("left cordoned" in warning for warning in warnings), warnings


def test_kubernetes_needs_the_node_name_and_passes_the_kubeconfig():
    with pytest.raises(FeatureFailed) as failed:
        converge(FakeKubectl(), scheduler="kubernetes", node_name="")
    assert "node_name is required" in failed.value.msg
    kubectl = FakeKubectl()
    converge(kubectl, scheduler="kubernetes", kubeconfig="/etc/kubernetes/admin.conf")
    assert set(kubectl.kubeconfigs) == {"/etc/kubernetes/admin.conf"}


# The module, in its own process's shape, with the stand-ins as programs on PATH

@pytest.fixture
def tools_on_path(tmp_path, monkeypatch):
    fakes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scheduler_fakes.py")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("scontrol", "kubectl"):
        path = bin_dir / tool
        path.write_text("#!/bin/sh\nexec %s %s %s \"$@\"\n" % (sys.executable, fakes, tool))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"scontrol": FakeSlurm().node, "kubectl": FakeKubectl().node}))
    monkeypatch.setenv("PATH", "%s:%s" % (bin_dir, os.environ["PATH"]))
    monkeypatch.setenv("GATE_FAKE_STATE", str(state))
    return state


def test_the_module_drains_then_resumes_through_scontrol(tools_on_path):
    args = {"scheduler": "slurm", "node_name": "n1", "verdict": "replace", "hold_verdicts": HOLD,
            "reasons": ["hardware.gpu2.row_remap_failure: a row remap failed (replace)"]}
    checked = run_module(module.main, args, check_mode=True, diff=True)
    assert not checked["failed"] and checked["changed"] and "diff" in checked
    assert json.loads(tools_on_path.read_text())["scontrol"]["flags"] == []
    drained = run_module(module.main, args)
    assert (drained["changed"], drained["after"]) == (True, "State=IDLE+DRAIN Reason=gpuops: replace: hardware.gpu2.row_remap_failure")
    assert "diff" not in drained
    resumed = run_module(module.main, dict(args, verdict="ready", reasons=[]))
    assert (resumed["changed"], resumed["action"], resumed["after"]) == (True, "release", "State=IDLE Reason=(none)")
