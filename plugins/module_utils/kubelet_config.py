# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure rules of the kubelet's topology settings: merge, quantities, policy and reservation changes, node fit.

Used by the module gpuops.hardening.kubelet_config on the node and by the
kubelet_topology role's input rules on the controller, so that each rule lives once.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.hardening.plugins.module_utils.cpulist import format_cpulist, try_parse_cpulist

# The kubelet's defaults when a key is absent (KubeletConfiguration v1beta1 defaults).
CPU_POLICY_DEFAULT = "none"
MEMORY_POLICY_DEFAULT = "None"
# evictionHard's default memory.available threshold. The memory manager docs
# (https://kubernetes.io/docs/tasks/administer-cluster/memory-manager/, "Reserved memory flag")
# warn that this default is 100Mi, not zero, and that reservedMemory must count it.
EVICTION_MEMORY_DEFAULT = "100Mi"

# The manager each state file (below the kubelet's root dir) belongs to, and the key of its policy.
STATE_FILES = (("cpu_manager_state", "cpuManagerPolicy", CPU_POLICY_DEFAULT),
               ("memory_manager_state", "memoryManagerPolicy", MEMORY_POLICY_DEFAULT))

_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|[eE][0-9]+)?$")
_FACTOR = {None: 1, "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60,
           "k": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9, "T": 10 ** 12, "P": 10 ** 15, "E": 10 ** 18}
_EVICTION = re.compile(r"^\s*memory\.available\s*<\s*(\S+)\s*$")


def parse_quantity(text):
    """Bytes of a Kubernetes resource quantity (``512Mi``, ``1G``, ``1e9``, ``1073741824``); None if malformed.

    Percentages (an eviction threshold may be ``10%``) are not quantities: None.
    """
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        return None
    match = _QUANTITY.match(str(text).strip())
    if not match:
        return None
    number, suffix = match.groups()
    if suffix and suffix[0] in "eE":
        value = float(number) * 10 ** int(suffix[1:])
    else:
        value = float(number) * _FACTOR[suffix]
    return int(round(value))


def merge(current, settings):
    """current with settings laid over it: a map value merges key by key (kubeReserved keeps its cpu
    when only memory is set); anything else replaces. Keys and order of current are kept."""
    merged = dict(current or {})
    for key, value in settings.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            inner = dict(merged[key])
            inner.update(value)
            merged[key] = inner
        else:
            merged[key] = value
    return merged


def key_changes(before, after):
    """[(key, before value, after value)] for every top-level key whose value differs."""
    before = before or {}
    keys = list(before) + [key for key in after if key not in before]
    return [(key, before.get(key), after.get(key)) for key in keys if before.get(key) != after.get(key)]


def _policy(config, key, default):
    return (config or {}).get(key) or default


def changed_policies(before, after):
    """The state files whose manager's policy differs between the two configs: [(file, old, new)]."""
    found = []
    for state_file, key, default in STATE_FILES:
        old, new = _policy(before, key, default), _policy(after, key, default)
        if old != new:
            found.append((state_file, old, new))
    return found


def _map_entry(config, key, entry):
    value = config.get(key)
    return value.get(entry) if isinstance(value, dict) else None


def _cpu_reservation(config):
    """What the static CPU manager's reserved set comes from: reservedSystemCPUs, else
    kubeReserved.cpu + systemReserved.cpu."""
    return {"reservedSystemCPUs": config.get("reservedSystemCPUs"),
            "kubeReserved.cpu": _map_entry(config, "kubeReserved", "cpu"),
            "systemReserved.cpu": _map_entry(config, "systemReserved", "cpu")}


def _memory_reservation(config):
    """What the Static memory manager's reserved memory comes from: reservedMemory, which must add
    up to the other three (memory_reservation_error)."""
    return {"reservedMemory": config.get("reservedMemory"),
            "kubeReserved.memory": _map_entry(config, "kubeReserved", "memory"),
            "systemReserved.memory": _map_entry(config, "systemReserved", "memory"),
            "evictionHard[memory.available]": eviction_memory(config)}


# Under its static policy, each manager checks its checkpoint at start against the reservations it
# was computed from, and the kubelet then fails to start ("please drain node and remove policy state
# file"). kubernetes/kubernetes pkg/kubelet/cm/cpumanager/policy_static.go validateState: "not all
# reserved cpus ... are present in defaultCpuSet" once the reserved set grows over CPUs that pods
# hold; pkg/kubelet/cm/memorymanager/policy_static.go validateState: "the expected machine state is
# different from the real one" on any change of system-reserved, kube-reserved or reserved memory.
# The none/None policies check nothing. Any change counts, even one the kubelet would accept (a
# shrinking CPU set, a re-spelled quantity): a needless reset costs a restart, a missed one a node
# that stays NotReady.
RESERVATIONS = {"cpu_manager_state": ("static", _cpu_reservation),
                "memory_manager_state": ("Static", _memory_reservation)}


def changed_reservations(before, after):
    """The state files whose manager keeps its static policy while a reservation it checks its
    checkpoint against changes: [(file, [changed reservation names])]."""
    found = []
    for state_file, key, default in STATE_FILES:
        static, reservation = RESERVATIONS[state_file]
        if not _policy(before, key, default) == _policy(after, key, default) == static:
            continue
        old, new = reservation(before or {}), reservation(after or {})
        changed = [name for name in old if old[name] != new[name]]
        if changed:
            found.append((state_file, changed))
    return found


def state_files_to_remove(before, after, existing):
    """The state files the kubelet would reject, only where they exist (existing: names): a changed
    policy's file, or a changed reservation's under an unchanged static policy."""
    rejected = set(state_file for state_file, dummy, dummy in changed_policies(before, after))
    rejected.update(state_file for state_file, dummy in changed_reservations(before, after))
    return [state_file for state_file, dummy, dummy in STATE_FILES if state_file in rejected and state_file in existing]


def eviction_memory(config):
    """The hard eviction memory threshold of a config, as a quantity string: evictionHard's
    memory.available, or the kubelet's default when evictionHard is absent."""
    hard = (config or {}).get("evictionHard")
    if not isinstance(hard, dict):
        return EVICTION_MEMORY_DEFAULT
    return hard.get("memory.available", "0")


def memory_reservation_error(config, names=None):
    """The error when the Static memory manager's reservedMemory does not add up, else None.

    The memory manager docs ("Reserved memory flag") require, per memory type,
    sum(reservedMemory) = kubeReserved + systemReserved + the hard eviction threshold;
    the kubelet fails at start otherwise. names maps config keys to what the user set
    (role variables), for the message.
    """
    names = names or {}
    if (config.get("memoryManagerPolicy") or MEMORY_POLICY_DEFAULT) != "Static":
        return None
    reserved = config.get("reservedMemory") or []
    label = names.get("reservedMemory", "reservedMemory")
    if not reserved:
        return "%s: got []; allowed: at least one NUMA node's reservation, as the Static memory manager requires" % label
    parts = {}
    for key in ("kubeReserved", "systemReserved"):
        value = (config.get(key) or {}).get("memory", "0")
        parts[names.get(key, key + ".memory")] = value
    parts[names.get("evictionHard", "evictionHard[memory.available]")] = eviction_memory(config)
    total = 0
    for label_part, value in parts.items():
        size = parse_quantity(value)
        if size is None:
            return "%s: got %r; allowed: a memory quantity such as 512Mi or 1Gi" % (label_part, value)
        total += size
    reserved_total = 0
    for entry in reserved:
        size = parse_quantity(((entry or {}).get("limits") or {}).get("memory", "0"))
        if size is None:
            return "%s: got %r; allowed: memory limits that are quantities such as 1Gi" % (label, reserved)
        reserved_total += size
    if reserved_total != total:
        return ("%s: got %r, whose memory adds up to %d bytes; allowed: reservations that add up to %s = %d bytes "
                "(kubeReserved + systemReserved + the hard eviction threshold), or the kubelet does not start"
                % (label, reserved, reserved_total, " + ".join("%s %s" % item for item in parts.items()), total))
    return None


def node_errors(config, node_cpus, numa_nodes, names=None):
    """Settings that do not fit this node: reserved CPUs it lacks, reservedMemory on NUMA nodes it lacks.

    node_cpus: the CPU ids the node has; numa_nodes: its NUMA node ids.
    """
    names = names or {}
    found = []
    cpus_text = config.get("reservedSystemCPUs")
    if cpus_text not in (None, ""):
        label = names.get("reservedSystemCPUs", "reservedSystemCPUs")
        cpus = try_parse_cpulist(cpus_text)
        if cpus is None:
            found.append("%s: got %r; allowed: a CPU list such as 0-1 or 0,32" % (label, cpus_text))
        else:
            missing = sorted(set(cpus) - set(node_cpus))
            if missing:
                found.append("%s: got %r; CPUs %s do not exist on this node; allowed: CPUs of %s"
                             % (label, cpus_text, format_cpulist(missing), format_cpulist(node_cpus)))
    for entry in config.get("reservedMemory") or []:
        node = (entry or {}).get("numaNode")
        if node not in numa_nodes:
            found.append("%s: got a reservation on NUMA node %r, which this node lacks; allowed: NUMA nodes %s"
                         % (names.get("reservedMemory", "reservedMemory"), node,
                            format_cpulist(numa_nodes) or "(none found)"))
    return found
