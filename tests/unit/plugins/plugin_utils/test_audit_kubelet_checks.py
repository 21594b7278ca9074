# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's kubelet checks: the kubelet's file against the kubelet_topology role's settings."""

from __future__ import annotations

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_document import node_checks
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_kubelet_checks import kubelet_checks

INPUTS = {"kubelet_settings": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0",
                               "topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "pod",
                               "memoryManagerPolicy": "Static", "kubeReserved": {"memory": "512Mi"}}}
CONVERGED = {"changed": False, "path": "/var/lib/kubelet/config.yaml", "changes": [], "state_files_removed": []}


def _verdicts(checks):
    return dict((item["id"], item["verdict"]) for item in checks)


def test_a_converged_file_passes():
    assert _verdicts(kubelet_checks(CONVERGED, INPUTS)) == {
        "kubelet.cpu_manager": "PASS", "kubelet.topology_manager": "PASS", "kubelet.memory_manager": "PASS"}


def test_a_differing_policy_fails_and_names_the_pending_state_reset():
    state = dict(CONVERGED, changed=True, changes=[{"key": "cpuManagerPolicy", "before": None, "after": "static"}],
                 state_files_removed=["/var/lib/kubelet/cpu_manager_state"])
    checks = dict((item["id"], item) for item in kubelet_checks(state, INPUTS))
    assert checks["kubelet.cpu_manager"]["verdict"] == "FAIL"
    assert checks["kubelet.cpu_manager"]["actual"] == "cpuManagerPolicy=unset"
    assert "/var/lib/kubelet/cpu_manager_state" in checks["kubelet.cpu_manager"]["reason"]
    assert checks["kubelet.topology_manager"]["verdict"] == "PASS"


def test_nodes_that_do_not_opt_in_get_no_kubelet_checks_and_a_failed_role_fails():
    assert kubelet_checks(None, INPUTS) == []
    failed = kubelet_checks(None, INPUTS, role_error="kubelet settings do not fit this node")
    assert [(item["id"], item["verdict"]) for item in failed] == [("kubelet.cpu_manager", "FAIL")]
    ids = [item["id"] for item in node_checks({"kubelet_topology": INPUTS}, {"kubelet": CONVERGED}, {}, {}, [])]
    assert "kubelet.memory_manager" in ids


def test_a_differing_reservation_names_only_its_managers_pending_state_reset():
    state = dict(CONVERGED, changed=True, changes=[{"key": "reservedSystemCPUs", "before": "0-1", "after": "0"}],
                 state_files_removed=["/var/lib/kubelet/cpu_manager_state"])
    checks = dict((item["id"], item) for item in kubelet_checks(state, INPUTS))
    assert "/var/lib/kubelet/cpu_manager_state" in checks["kubelet.cpu_manager"]["reason"]
    assert checks["kubelet.memory_manager"]["verdict"] == "PASS"
