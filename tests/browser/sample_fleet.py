# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A sample report folder, as the audit writes one: ``fleet.html`` and ``nodes/<node>.json``.

Three nodes: an 8-GPU, 2-socket training node with a FAIL, a 4-GPU inference node and one
that could not be audited. Topologies come from the GPU emulator's profiles.
"""

from __future__ import annotations

import json
import os

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_html import render_fleet_report
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.emulated_host import emulated_topology

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


def node_document(name, profile, topology, findings):
    checks = []
    for check_id, area, title, expected in CHECKS:
        verdict, actual, reason = findings.get(check_id, ("PASS", expected, "as expected"))
        if check_id == "thp.enabled" and profile == "inference":
            expected = "madvise"
        if check_id == "driver.version":
            actual = topology.get("driver_version")
        checks.append({"id": check_id, "area": area, "title": title, "verdict": verdict,
                       "expected": expected, "actual": actual, "reason": reason})
    summary = dict((verdict, sum(1 for check in checks if check["verdict"] == verdict))
                   for verdict in ("PASS", "FAIL", "WARN", "SKIP"))
    return {"schema_version": 1, "node": name, "profile": profile, "error": None, "summary": summary,
            "checks": checks, "driver": {"driver_version": topology.get("driver_version"),
                                         "cuda_version": topology.get("cuda_version")},
            "topology": topology}


def unreachable_document(name):
    return {"schema_version": 1, "node": name, "profile": "training",
            "error": "ssh: connect to host gpu-old-03 port 22: Connection timed out",
            "summary": {"PASS": 0, "FAIL": 0, "WARN": 0, "SKIP": 0}, "checks": [],
            "driver": {"driver_version": None, "cuda_version": None}, "topology": {}}


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
        "gpu-retired-09": {"status": "gone", "checks": []},
    }}


def build(folder, work):
    """Write the sample report into folder (work: a scratch folder for the emulated hosts); returns the documents."""
    os.makedirs(os.path.join(folder, "nodes"), exist_ok=True)
    nodes = [
        node_document("gpu-train-01", "training", emulated_topology(_scratch(work, "train"), "dgx_h100"), TRAINING_FINDINGS),
        node_document("gpu-infer-02", "inference", emulated_topology(_scratch(work, "infer"), "l40s_4x"), INFERENCE_FINDINGS),
        unreachable_document("gpu-old-03"),
    ]
    for node in nodes:
        with open(os.path.join(folder, "nodes", node["node"] + ".json"), "w", encoding="utf-8") as handle:
            json.dump(node, handle, indent=2, sort_keys=True)
    with open(os.path.join(folder, "fleet.html"), "w", encoding="utf-8") as handle:
        handle.write(render_fleet_report(nodes, comparison(nodes), generated_at=GENERATED_AT))
    return nodes


def _scratch(work, name):
    path = work / name
    path.mkdir(parents=True, exist_ok=True)
    return path
