# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's verdicts on persistence, MPS, MIG and locality."""

from __future__ import annotations

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_gpu_checks import (
    mig_checks,
    mps_checks,
    persistence_checks,
    topology_checks,
)


def by_id(checks):
    return dict((item["id"], item) for item in checks)


def gpu(index, **changes):
    entry = {"index": index, "name": "NVIDIA A100-SXM4-80GB", "persistence_mode": "Enabled", "mig_mode": "Disabled",
             "mig_mode_pending": "Disabled", "mig_devices": [], "numa_affinity": [index // 4], "nearest_nics": ["mlx5_%d" % index]}
    entry.update(changes)
    return entry


PERSISTENCED = {"changed": False, "mode": "daemon", "flavour": "debian", "enabled_by": "install", "overridden_by": [],
                "unmasked": None, "dropin": {"path": "/etc/x.conf", "changed": False}, "service_action": "none",
                "skipped_reason": None}


def test_persistence_per_gpu_and_the_daemon():
    checks = by_id(persistence_checks(PERSISTENCED, {"gpus": [gpu(0), gpu(1, persistence_mode="Disabled")]}))
    assert checks["persistence.gpu0"]["verdict"] == "PASS"
    assert checks["persistence.gpu1"]["verdict"] == "FAIL"
    assert checks["persistence.daemon"]["verdict"] == "PASS"
    drift = dict(PERSISTENCED, changed=True, unmasked="/etc/systemd/system/nvidia-persistenced.service", service_action="started")
    daemon = by_id(persistence_checks(drift, {"gpus": []}))["persistence.daemon"]
    assert daemon["verdict"] == "FAIL" and "masked by" in daemon["reason"] and "would be started" in daemon["reason"]
    skipped = by_id(persistence_checks(dict(PERSISTENCED, skipped_reason="no NVIDIA driver"), {}))["persistence.daemon"]
    assert skipped["verdict"] == "SKIP"


MPS_INPUTS = {"mps_state": "present", "mps_active_thread_percentage": 50, "mps_pinned_mem_limit": "8G"}


def test_mps_daemons_running_as_declared_pass_and_others_fail():
    state = {"changed": True, "skipped_reason": None, "removed": ["old"], "daemons": [
        {"name": "infer-a", "gpus": ["GPU-a"], "action": "none", "verified": {"active_thread_percentage": 50.0}},
        {"name": "infer-b", "gpus": ["GPU-b"], "action": "restarted"}]}
    checks = by_id(mps_checks(state, MPS_INPUTS))
    assert checks["mps.daemon.infer-a"]["verdict"] == "PASS"
    assert "active threads 50%" in checks["mps.daemon.infer-a"]["expected"]
    assert checks["mps.daemon.infer-b"]["verdict"] == "FAIL" and checks["mps.daemon.infer-b"]["actual"] == "would be restarted"
    assert checks["mps.daemon.old"]["verdict"] == "FAIL"


def test_mps_absent_passes_only_without_leftovers():
    absent = {"mps_state": "absent"}
    assert mps_checks({"changed": False, "removed": [], "daemons": []}, absent)[0]["verdict"] == "PASS"
    assert mps_checks({"changed": True, "removed": ["all"], "daemons": []}, absent)[0]["verdict"] == "FAIL"


def test_a_pending_mig_mode_fails():
    topology = {"gpus": [gpu(0, mig_mode="Disabled", mig_mode_pending="Enabled"), gpu(1, mig_mode="N/A", mig_mode_pending="N/A")]}
    checks = by_id(mig_checks({"skipped": True}, {"mig_state": "absent"}, topology))
    mode = checks["mig.mode.gpu0"]
    assert (mode["verdict"], mode["actual"]) == ("FAIL", "Disabled, Enabled pending")
    assert "reset or a reboot" in mode["reason"]
    assert "mig.mode.gpu1" not in checks  # not MIG-capable
    assert checks["mig.layout"]["verdict"] == "SKIP"


def test_a_declared_layout_in_place_passes_and_a_drifted_one_fails():
    topology = {"gpus": [gpu(1, mig_mode="Enabled", mig_mode_pending="Enabled"), gpu(2, mig_mode="Enabled", mig_mode_pending="Enabled")]}
    state = {"changed": True, "gpus": [
        {"index": 1, "mig_enabled": True, "pending": False, "changed": False, "summary": "MIG on, 2g.20gb x3; in place"},
        {"index": 2, "mig_enabled": True, "pending": False, "changed": True, "summary": "MIG on, 1g.10gb x7",
         "destroy": [{"id": 1}], "create": [{"profile": "1g.10gb"}, {"profile": "1g.10gb"}]}]}
    checks = by_id(mig_checks(state, {"mig_state": "present"}, topology))
    assert checks["mig.mode.gpu1"]["verdict"] == "PASS" and checks["mig.mode.gpu1"]["expected"] == "Enabled"
    assert checks["mig.layout.gpu1"]["verdict"] == "PASS"
    drift = checks["mig.layout.gpu2"]
    assert drift["verdict"] == "FAIL" and drift["actual"] == "drifted: 1 instance(s) to destroy, 2 to create"


def test_a_mig_change_waiting_for_a_reboot_or_refused_fails():
    topology = {"gpus": [gpu(3, mig_mode="Disabled", mig_mode_pending="Disabled")]}
    state = {"changed": True, "gpus": [{"index": 3, "mig_enabled": True, "pending": True, "changed": True,
                                        "reboot_required": True, "reboot_reason": "nvidia_drm holds the GPU", "summary": "x"}]}
    checks = by_id(mig_checks(state, {"mig_state": "present"}, topology))
    assert checks["mig.mode.gpu3"]["verdict"] == "FAIL"  # declared Enabled, still Disabled
    assert checks["mig.layout.gpu3"]["reason"] == "waits for a reboot: nvidia_drm holds the GPU"
    refused = mig_checks({"failed": True, "msg": "GPU 3: compute processes in the way: 4242"}, {"mig_state": "present"}, topology)
    assert by_id(refused)["mig.layout"]["verdict"] == "FAIL"
    assert "4242" in by_id(refused)["mig.layout"]["reason"]


def test_locality_verdicts():
    topology = {"gpus": [gpu(0), gpu(1)], "nics": [{"name": "mlx5_0"}], "warnings": []}
    checks = by_id(topology_checks(topology))
    assert checks["topology.numa_affinity"]["verdict"] == "PASS"
    assert checks["topology.nic_locality"]["verdict"] == "PASS"
    remote = dict(topology, warnings=["GPU 1: its nearest NIC (mlx5_1) is on another NUMA node; GPUDirect RDMA traffic crosses"])
    assert by_id(topology_checks(remote))["topology.nic_locality"]["verdict"] == "WARN"
    unknown = by_id(topology_checks({"gpus": [gpu(0, numa_affinity=[])], "nics": []}))
    assert unknown["topology.numa_affinity"]["verdict"] == "WARN"
    assert unknown["topology.nic_locality"]["verdict"] == "SKIP"
    assert topology_checks({}, role_error="nvidia-smi timed out")[0]["verdict"] == "FAIL"
