# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's verdicts on the GPU side: persistence, MPS, MIG and GPU/NUMA/NIC locality.

GPU state comes from the gpu_topology fact (gpu_numa_facts reads nvidia-smi and
sysfs once); what the roles would change comes from their modules in check mode.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_checks import (
    FAIL,
    PASS,
    SKIP,
    WARN,
    check,
    failure,
    not_collected,
    ran,
    text,
)
from ansible_collections.gpuops.hardening.plugins.plugin_utils.driver_compat import mig_capable


def persistence_checks(state, topology, role_error=None):
    """Persistence mode on each GPU, and the daemon that keeps it across driver unloads and boots."""
    found = []
    for gpu in topology.get("gpus") or []:
        mode = gpu.get("persistence_mode")
        check_id, title = "persistence.gpu%s" % gpu.get("index"), "GPU %s persistence mode" % gpu.get("index")
        if mode == "Enabled":
            found.append(check(check_id, "persistence", title, PASS, "Enabled", mode, "the driver stays loaded between jobs"))
        else:
            found.append(check(check_id, "persistence", title, FAIL, "Enabled", mode,
                               "each job pays the driver's start-up; nvidia-persistenced is not holding this GPU"))
    found.append(_persistence_daemon(state, role_error))
    return found


def _persistence_daemon(state, role_error):
    title = "nvidia-persistenced service"
    if not ran(state):
        return not_collected("persistence.daemon", "persistence", title, failure(state, role_error))
    if state.get("skipped_reason"):
        return check("persistence.daemon", "persistence", title, SKIP, "enabled and running", "not checked",
                     state["skipped_reason"])
    actual = "%s mode, %s unit, enabled by %s" % (state.get("mode"), state.get("flavour"), state.get("enabled_by"))
    if state.get("overridden_by"):
        return check("persistence.daemon", "persistence", title, FAIL, "enabled and running", actual,
                     "drop-ins override the tuned settings: " + text(state["overridden_by"]))
    if state.get("changed"):
        pending = []
        if state.get("unmasked"):
            pending.append("masked by %s" % state["unmasked"])
        if (state.get("dropin") or {}).get("changed"):
            pending.append("drop-in %s missing or different" % state["dropin"].get("path"))
        if state.get("service_action") not in (None, "none"):
            pending.append("the daemon would be %s" % state["service_action"])
        return check("persistence.daemon", "persistence", title, FAIL, "enabled and running", actual,
                     "; ".join(pending) or "the service is not in its tuned state")
    return check("persistence.daemon", "persistence", title, PASS, "enabled and running", actual,
                 "the daemon runs with the tuned settings and starts at boot")


def mps_checks(state, inputs, role_error=None):
    """Each declared MPS control daemon, or that none is left over when MPS is off."""
    if not ran(state):
        return [not_collected("mps.daemons", "mps", "MPS daemons", failure(state, role_error))]
    if state.get("skipped_reason"):
        return [check("mps.daemons", "mps", "MPS daemons", SKIP, inputs.get("mps_state"), "not checked", state["skipped_reason"])]
    if inputs.get("mps_state") != "present":
        removed = state.get("removed") or []
        if removed or state.get("changed"):
            return [check("mps.daemons", "mps", "MPS daemons", FAIL, "none (mps_state absent)", text(removed),
                          "MPS daemons or their settings are left over; the mps role removes them")]
        return [check("mps.daemons", "mps", "MPS daemons", PASS, "none (mps_state absent)", "none",
                      "no MPS daemon is installed")]
    found = []
    for daemon in state.get("daemons") or []:
        found.append(_mps_daemon(daemon, inputs))
    for name in state.get("removed") or []:
        found.append(check("mps.daemon.%s" % name, "mps", "MPS daemon %s" % name, FAIL, "absent", "installed",
                           "not declared in mps_gpu_sets; the mps role removes it"))
    return found


def _mps_daemon(daemon, inputs):
    name = daemon.get("name")
    settings = "GPUs %s; active threads %s%%; pinned memory limit %s" % (
        text(daemon.get("gpus")), text(inputs.get("mps_active_thread_percentage")), text(inputs.get("mps_pinned_mem_limit")))
    action = daemon.get("action")
    check_id, title = "mps.daemon.%s" % name, "MPS daemon %s" % name
    if action in (None, "none"):
        verified = daemon.get("verified") or {}
        actual = "running; active threads %s" % text(verified.get("active_thread_percentage")) if verified else "running"
        return check(check_id, "mps", title, PASS, settings, actual, "the daemon runs with the declared settings")
    return check(check_id, "mps", title, FAIL, settings, "would be %s" % action,
                 "the daemon is not running with the declared settings")


def mig_checks(state, inputs, topology, role_error=None):
    """Each MIG-capable GPU's current and pending mode, and each declared GPU's layout."""
    found = []
    declared = inputs.get("mig_state") == "present"
    planned = {}
    if declared and ran(state):
        planned = dict((str(gpu.get("index")), gpu) for gpu in state.get("gpus") or [])
    for gpu in topology.get("gpus") or []:
        if not mig_capable(gpu):
            continue
        found.append(_mig_mode(gpu, planned.get(str(gpu.get("index")))))
    if not declared:
        found.append(check("mig.layout", "mig", "MIG layout", SKIP, "none declared", "not checked",
                           "mig_state is absent: no MIG layout is declared for this node"))
        return found
    if not ran(state):
        found.append(not_collected("mig.layout", "mig", "MIG layout", failure(state, role_error)))
        return found
    for gpu in state.get("gpus") or []:
        found.append(_mig_layout(gpu))
    return found


def _mig_mode(gpu, plan):
    index = gpu.get("index")
    current, pending = gpu.get("mig_mode"), gpu.get("mig_mode_pending")
    check_id, title = "mig.mode.gpu%s" % index, "GPU %s MIG mode" % index
    expected = ("Enabled" if plan.get("mig_enabled") else "Disabled") if plan else current
    actual = current if pending in (None, current) else "%s, %s pending" % (current, pending)
    if pending not in (None, current):
        return check(check_id, "mig", title, FAIL, expected, actual,
                     "the mode change waits for a GPU reset or a reboot; until then the GPU keeps its old mode")
    if plan and current != expected:
        return check(check_id, "mig", title, FAIL, expected, actual, "the declared MIG mode is not in effect")
    reason = "in effect, nothing pending" if plan else "in effect, nothing pending (no layout declared for this GPU)"
    return check(check_id, "mig", title, PASS, expected, actual, reason)


def _mig_layout(gpu):
    index = gpu.get("index")
    check_id, title = "mig.layout.gpu%s" % index, "GPU %s MIG layout" % index
    wanted = text(gpu.get("summary"))
    if gpu.get("reboot_required"):
        return check(check_id, "mig", title, FAIL, "declared layout", wanted,
                     "waits for a reboot: %s" % (gpu.get("reboot_reason") or "the mode change applies at boot"))
    if gpu.get("pending") or gpu.get("changed"):
        destroy, create = len(gpu.get("destroy") or []), len(gpu.get("create") or [])
        return check(check_id, "mig", title, FAIL, "declared layout",
                     "drifted: %d instance(s) to destroy, %d to create" % (destroy, create),
                     "the GPU's instances differ from the declared layout (%s)" % wanted)
    return check(check_id, "mig", title, PASS, "declared layout", wanted, "the GPU has exactly the declared instances")


def topology_checks(topology, role_error=None):
    """Whether each GPU has a known NUMA node, and whether its nearest NIC shares it."""
    gpus = topology.get("gpus") or []
    if not gpus:
        why = role_error or "no GPU topology was collected"
        verdict = FAIL if role_error else SKIP
        return [check("topology.numa_affinity", "topology", "GPU NUMA affinity", verdict, "known", "unknown", why)]
    unknown = [gpu.get("index") for gpu in gpus if not gpu.get("numa_affinity")]
    placed = ["GPU %s: node %s" % (gpu.get("index"), text(gpu.get("numa_affinity"))) for gpu in gpus if gpu.get("numa_affinity")]
    if unknown:
        found = [check("topology.numa_affinity", "topology", "GPU NUMA affinity", WARN, "known for every GPU",
                       "unknown for GPU " + text(unknown),
                       "the firmware reports no NUMA node; gpu-numa-exec cannot bind these GPUs' jobs")]
    else:
        found = [check("topology.numa_affinity", "topology", "GPU NUMA affinity", PASS, "known for every GPU",
                       "; ".join(placed), "every GPU's jobs can be bound to its NUMA node")]
    found.append(_nic_locality(topology))
    return found


def _nic_locality(topology):
    title = "GPU-NIC locality"
    if not topology.get("nics"):
        return check("topology.nic_locality", "topology", title, SKIP, "nearest NIC on the GPU's NUMA node", "no RDMA NIC",
                     "the node has no RDMA NIC")
    warnings = [warning for warning in topology.get("warnings") or [] if "NIC" in warning]
    nearest = ["GPU %s: %s" % (gpu.get("index"), text(gpu.get("nearest_nics"))) for gpu in topology.get("gpus") or []]
    if warnings:
        return check("topology.nic_locality", "topology", title, WARN, "nearest NIC on the GPU's NUMA node",
                     "; ".join(nearest), "; ".join(warnings))
    return check("topology.nic_locality", "topology", title, PASS, "nearest NIC on the GPU's NUMA node",
                 "; ".join(nearest), "GPUDirect RDMA traffic stays on each GPU's NUMA node")
