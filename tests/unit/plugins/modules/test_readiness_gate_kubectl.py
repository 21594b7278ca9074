# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The readiness gate's Kubernetes side with the real kubectl, against a stand-in of the nodes API.

The stand-in (kube_api_standin) is not an API server: it proves the commands and their arguments kubectl
accepts and the requests it makes of them, not a cluster's admission or scheduling. Skipped where kubectl is
not installed."""

from __future__ import annotations

import json
import shutil

import pytest

from ansible_collections.gpuops.hardening.plugins.modules import readiness_gate as module
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.kube_api_standin import NodesApi
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")

NODE = {"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "gpu-7", "resourceVersion": "1", "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
        "spec": {"podCIDR": "10.244.1.0/24", "taints": [{"key": "maintenance", "value": "disk", "effect": "NoExecute"}]}}
MARK = "gpuops: reset: hardware.gpu0.row_remap_pending"
TAINT = {"key": "gpuops.io/readiness", "value": "reset", "effect": "NoSchedule"}


def _key(taint):
    return json.dumps(taint, sort_keys=True)


def gate(kubeconfig, verdict, check_mode=False):
    reasons = ["hardware.gpu0.row_remap_pending: 1 row waits for a GPU reset (reset)"] if verdict == "reset" else []
    result = run_module(module.main, {"scheduler": "kubernetes", "node_name": "gpu-7", "kubeconfig": kubeconfig,
                                      "verdict": verdict, "reasons": reasons, "hold_verdicts": ["reset", "reboot", "replace"],
                                      "timeout": 30}, check_mode=check_mode)
    assert not result["failed"], result
    return result


def test_kubectl_cordons_taints_and_marks_the_node_then_releases_it(tmp_path):
    with NodesApi(NODE) as api:
        kubeconfig = api.kubeconfig(str(tmp_path / "kubeconfig"))
        checked = gate(kubeconfig, "reset", check_mode=True)
        assert (checked["changed"], checked["action"]) == (True, "hold") and api.patches() == []

        held = gate(kubeconfig, "reset")
        assert held == dict(checked, warnings=held["warnings"])
        assert api.node["spec"]["unschedulable"] is True
        # kubectl puts the new taint first; the operator's stays.
        assert sorted(api.node["spec"]["taints"], key=_key) == sorted([NODE["spec"]["taints"][0], TAINT], key=_key)
        assert api.node["metadata"]["annotations"]["gpuops.io/readiness-cordon"] == MARK
        assert api.node["metadata"]["annotations"]["node.alpha.kubernetes.io/ttl"] == "0"

        count = len(api.patches())
        assert gate(kubeconfig, "reset")["changed"] is False and len(api.patches()) == count

        released = gate(kubeconfig, "ready")
        assert (released["changed"], released["action"]) == (True, "release")
        assert "unschedulable" not in api.node["spec"] and api.node["spec"]["taints"] == NODE["spec"]["taints"]
        assert "gpuops.io/readiness-cordon" not in api.node["metadata"]["annotations"]


def test_kubectl_never_touches_an_operators_cordon(tmp_path):
    cordoned = dict(NODE, spec=dict(NODE["spec"], unschedulable=True))
    with NodesApi(cordoned) as api:
        kubeconfig = api.kubeconfig(str(tmp_path / "kubeconfig"))
        for verdict in ("reset", "ready"):
            result = gate(kubeconfig, verdict)
            assert (result["changed"], result["action"]) == (False, "keep")
        assert api.patches() == [] and api.node == cordoned
