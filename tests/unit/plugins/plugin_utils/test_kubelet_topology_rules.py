# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet_topology role's inputs through the same checks the validate_inputs action runs."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpuops.hardening.plugins.plugin_utils.role_inputs import check_role, load_roles

ROLES_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles")


@pytest.fixture(scope="module")
def role():
    return load_roles(ROLES_DIR)["kubelet_topology"]


def test_defaults_are_valid_and_resolve_to_kubelet_keys(role):
    errors, inputs = check_role(role, {}, "training")
    assert errors == []
    settings = inputs["kubelet_settings"]
    assert settings["topologyManagerPolicy"] == "single-numa-node" and settings["topologyManagerScope"] == "pod"
    assert settings["reservedMemory"] == [{"numaNode": 0, "limits": {"memory": "1124Mi"}}]
    assert settings["reservedSystemCPUs"] == "0" and settings["cpuManagerPolicy"] == "static"
    assert check_role(role, {}, "inference")[1]["kubelet_settings"]["topologyManagerPolicy"] == "best-effort"


def test_no_reserved_memory_without_the_static_memory_manager(role):
    errors, inputs = check_role(role, {"kubelet_topology_memory_manager_policy": "None"}, "training")
    assert errors == [] and "reservedMemory" not in inputs["kubelet_settings"]


@pytest.mark.parametrize("given, message", [
    ({"kubelet_topology_reserved_memory": [{"numa_node": 0, "memory": "1Gi"}]},
     "kubelet_topology_reserved_memory: got [{'numaNode': 0, 'limits': {'memory': '1Gi'}}], whose memory adds up to"),
    ({"kubelet_topology_reserved_memory": [{"numa_node": 0, "memory": "562Mi"}, {"numa_node": 0, "memory": "562Mi"}]},
     "one per NUMA node id"),
    ({"kubelet_topology_reserved_system_cpus": "0-"}, 'kubelet_topology_reserved_system_cpus: got "0-"; allowed: a CPU list'),
    ({"kubelet_topology_reserved_system_cpus": ""}, "at least one CPU when kubelet_topology_cpu_manager_policy is static"),
    ({"kubelet_topology_kube_reserved_memory": "lots"}, 'kubelet_topology_kube_reserved_memory: got "lots"'),
    ({"kubelet_topology_topology_manager_policy": "numa"}, "kubelet_topology_topology_manager_policy"),
    ({"kubelet_topology_config_path": "kubelet.yaml"}, 'kubelet_topology_config_path: got "kubelet.yaml"'),
    ({"kubelet_topology_drain_timeout": 0}, "kubelet_topology_drain_timeout: got 0"),
])
def test_bad_inputs_name_the_variable_and_what_is_allowed(role, given, message):
    errors, dummy = check_role(role, given, "training")
    assert any(message in error for error in errors), errors


def test_a_split_reservation_that_adds_up_passes(role):
    given = {"kubelet_topology_reserved_memory": [{"numa_node": 0, "memory": "562Mi"}, {"numa_node": 1, "memory": "562Mi"}]}
    errors, inputs = check_role(role, given, "training")
    assert errors == [] and len(inputs["kubelet_settings"]["reservedMemory"]) == 2
