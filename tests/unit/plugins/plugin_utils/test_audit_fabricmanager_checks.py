# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's Fabric Manager checks from the feature's check-mode result: converged, pending, refused, not needed."""

from __future__ import annotations

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_fabricmanager_checks import fabricmanager_checks

DROPIN = "/etc/systemd/system/nvidia-fabricmanager.service.d/90-gpuops-fabricmanager.conf"
CONVERGED = {"changed": False, "driver_version": "535.129.03", "daemon_version": "535.129.03",
             "package": "nvidia-fabricmanager-535", "package_version": "535.129.03", "installed": None,
             "dropin": {"path": DROPIN, "changed": False}, "enabled_changed": False, "service_action": "none",
             "skipped_reason": None}


def verdicts(state, role_error=None):
    return dict((item["id"], (item["verdict"], item["reason"])) for item in fabricmanager_checks(state, role_error))


def test_a_converged_node_passes_every_check():
    found = verdicts(CONVERGED)
    assert sorted(found) == ["fabricmanager.daemon", "fabricmanager.order", "fabricmanager.version"]
    assert set(verdict for verdict, dummy in found.values()) == {"PASS"}


def test_a_stopped_daemon_without_its_dropin_fails_daemon_and_order():
    state = dict(CONVERGED, changed=True, service_action="started", enabled_changed=True,
                 dropin={"path": DROPIN, "changed": True})
    found = verdicts(state)
    assert found["fabricmanager.version"][0] == "PASS"
    assert found["fabricmanager.daemon"][0] == "FAIL" and "CUDA refuses work" in found["fabricmanager.daemon"][1]
    assert found["fabricmanager.order"][0] == "FAIL" and DROPIN in found["fabricmanager.order"][1]


def test_a_refused_mismatch_fails_the_version_naming_the_package():
    msg = "Fabric Manager 535.104.05 does not match the NVIDIA driver 535.129.03: install ..."
    state = dict(CONVERGED, failed=True, msg=msg, daemon_version="535.104.05", package_version="535.104.05", dropin=None)
    found = verdicts(state, role_error=msg)
    assert found["fabricmanager.version"][0] == "FAIL"
    assert "nvidia-fabricmanager-535 at 535.129.03" in found["fabricmanager.version"][1]
    assert found["fabricmanager.daemon"] == ("FAIL", msg) and found["fabricmanager.order"] == ("FAIL", msg)


def test_a_pending_install_fails_each_check_naming_it():
    state = dict(CONVERGED, changed=True, daemon_version=None, package_version=None, dropin=None,
                 installed="nvidia-fabricmanager-535 535.129.03")
    found = fabricmanager_checks(state)
    assert all(item["verdict"] == "FAIL" and "nvidia-fabricmanager-535 535.129.03" in item["actual"] + item["reason"]
               for item in found), found


def test_a_pcie_node_is_one_skip_with_the_reason_and_a_missing_state_says_so():
    (skip,) = fabricmanager_checks(dict(CONVERGED, skipped_reason="no NVSwitch on this node"))
    assert (skip["id"], skip["verdict"], skip["reason"]) == ("fabricmanager.daemon", "SKIP", "no NVSwitch on this node")
    (missing,) = fabricmanager_checks(None)
    assert missing["verdict"] == "SKIP" and "not collected" in missing["reason"]
    (failed,) = fabricmanager_checks({"failed": True, "msg": "nvidia-smi -q -x: boom"})
    assert failed["verdict"] == "FAIL" and "boom" in failed["reason"]
