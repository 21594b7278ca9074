# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of gpuops.hardening.audit_node: turns what the roles read in check mode into checks."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_container_checks import container_checks
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_container_runtime_checks import (
    container_runtime_checks,
)
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_document import (
    node_checks,
    node_document,
    node_states,
)
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_hardware_checks import assess, readiness
from ansible_collections.gpuops.hardening.plugins.plugin_utils.plain_data import plain


class ActionModule(ActionBase):
    """Builds the host's audit document from the node call's result in check mode; nothing is sent to the host."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _VALID_ARGS = frozenset(("inputs", "node", "plan", "role_errors", "cuda_versions", "gpu_models"))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        task_vars = task_vars or {}
        inputs = plain(self._task.args.get("inputs") or {})
        states, errors = node_states(plain(self._task.args.get("node") or {}), plain(self._task.args.get("plan") or []))
        errors.update(plain(self._task.args.get("role_errors") or {}))
        # This run's node call, never the host's facts: with fact caching (AWX's fact storage, jsonfile) those may
        # be an earlier run's, and a GPU read that failed now must not be judged by the last one that worked.
        facts = plain((self._task.args.get("node") or {}).get("ansible_facts") or {})
        topology = plain(facts.get("gpu_topology") or {})
        # None when the topology feature did not read the GPUs: no verdict rather than a made-up "ready".
        health = plain(facts["gpu_health"]) if facts.get("gpu_health") is not None else None
        # A node whose facts hold no kernel log has its Xids judged unknown (SKIP), never none.
        kernel_log = plain(facts.get("gpu_kernel_log") or {"read": False, "problem": "the facts hold no kernel log"})
        hardware = assess(health, plain(self._task.args.get("gpu_models") or {}), kernel_log,
                          plain(facts.get("gpu_gpudirect")))
        checks = node_checks(inputs, states, errors, topology, plain(self._task.args.get("cuda_versions") or []),
                             hardware)
        checks.extend(container_runtime_checks(states.get("container_runtime"), inputs.get("container_runtime") or {},
                                               errors.get("container_runtime")))
        checks.extend(self._containers(facts, inputs, topology))
        profile = (inputs.get("sysctl") or {}).get("gpuops_profile")
        document = node_document(task_vars.get("inventory_hostname"), profile, checks, topology,
                                 node_readiness=readiness(hardware, collected=health is not None))
        result.update(changed=False, ansible_facts={"gpuops_audit": document}, summary=document["summary"])
        return result

    def _containers(self, facts, inputs, topology):
        """The containers area, from this run's containers feature (audit_container_checks)."""
        node = self._task.args.get("node") or {}
        failed = "containers" in (node.get("failed_features") or [])
        why = ((node.get("features") or {}).get("containers") or {}).get("msg") if failed else None
        rdma_devices = (plain(facts.get("gpu_gpudirect")) or {}).get("rdma_devices") or []
        driver = {"driver_version": topology.get("driver_version"), "cuda_version": topology.get("cuda_version")}
        fact = plain(facts["container_runtimes"]) if facts.get("container_runtimes") is not None else None
        return container_checks(fact, inputs.get("audit") or {}, rdma_devices, driver,
                                why_missing=why or ("the containers feature failed" if failed else None))
