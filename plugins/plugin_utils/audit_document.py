# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One node's audit document: every check, in a fixed order, with its summary.

docs/audit.md documents the schema (SCHEMA_VERSION). The document holds no time
stamp, so the same node state always gives the same document.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.plugin_utils import (
    audit_checks, audit_fabricmanager_checks, audit_gpu_checks, audit_kubelet_checks, audit_slurm_checks,
)
from ansible_collections.gpuops.hardening.plugins.plugin_utils.driver_compat import preflight_checks

SCHEMA_VERSION = 1

# Where each state the audit judges comes from: a feature of the node call (its name in the plan,
# plugin_utils/node_plan.py); slurm_gres and kubelet are in the plan of the nodes of their group.
NODE_FEATURES = {
    "sysctl_settings": "sysctl_settings",
    "sysctl_swap": "swap_off",
    "thp": "thp",
    "memlock": "memlock",
    "persistenced": "persistenced",
    "fabricmanager": "fabricmanager",
    "mig": "mig_layout",
    "mps": "mps",
    "container_runtime": "container_runtime",
    "slurm_gres": "slurm_gres",
    "kubelet": "kubelet",
}
# The role behind each state, whose failure explains a missing one.
STATE_ROLES = {"sysctl_settings": "sysctl", "sysctl_swap": "sysctl", "thp": "thp", "memlock": "memlock",
               "persistenced": "persistenced", "fabricmanager": "fabricmanager", "mig": "mig", "mps": "mps",
               "container_runtime": "container_runtime", "slurm_gres": "slurm_gres", "kubelet": "kubelet_topology"}


def node_states(node, plan):
    """(states, role errors) from the node call's result: each state by the audit's name, and the first failure
    of each role's features."""
    features = (node or {}).get("features") or {}
    states = dict((name, features.get(feature)) for name, feature in NODE_FEATURES.items())
    roles = dict((entry.get("name"), entry.get("role")) for entry in plan or [])
    errors = {}
    for name in (node or {}).get("failed_features") or []:
        role = roles.get(name, name)
        if role not in errors:
            errors[role] = (features.get(name) or {}).get("msg") or "the feature failed"
    return states, errors


def node_checks(inputs, states, role_errors, topology, cuda_versions, hardware=None):
    """Every check for one node, in the tuning guide's order: zero-cost knobs, GPU services, partitioning, data path;
    then the GPUs' hardware (hardware: audit_hardware_checks.assess's findings)."""
    def error(name):
        return (role_errors or {}).get(STATE_ROLES.get(name, name))

    def state(name):
        return (states or {}).get(name)

    topology = topology or {}
    found = []
    found.extend(audit_checks.sysctl_checks(state("sysctl_settings"), inputs.get("sysctl", {}), error("sysctl_settings")))
    found.extend(audit_checks.swap_checks(state("sysctl_swap"), inputs.get("sysctl", {}), error("sysctl_swap")))
    found.extend(audit_checks.thp_checks(state("thp"), inputs.get("thp", {}), error("thp")))
    found.extend(audit_checks.memlock_checks(state("memlock"), inputs.get("memlock", {}), error("memlock")))
    found.extend(audit_gpu_checks.persistence_checks(state("persistenced"), topology, error("persistenced")))
    found.extend(audit_fabricmanager_checks.fabricmanager_checks(state("fabricmanager"), error("fabricmanager")))
    found.extend(audit_gpu_checks.mig_checks(state("mig"), inputs.get("mig", {}), topology, error("mig")))
    found.extend(audit_gpu_checks.mps_checks(state("mps"), inputs.get("mps", {}), error("mps")))
    found.extend(audit_gpu_checks.topology_checks(topology, error("numa_binding")))
    found.extend(audit_slurm_checks.slurm_gres_checks(state("slurm_gres"), inputs.get("slurm_gres", {}),
                                                      error("slurm_gres")))
    found.extend(audit_kubelet_checks.kubelet_checks(state("kubelet"), inputs.get("kubelet_topology", {}), error("kubelet")))
    found.extend(preflight_checks(topology.get("driver_version"), topology.get("cuda_version"),
                                  topology.get("gpus") or [], list(cuda_versions or [])))
    found.extend(finding["check"] for finding in hardware or [])
    return found


def summary(checks):
    counts = dict((verdict, 0) for verdict in audit_checks.VERDICTS)
    for item in checks:
        counts[item["verdict"]] += 1
    return counts


def node_document(node, profile, checks, topology, error=None, node_readiness=None):
    """The JSON document of one node (schema in docs/audit.md); node_readiness: audit_hardware_checks.readiness's."""
    topology = topology or {}
    return {
        "schema_version": SCHEMA_VERSION,
        "node": node,
        "profile": profile,
        "error": error,
        "readiness": node_readiness or {"verdict": None, "reasons": [error or "the GPUs' health was not read"]},
        "summary": summary(checks),
        "checks": checks,
        "driver": {"driver_version": topology.get("driver_version"), "cuda_version": topology.get("cuda_version")},
        "topology": topology,
    }


def unaudited_document(node, profile, why):
    """The document of a node that could not be audited at all (unreachable, or failed before any check)."""
    return node_document(node, profile, [], {}, error=why)


def failed_checks(document):
    return [item["id"] for item in document.get("checks") or [] if item["verdict"] == audit_checks.FAIL]
