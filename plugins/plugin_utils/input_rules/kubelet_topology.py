# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubelet_topology: formats, ranges and the Static memory manager's sum. The settings'
fit with the node (CPUs, NUMA nodes) is checked by the module, before it changes anything."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.hardening.plugins.module_utils.cpulist import try_parse_cpulist
from ansible_collections.gpuops.hardening.plugins.module_utils.kubelet_config import (
    memory_reservation_error,
    parse_quantity,
)
from ansible_collections.gpuops.hardening.plugins.plugin_utils.input_rules.common import bad, seconds_errors

REMOVED = {}
_ABSOLUTE = re.compile(r"^/\S*[^/\s]$")
_NODE_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
# What each kubelet key is called in messages: the role variable that sets it.
LABELS = {
    "reservedSystemCPUs": "kubelet_topology_reserved_system_cpus",
    "reservedMemory": "kubelet_topology_reserved_memory",
    "kubeReserved": "kubelet_topology_kube_reserved_memory",
    "systemReserved": "kubelet_topology_system_reserved_memory",
    "evictionHard": "kubelet_topology_eviction_hard_memory",
}
_QUANTITIES = ("kubelet_topology_kube_reserved_memory", "kubelet_topology_system_reserved_memory",
               "kubelet_topology_eviction_hard_memory")

# The inputs settings() reads as text; the argument spec reports other types.
_TYPED_TEXT = _QUANTITIES + ("kubelet_topology_cpu_manager_policy", "kubelet_topology_topology_manager_policy",
                             "kubelet_topology_topology_manager_scope", "kubelet_topology_memory_manager_policy",
                             "kubelet_topology_reserved_system_cpus")


def _reserved_memory_errors(entries):
    found, seen = [], set()
    for entry in entries if isinstance(entries, list) else []:
        ok = isinstance(entry, dict) and set(entry) == {"numa_node", "memory"}
        node = entry.get("numa_node") if ok else None
        if not ok or isinstance(node, bool) or not isinstance(node, int) or node < 0 or node in seen:
            found.append(bad("kubelet_topology_reserved_memory", entry,
                             "items {numa_node: N, memory: QUANTITY}, one per NUMA node id (0 or more)"))
        elif not parse_quantity(entry["memory"]):
            found.append(bad("kubelet_topology_reserved_memory", entry,
                             "a memory above zero, as a quantity such as 1Gi or 512Mi"))
        else:
            seen.add(node)
    return found


def format_quantity(size):
    """Bytes as a quantity in the largest binary unit that holds them whole: 1124Mi."""
    for suffix, factor in (("Gi", 2 ** 30), ("Mi", 2 ** 20), ("Ki", 2 ** 10)):
        if size and size % factor == 0:
            return "%d%s" % (size // factor, suffix)
    return str(size)


def settings(inputs):
    """The KubeletConfiguration keys the role sets."""
    config = {
        "cpuManagerPolicy": inputs["kubelet_topology_cpu_manager_policy"],
        "topologyManagerPolicy": inputs["kubelet_topology_topology_manager_policy"],
        "topologyManagerScope": inputs["kubelet_topology_topology_manager_scope"],
        "memoryManagerPolicy": inputs["kubelet_topology_memory_manager_policy"],
        "kubeReserved": {"memory": inputs["kubelet_topology_kube_reserved_memory"]},
        "systemReserved": {"memory": inputs["kubelet_topology_system_reserved_memory"]},
        "evictionHard": {"memory.available": inputs["kubelet_topology_eviction_hard_memory"]},
    }
    if inputs["kubelet_topology_reserved_system_cpus"]:
        config["reservedSystemCPUs"] = inputs["kubelet_topology_reserved_system_cpus"]
    if config["memoryManagerPolicy"] == "Static":
        entries = inputs["kubelet_topology_reserved_memory"]
        if not entries:
            # Unset: the whole reservation on NUMA node 0, which every node has.
            total = sum(parse_quantity(inputs[name]) for name in _QUANTITIES)
            entries = [{"numa_node": 0, "memory": format_quantity(total)}]
        config["reservedMemory"] = [{"numaNode": entry["numa_node"], "limits": {"memory": str(entry["memory"])}}
                                    for entry in entries]
    return config


def errors(inputs, profile_entry):  # pylint: disable=unused-argument
    found = seconds_errors(inputs, "kubelet_topology_timeout")
    drain_timeout = inputs.get("kubelet_topology_drain_timeout")
    if isinstance(drain_timeout, int) and not 1 <= drain_timeout <= 3600:
        found.append(bad("kubelet_topology_drain_timeout", drain_timeout, "an integer from 1 to 3600 (seconds)"))
    for name in ("kubelet_topology_config_path", "kubelet_topology_root_dir"):
        value = inputs.get(name)
        if isinstance(value, str) and not _ABSOLUTE.match(value):
            found.append(bad(name, value, "an absolute path without spaces, such as /var/lib/kubelet"))
    node_name = inputs.get("kubelet_topology_node_name")
    if isinstance(node_name, str) and node_name and not _NODE_NAME.match(node_name):
        found.append(bad("kubelet_topology_node_name", node_name,
                         "a Kubernetes node name (lower-case letters, digits, - and .), or empty for the inventory name"))
    cpus = inputs.get("kubelet_topology_reserved_system_cpus")
    if isinstance(cpus, str):
        if cpus and try_parse_cpulist(cpus) is None:
            found.append(bad("kubelet_topology_reserved_system_cpus", cpus, "a CPU list such as 0-1 or 0,32"))
        elif not cpus and inputs.get("kubelet_topology_cpu_manager_policy") == "static":
            found.append(bad("kubelet_topology_reserved_system_cpus", cpus,
                             "at least one CPU when kubelet_topology_cpu_manager_policy is static, whose "
                             "exclusive CPUs leave the reserved ones to the system"))
    memory_errors = []
    for name in _QUANTITIES:
        value = inputs.get(name)
        if isinstance(value, str) and parse_quantity(value) is None:
            memory_errors.append(bad(name, value, "a memory quantity such as 512Mi, 1Gi or 0"))
    memory_errors.extend(_reserved_memory_errors(inputs.get("kubelet_topology_reserved_memory")))
    found.extend(memory_errors)
    typed = all(isinstance(inputs.get(name), str) for name in _TYPED_TEXT)
    # The sum needs only well-formed memory inputs; other errors are reported alongside it.
    if not memory_errors and typed and isinstance(inputs.get("kubelet_topology_reserved_memory"), list):
        error = memory_reservation_error(settings(inputs), LABELS)
        if error:
            found.append(error)
    return found


def resolve(inputs, profile_entry):  # pylint: disable=unused-argument
    resolved = dict(inputs)
    resolved["kubelet_settings"] = settings(inputs)
    resolved["kubelet_labels"] = LABELS
    return resolved
