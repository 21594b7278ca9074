# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's whole audit document: every area present, in the guide's order, and stable."""

from __future__ import annotations

import json

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_checks import CHECK_KEYS
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_document import (
    SCHEMA_VERSION,
    failed_checks,
    node_checks,
    node_document,
    node_states,
    unaudited_document,
)

INPUTS = {
    "sysctl": {"sysctl_settings": {"vm.swappiness": 0}, "sysctl_disable_swap": True, "gpuops_profile": "training"},
    "thp": {"thp_enabled": "always", "thp_defrag": "defer+madvise", "thp_khugepaged_defrag": True, "thp_persist": True},
    "memlock": {"memlock_limit": "unlimited"},
    "mig": {"mig_state": "absent"},
    "mps": {"mps_state": "absent"},
}
TOPOLOGY = {
    "driver_version": "525.60.13", "cuda_version": "12.0", "nics": [], "warnings": [],
    "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "persistence_mode": "Enabled", "mig_mode": "Disabled",
              "mig_mode_pending": "Disabled", "mig_devices": [], "numa_affinity": [0], "nearest_nics": []}],
}
STATES = {
    "sysctl_settings": {"changed": False, "before": {"vm.swappiness": "0"}, "conflicts": [], "file": {"path": "/x", "changed": False}},
    "sysctl_swap": {"changed": False, "swaps": [], "fstab": None, "masks_changed": [], "zram": None},
    "persistenced": {"changed": False, "mode": "daemon", "overridden_by": []},
    "mig": {"skipped": True},
    "mps": {"changed": False, "removed": [], "daemons": []},
}


def test_every_area_is_checked_in_the_tuning_order():
    checks = node_checks(INPUTS, STATES, {"thp": "boom"}, TOPOLOGY, ["12.0", "13.0"])
    assert all(tuple(item) == CHECK_KEYS for item in checks)
    areas = []
    for item in checks:
        if item["area"] not in areas:
            areas.append(item["area"])
    assert areas == ["sysctl", "swap", "thp", "memlock", "persistence", "fabricmanager", "mig", "mps", "topology", "driver"]
    by_id = dict((item["id"], item) for item in checks)
    assert (by_id["thp.live.enabled"]["verdict"], by_id["thp.live.enabled"]["reason"]) == ("FAIL", "boom")
    assert by_id["memlock.login"]["verdict"] == "SKIP"  # its task did not run, and its role did not fail
    assert by_id["driver.cuda.13.0"]["verdict"] == "FAIL"


def test_the_document_counts_verdicts_and_holds_no_time():
    checks = node_checks(INPUTS, STATES, {}, TOPOLOGY, [])
    document = node_document("gpu-train", "training", checks, TOPOLOGY)
    assert document["schema_version"] == SCHEMA_VERSION
    assert sum(document["summary"].values()) == len(checks)
    assert document["driver"] == {"driver_version": "525.60.13", "cuda_version": "12.0"}
    assert json.dumps(document, sort_keys=True) == json.dumps(
        node_document("gpu-train", "training", node_checks(INPUTS, STATES, {}, TOPOLOGY, []), TOPOLOGY), sort_keys=True)
    assert failed_checks(document) == [item["id"] for item in checks if item["verdict"] == "FAIL"]


def test_a_node_that_could_not_be_audited_says_why():
    document = unaudited_document("gpu-x", None, "unreachable")
    assert document["error"] == "unreachable" and document["checks"] == [] and document["topology"] == {}
    assert document["summary"] == {"FAIL": 0, "WARN": 0, "PASS": 0, "SKIP": 0}


def test_the_states_come_from_the_node_calls_features_and_each_roles_first_failure():
    plan = [{"name": "sysctl_settings", "role": "sysctl"}, {"name": "swap_off", "role": "sysctl"},
            {"name": "mig_layout", "role": "mig"}, {"name": "mig_boot", "role": "mig"},
            {"name": "slurm_gres", "role": "slurm_gres"}]
    node = {"features": {"sysctl_settings": {"changed": False}, "swap_off": {"failed": True, "msg": "would not fit"},
                         "slurm_gres": {"changed": False},
                         "mig_layout": {"failed": True, "msg": "work in the way"},
                         "mig_boot": {"failed": True, "msg": "the layout did not run"}},
            "failed_features": ["swap_off", "mig_layout", "mig_boot"]}
    states, errors = node_states(node, plan)
    assert states["sysctl_settings"] == {"changed": False} and states["thp"] is None
    assert states["mig"] == node["features"]["mig_layout"] and states["slurm_gres"] == {"changed": False}
    assert errors == {"sysctl": "would not fit", "mig": "work in the way"}
    assert states["kubelet"] is None
    assert node_states({}, []) == (dict.fromkeys(states), {})
