# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A sample report folder, as the audit writes one: ``fleet.html`` and ``nodes/<node>.json``.

Five nodes, one per readiness verdict the audit gives most: an 8-GPU, 2-socket training node
with a FAIL, rows pending remap (reset) and a GPU slowed down (degraded), a 4-GPU inference node (ready), one that could not
be audited (unknown), a 4-GPU node with a link trained at x8 (degraded) and a GH200 whose row
remapping failed (replace). Topologies and GPU health come from the GPU emulator's profiles
with its health faults, judged by the audit's own assess and readiness.
"""

from __future__ import annotations

import json
import os

from ansible_collections.gpuops.hardening.plugins.plugin_utils import audit_document
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_hardware_checks import assess, readiness
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_html import render_fleet_report
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.emulated_host import emulated_facts

GENERATED_AT = "2026-12-02T09:30:00Z"

# (id, area, title, expected): the checks of the sample audit.
CHECKS = (
    ("sysctl.live.vm.swappiness", "sysctl", "vm.swappiness, live", "0"),
    ("sysctl.boot.vm.swappiness", "sysctl", "vm.swappiness, at boot", "0"),
    ("sysctl.live.kernel.numa_balancing", "sysctl", "kernel.numa_balancing, live", "0"),
    ("swap.live", "swap", "Swap in use", "none"),
    ("swap.boot", "swap", "Swap at boot", "none"),
    ("thp.enabled", "thp", "THP enabled", "always"),
    ("thp.defrag", "thp", "THP defrag", "defer+madvise"),
    ("memlock.login", "memlock", "memlock, login sessions", "unlimited"),
    ("memlock.services", "memlock", "memlock, systemd services", "unlimited"),
    ("memlock.docker", "memlock", "memlock, Docker containers", "unlimited"),
    ("persistence.mode", "persistence", "Persistence mode on every GPU", "Enabled"),
    ("mps.daemon", "mps", "MPS control daemon", "absent"),
    ("mig.layout", "mig", "MIG layout", "as declared"),
    ("numa.binding", "numa", "Every GPU has a NUMA binding", "yes"),
    ("topology.nic_locality", "topology", "Nearest NIC on the GPU's NUMA node", "yes"),
    ("driver.version", "driver", "Driver version", ">= 525.60.13 (CUDA 12.0)"),
)

# {check id: (verdict, actual, reason)} where a node differs from a clean pass.
TRAINING_FINDINGS = {
    "sysctl.live.vm.swappiness": ("FAIL", "60", "vm.swappiness is 60 < the kernel's default & > 0: cold pages of a "
                                  "training job get swapped out"),
    "sysctl.boot.vm.swappiness": ("WARN", "60", "/etc/sysctl.d/99-local.conf sets vm.swappiness=60 after the role's file"),
    "memlock.docker": ("WARN", "64 KiB", "docker.service has no LimitMEMLOCK drop-in"),
    "mps.daemon": ("SKIP", "", "MPS is not requested on this node"),
    "mig.layout": ("SKIP", "", "MIG is not requested on this node"),
}
INFERENCE_FINDINGS = {
    "thp.enabled": ("PASS", "madvise", "madvise, as the inference profile wants"),
    "mps.daemon": ("WARN", "inactive", "mps_state is present but nvidia-cuda-mps-control@0-3 is inactive"),
    "mig.layout": ("SKIP", "", "MIG is not requested on this node"),
}


# Health faults of the emulated nodes (the emulator's faults.py), by the verdict they lead to.
ROWS_PENDING_AND_SLOWDOWN = {"remapped_rows": {"3": {"uncorrectable": 1, "pending": True}},
                             "clock_reasons": {"5": ["hw_slowdown"]}}
LINK_AT_X8 = {"pcie_link": {"1": {"width": 8}}}
REMAP_FAILED = {"remapped_rows": {"0": {"uncorrectable": 9, "pending": True, "failure": True}}}


def node_document(name, profile, facts, findings):
    """The audit's document of an emulated node: the sample checks, then the hardware area and readiness."""
    topology = facts["gpu_topology"]
    checks = []
    for check_id, area, title, expected in CHECKS:
        verdict, actual, reason = findings.get(check_id, ("PASS", expected, "as expected"))
        if check_id == "thp.enabled" and profile == "inference":
            expected = "madvise"
        if check_id == "driver.version":
            actual = topology.get("driver_version")
        checks.append({"id": check_id, "area": area, "title": title, "verdict": verdict,
                       "expected": expected, "actual": actual, "reason": reason})
    hardware = assess(facts["gpu_health"])
    return audit_document.node_document(name, profile, checks + [item["check"] for item in hardware], topology,
                                        node_readiness=readiness(hardware))


def unreachable_document(name):
    """Not audited: no GPU health read, so no readiness verdict (null, with the error as its reason)."""
    return audit_document.unaudited_document(name, "training", "ssh: connect to host %s port 22: Connection timed out"
                                             % name)


def comparison(nodes):
    """A baseline taken before the swappiness fix went wrong on the training node."""
    return {"baseline": "before-thp", "saved_at": "2026-12-01T20:00:00Z", "nodes": {
        nodes[0]["node"]: {"status": "changed", "checks": [
            {"id": "sysctl.live.vm.swappiness", "title": "vm.swappiness, live",
             "before": {"verdict": "PASS", "actual": "0"}, "after": {"verdict": "FAIL", "actual": "60"}},
            {"id": "thp.defrag", "title": "THP defrag",
             "before": {"verdict": "FAIL", "actual": "madvise"}, "after": {"verdict": "PASS", "actual": "defer+madvise"}}]},
        nodes[1]["node"]: {"status": "unchanged", "checks": []},
        nodes[2]["node"]: {"status": "new", "checks": []},
        nodes[3]["node"]: {"status": "new", "checks": []},
        nodes[4]["node"]: {"status": "new", "checks": []},
        "gpu-retired-09": {"status": "gone", "checks": []},
    }}


def build(folder, work):
    """Write the sample report into folder (work: a scratch folder for the emulated hosts); returns the documents."""
    os.makedirs(os.path.join(folder, "nodes"), exist_ok=True)
    nodes = [
        node_document("gpu-train-01", "training", _facts(work, "train", "dgx_h100", ROWS_PENDING_AND_SLOWDOWN), TRAINING_FINDINGS),
        node_document("gpu-infer-02", "inference", _facts(work, "infer", "l40s_4x"), INFERENCE_FINDINGS),
        unreachable_document("gpu-old-03"),
        node_document("gpu-infer-04", "inference", _facts(work, "infer-x8", "l40s_4x", LINK_AT_X8), INFERENCE_FINDINGS),
        node_document("gpu-train-05", "training", _facts(work, "gh200", "gh200", REMAP_FAILED), {}),
    ]
    for node in nodes:
        with open(os.path.join(folder, "nodes", node["node"] + ".json"), "w", encoding="utf-8") as handle:
            json.dump(node, handle, indent=2, sort_keys=True)
    with open(os.path.join(folder, "fleet.html"), "w", encoding="utf-8") as handle:
        handle.write(render_fleet_report(nodes, comparison(nodes), generated_at=GENERATED_AT))
    return nodes


def _facts(work, name, profile, faults=None):
    path = work / name
    path.mkdir(parents=True, exist_ok=True)
    return emulated_facts(path, profile, faults)
