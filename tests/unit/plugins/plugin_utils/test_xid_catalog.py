# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""xid_catalog: each code's bucket as NVIDIA's Xid catalogue gives it, and each bucket's readiness from one table.

The buckets below are written down by hand from the catalogue's "Resolution Bucket (Immediate Action)" column
(docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html).
"""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_hardware_checks import READINESS
from ansible_collections.gpuops.hardening.plugins.plugin_utils.xid_catalog import (
    APPLICATION_BUCKETS,
    BUCKETS,
    RECOVERY_ACTIONS,
    XIDS,
    judge,
    recovery_action,
)

CATALOGUE_BUCKETS = {
    13: "RESTART_APP", 31: "RESTART_APP", 43: "IGNORE", 45: "WORKFLOW_XID_45", 48: "WORKFLOW_XID_48",
    61: "CONTACT_SUPPORT", 62: "RESET_GPU", 63: "IGNORE", 64: "RESET_GPU", 68: "RESTART_APP", 69: "RESTART_APP",
    74: "WORKFLOW_NVLINK_ERR", 79: "RESTART_BM", 92: "IGNORE", 94: "RESTART_APP", 95: "RESET_GPU", 109: "RESET_GPU",
    110: "RESET_GPU", 119: "RESET_GPU", 120: "RESET_GPU", 136: "RESET_GPU", 140: "RESET_GPU", 143: "RESET_GPU",
    154: "XID_154", 155: "RESET_GPU", 156: "RESET_GPU", 158: "RESET_GPU",
}


@pytest.mark.parametrize("code, bucket", sorted(CATALOGUE_BUCKETS.items()))
def test_a_compute_node_s_xids_carry_the_catalogue_s_immediate_action(code, bucket):
    assert XIDS[code][1] == bucket


def test_every_bucket_used_has_a_readiness_and_every_readiness_is_a_verdict():
    assert set(bucket for _meaning, bucket in XIDS.values()) - {"XID_154"} <= set(BUCKETS)
    assert set(readiness for readiness, _action in BUCKETS.values()) <= set(READINESS)
    assert set(RECOVERY_ACTIONS.values()) <= set(READINESS)
    assert set(APPLICATION_BUCKETS) <= set(BUCKETS)


@pytest.mark.parametrize("bucket, readiness", [
    ("IGNORE", "ready"), ("RESTART_APP", "ready"), ("RESET_GPU", "reset"), ("WORKFLOW_XID_48", "reset"),
    ("WORKFLOW_NVLINK_ERR", "reset"), ("RESTART_BM", "reboot"), ("RESTART_VM", "reboot"),
    ("CHECK_MECHANICALS", "degraded"), ("UPDATE_SWFW", "degraded"), ("UNEXPECTED_ERR_REPORT_ISSUE", "degraded"),
    ("CONTACT_SUPPORT", "degraded"),
])
def test_each_bucket_s_readiness(bucket, readiness):
    assert BUCKETS[bucket][0] == readiness


def test_judgements_of_a_fallen_gpu_a_dbe_and_an_application_fault():
    assert judge(79)["readiness"] == "reboot" and judge(79)["action"] == "drain the node and reboot it"
    assert judge(48)["readiness"] == "reset"
    assert judge(13)["readiness"] == "ready" and judge(13)["bucket"] == "RESTART_APP"


def test_a_code_outside_the_shipped_catalogue_degrades_and_says_so():
    judgement = judge(4242)
    assert judgement["readiness"] == "degraded" and judgement["bucket"] is None
    assert judgement["meaning"] == "not in the shipped catalogue"
    assert "docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html" in judgement["action"]


@pytest.mark.parametrize("message, action, readiness", [
    ("GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)", "Node Reboot Required", "reboot"),
    ("GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)", "GPU Reset Required", "reset"),
    ("GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)", "None", "ready"),
    ("GPU recovery action changed from None to Drain P2P", None, "degraded"),  # no parentheses: not read
    ("GPU recovery action changed from 0x0 (None) to 0x9 (Something New)", None, "degraded"),
    ("", None, "degraded"),
])
def test_xid_154_takes_the_action_its_message_names(message, action, readiness):
    assert recovery_action(message) == action
    judgement = judge(154, message)
    assert judgement["readiness"] == readiness
    assert (action in judgement["action"]) if action else ("names no recovery action" in judgement["action"])
