# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Node objects (Kubernetes API reference, Node v1 core) as kubectl get node -o json prints them, written here."""

from __future__ import annotations

import json

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import kube_node

NODE = {"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "gpu-7", "annotations": {"gpuops.io/readiness-cordon": "gpuops: reset: x"}},
        "spec": {"unschedulable": True, "taints": [
            {"key": "gpuops.io/readiness", "value": "reset", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": "2026-12-04T18:40:02Z"}]}}


def test_cordon_taints_and_annotations():
    node = kube_node.parse_node(json.dumps(NODE))
    assert (node["name"], node["unschedulable"]) == ("gpu-7", True)
    assert kube_node.taint_of(node, "node.kubernetes.io/unschedulable") == {
        "key": "node.kubernetes.io/unschedulable", "value": None, "effect": "NoSchedule"}
    assert kube_node.describe(node, "gpuops.io/readiness", "gpuops.io/readiness-cordon") == (
        "cordoned=yes taint=gpuops.io/readiness=reset:NoSchedule annotation=gpuops: reset: x")


def test_a_schedulable_node_without_taints_or_annotations():
    node = kube_node.parse_node(json.dumps({"kind": "Node", "metadata": {"name": "gpu-8"}, "spec": {}}))
    assert node == {"name": "gpu-8", "unschedulable": False, "taints": [], "annotations": {}}
    assert kube_node.describe(node, "k", "a") == "cordoned=no taint=(none) annotation=(none)"


@pytest.mark.parametrize("text", ["not json", "[]", json.dumps({"kind": "Pod", "metadata": {}})])
def test_anything_else_is_refused(text):
    with pytest.raises(kube_node.NodeJsonError):
        kube_node.parse_node(text)
