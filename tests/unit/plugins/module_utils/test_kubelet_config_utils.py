# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet config rules: merge, quantities, policy changes, state files, node fit and the schema."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import kubelet_config as kc
from ansible_collections.gpuops.hardening.plugins.module_utils.kubelet_schema import FIELDS, type_errors

USER_FILE = {
    "apiVersion": "kubelet.config.k8s.io/v1beta1",
    "kind": "KubeletConfiguration",
    "clusterDNS": ["10.96.0.10"],
    "kubeReserved": {"cpu": "500m", "memory": "1Gi"},
    "evictionHard": {"nodefs.available": "10%", "memory.available": "200Mi"},
    "authentication": {"anonymous": {"enabled": False}},
}
STATIC = {
    "cpuManagerPolicy": "static",
    "memoryManagerPolicy": "Static",
    "kubeReserved": {"memory": "512Mi"},
    "systemReserved": {"memory": "512Mi"},
    "evictionHard": {"memory.available": "100Mi"},
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1124Mi"}}],
}


@pytest.mark.parametrize("text, size", [
    ("512Mi", 512 * 2 ** 20), ("1Gi", 2 ** 30), ("1G", 10 ** 9), ("100k", 10 ** 5), ("1e3", 1000),
    ("1073741824", 2 ** 30), (0, 0), ("1.5Gi", 3 * 2 ** 29), ("10%", None), ("Gi", None), (True, None), ("", None),
])
def test_parse_quantity(text, size):
    assert kc.parse_quantity(text) == size


def test_merge_keeps_every_other_key_and_map_entry():
    merged = kc.merge(USER_FILE, STATIC)
    assert merged["clusterDNS"] == ["10.96.0.10"]
    assert merged["authentication"] == {"anonymous": {"enabled": False}}
    assert merged["kubeReserved"] == {"cpu": "500m", "memory": "512Mi"}
    assert merged["evictionHard"] == {"nodefs.available": "10%", "memory.available": "100Mi"}
    assert list(merged)[:len(USER_FILE)] == list(USER_FILE)
    assert USER_FILE["kubeReserved"]["memory"] == "1Gi"


def test_key_changes_name_only_what_differs():
    merged = kc.merge(USER_FILE, {"clusterDNS": ["10.96.0.10"], "cpuManagerPolicy": "static"})
    assert kc.key_changes(USER_FILE, merged) == [("cpuManagerPolicy", None, "static")]
    assert kc.key_changes(merged, merged) == []


@pytest.mark.parametrize("before, after, changed", [
    ({}, {"cpuManagerPolicy": "static"}, [("cpu_manager_state", "none", "static")]),
    ({"cpuManagerPolicy": "none"}, {}, []),
    ({"cpuManagerPolicy": "static"}, {"cpuManagerPolicy": "static", "topologyManagerPolicy": "restricted"}, []),
    ({"memoryManagerPolicy": "Static"}, {"memoryManagerPolicy": "None"}, [("memory_manager_state", "Static", "None")]),
    ({}, STATIC, [("cpu_manager_state", "none", "static"), ("memory_manager_state", "None", "Static")]),
])
def test_changed_policies(before, after, changed):
    assert kc.changed_policies(before, after) == changed


def test_state_files_removed_only_on_a_policy_change_and_only_where_they_exist():
    both = ["cpu_manager_state", "memory_manager_state"]
    assert kc.state_files_to_remove({}, STATIC, both) == both
    assert kc.state_files_to_remove({}, STATIC, ["memory_manager_state"]) == ["memory_manager_state"]
    assert kc.state_files_to_remove({}, STATIC, []) == []
    assert kc.state_files_to_remove(STATIC, dict(STATIC, topologyManagerScope="pod"), both) == []
    assert kc.state_files_to_remove(STATIC, dict(STATIC, cpuManagerPolicy="none"), both) == ["cpu_manager_state"]


BOTH = ["cpu_manager_state", "memory_manager_state"]
STATIC_CPUS = dict(STATIC, reservedSystemCPUs="0-1")


@pytest.mark.parametrize("change, removed", [
    ({"reservedSystemCPUs": "0-3"}, ["cpu_manager_state"]),
    ({"reservedSystemCPUs": None}, ["cpu_manager_state"]),
    ({"kubeReserved": {"memory": "512Mi", "cpu": "1"}}, ["cpu_manager_state"]),
    ({"reservedMemory": [{"numaNode": 1, "limits": {"memory": "1124Mi"}}]}, ["memory_manager_state"]),
    ({"systemReserved": {"memory": "1Gi"}, "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1636Mi"}}]},
     ["memory_manager_state"]),
    ({"evictionHard": {"memory.available": "200Mi"}}, ["memory_manager_state"]),
    ({"topologyManagerPolicy": "restricted"}, []),
])
def test_a_reservation_change_under_a_static_policy_removes_that_managers_state(change, removed):
    after = dict(STATIC_CPUS, **change)
    assert kc.state_files_to_remove(STATIC_CPUS, after, BOTH) == removed
    assert [state_file for state_file, dummy in kc.changed_reservations(STATIC_CPUS, after)] == removed


def test_a_reservation_change_keeps_the_state_of_a_manager_without_a_static_policy():
    before = dict(STATIC_CPUS, cpuManagerPolicy="none", memoryManagerPolicy="None")
    after = dict(before, reservedSystemCPUs="0-3", evictionHard={"memory.available": "200Mi"})
    assert kc.state_files_to_remove(before, after, BOTH) == []


def test_the_default_eviction_threshold_is_no_change():
    without_eviction = dict(STATIC_CPUS)
    del without_eviction["evictionHard"]
    assert kc.state_files_to_remove(STATIC_CPUS, without_eviction, BOTH) == []


def test_memory_reservation_adds_up():
    assert kc.memory_reservation_error(STATIC) is None
    assert kc.memory_reservation_error(dict(STATIC, memoryManagerPolicy="None", reservedMemory=[])) is None
    split = dict(STATIC, reservedMemory=[{"numaNode": 0, "limits": {"memory": "562Mi"}},
                                         {"numaNode": 1, "limits": {"memory": "562Mi"}}])
    assert kc.memory_reservation_error(split) is None


def test_memory_reservation_counts_the_default_eviction_threshold():
    without_eviction = dict(STATIC)
    del without_eviction["evictionHard"]
    assert kc.memory_reservation_error(without_eviction) is None
    short = dict(without_eviction, reservedMemory=[{"numaNode": 0, "limits": {"memory": "1Gi"}}])
    error = kc.memory_reservation_error(short, {"reservedMemory": "kubelet_topology_reserved_memory"})
    assert error.startswith("kubelet_topology_reserved_memory: got ")
    assert "evictionHard[memory.available] 100Mi" in error


def test_memory_reservation_must_not_be_empty_under_static():
    assert "at least one NUMA node" in kc.memory_reservation_error(dict(STATIC, reservedMemory=[]))


def test_node_errors():
    config = dict(STATIC, reservedSystemCPUs="0-1,64", reservedMemory=[{"numaNode": 3, "limits": {"memory": "1Gi"}}])
    errors = kc.node_errors(config, list(range(32)), [0, 1], {"reservedSystemCPUs": "kubelet_topology_reserved_system_cpus"})
    assert errors == [
        "kubelet_topology_reserved_system_cpus: got '0-1,64'; CPUs 64 do not exist on this node; allowed: CPUs of 0-31",
        "reservedMemory: got a reservation on NUMA node 3, which this node lacks; allowed: NUMA nodes 0-1",
    ]
    assert kc.node_errors(dict(STATIC, reservedSystemCPUs="0,31"), list(range(32)), [0]) == []


def test_schema_types():
    merged = kc.merge(USER_FILE, dict(STATIC, reservedSystemCPUs="0"))
    assert type_errors(merged) == ([], [])
    errors, unknown = type_errors(dict(merged, reservedSystemCPUs=0, maxPods="110", cpuManagerPolicyy="static"))
    assert errors == ["reservedSystemCPUs: must be of type string, got 0", "maxPods: must be of type int, got '110'"]
    assert unknown == ["cpuManagerPolicyy"]
    errors, dummy = type_errors(dict(merged, reservedMemory=[{"numaNode": "0", "limits": {"memory": 1}}]))
    assert len(errors) == 2
    assert type_errors(dict(merged, kind="KubeProxyConfiguration"))[0] == [
        "kind: must be KubeletConfiguration, got 'KubeProxyConfiguration'"]


def test_schema_knows_the_fields_the_role_sets():
    for name in ("cpuManagerPolicy", "reservedSystemCPUs", "topologyManagerPolicy", "topologyManagerScope",
                 "memoryManagerPolicy", "reservedMemory", "kubeReserved", "systemReserved", "evictionHard"):
        assert name in FIELDS
