# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit playbook on the converged lab, with gpuops_audit_fail_on_drift=true.

gpu-infer keeps a local sysctl file (prepare.yml) that sets vm.swappiness=10
after the collection's file, so at the next boot the node loses the tuned
value: the audit must count that as drift and fail on it. The other nodes are
fully tuned and must pass.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
LOCAL_SYSCTL_FILE = "/etc/sysctl.d/99-zz-local.conf"
CONFLICTED_NODE = "gpu-infer"
TUNED_NODES = ("gpu-train", "gpu-mig")


def _task_results(report, task_name):
    """host -> result of the named task, from the json callback's report."""
    results = {}
    for play in report["plays"]:
        for task in play["tasks"]:
            if task["task"]["name"] == task_name:
                results.update(task["hosts"])
    return results


@pytest.fixture(scope="module")
def audit():
    run = subprocess.run(
        [
            "ansible-playbook", "playbooks/audit.yml",
            # The whole inventory directory: the groups live in the linked lab inventory.
            "-i", os.path.dirname(os.environ["MOLECULE_INVENTORY_FILE"]),
            "-e", "gpuops_audit_fail_on_drift=true",
        ],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=600, check=False,
        env=dict(os.environ, ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_NOCOLOR="1"),
    )
    try:
        report = json.loads(run.stdout)
    except ValueError:
        pytest.fail("the audit printed no JSON report:\n" + run.stdout + run.stderr)
    return run.returncode, report, run.stdout + run.stderr


def test_boot_conflict_is_drift_named_per_item(audit):
    dummy, report, output = audit
    summary = _task_results(report, "Summarize what each node reached")[CONFLICTED_NODE]
    drift = summary["ansible_facts"]["gpuops_audit_summary"]["drift"]
    assert isinstance(drift, list), output
    conflicts = [item for item in drift if item.startswith("sysctl boot conflict: ")]
    assert len(conflicts) == 1, drift
    assert "vm.swappiness" in conflicts[0] and LOCAL_SYSCTL_FILE in conflicts[0], conflicts


def test_fail_on_drift_fails_the_conflicted_node_only(audit):
    returncode, report, output = audit
    gate = _task_results(report, "Fail on drift when asked to")
    assert returncode != 0, output
    assert gate[CONFLICTED_NODE].get("failed"), gate[CONFLICTED_NODE]
    assert "sysctl boot conflict: vm.swappiness" in gate[CONFLICTED_NODE]["msg"], gate[CONFLICTED_NODE]
    for node in TUNED_NODES:
        assert not gate[node].get("failed"), gate[node]
    assert report["stats"][CONFLICTED_NODE]["failures"] == 1, report["stats"]
    for node in TUNED_NODES:
        assert report["stats"][node]["failures"] == 0, report["stats"]


def test_tuned_nodes_report_no_drift(audit):
    dummy, report, output = audit
    summaries = _task_results(report, "Summarize what each node reached")
    for node in TUNED_NODES:
        assert summaries[node]["ansible_facts"]["gpuops_audit_summary"]["drift"] == "none", output


def test_the_mps_node_shows_its_daemons_in_check_mode_without_drift(audit):
    dummy, report, output = audit
    summary = _task_results(report, "Summarize what each node reached")[CONFLICTED_NODE]["ansible_facts"]["gpuops_audit_summary"]
    assert [entry.split(":")[0] for entry in summary["mps_daemons"]] == ["infer-a", "infer-b"], summary
    # Its one drift is the sysctl boot conflict: the running daemons match what the role wants.
    assert "mps" not in summary["drift"], summary["drift"]
    for node in TUNED_NODES:
        assert _task_results(report, "Summarize what each node reached")[node]["ansible_facts"][
            "gpuops_audit_summary"]["mps_daemons"] == [], output
