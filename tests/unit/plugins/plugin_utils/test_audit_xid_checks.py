# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Xid checks of the hardware area on hand-written events, and what they do to the node's readiness."""

from __future__ import annotations

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_hardware_checks import assess, readiness

H100 = "NVIDIA H100 80GB HBM3"


def _code(xid, count=1, first=100.0, last=100.0, message="", pid=None, name=None):
    return {"xid": xid, "count": count, "first_seconds": first, "last_seconds": last, "message": message,
            "pid": pid, "name": name}


def _gpu(index, xid):
    """A healthy GPU as the gpu_health fact gives it, with its Xids ("xid": None when the log was not read)."""
    return {"index": index, "uuid": "GPU-%d" % index, "name": H100, "pci_bus_id": "00000000:%02X:00.0" % (index + 16),
            "pcie": {"gen_current": 5, "gen_max": 5, "gen_device_current": 5, "gen_device_max": 5, "gen_host_max": 5,
                     "width_current": 16, "width_max": 16},
            "ecc": {"mode_current": "Enabled", "mode_pending": "Enabled", "volatile_correctable": 0,
                    "volatile_uncorrectable": 0, "aggregate_correctable": 0, "aggregate_uncorrectable": 0,
                    "sram_threshold_exceeded": False},
            "retired_pages": {"single_bit": None, "double_bit": None, "pending": None},
            "remapped_rows": {"correctable": 0, "uncorrectable": 0, "pending": False, "failure": False},
            "clock_event_reasons_reported": True, "clock_event_reasons": [], "fabric": {"state": None, "status": None},
            "nvlink": None, "xid": xid}


READ = {"read": True, "problem": None, "unlisted": []}


def _xid_checks(health, kernel_log=None):
    findings = assess(health, kernel_log=READ if kernel_log is None else kernel_log)
    return findings, dict((item["check"]["id"], item) for item in findings if ".xid" in item["check"]["id"])


def test_no_xid_since_boot_passes():
    findings, checks = _xid_checks([_gpu(0, [])])
    assert checks["hardware.gpu0.xid"]["check"]["verdict"] == "PASS"
    assert checks["hardware.gpu0.xid"]["check"]["actual"] == "none"
    assert readiness(findings) == {"verdict": "ready", "reasons": []}


def test_a_gpu_fallen_off_the_bus_asks_for_a_reboot():
    fallen = _code(79, first=5107.644336, last=5107.644336, message="GPU has fallen off the bus.")
    findings, checks = _xid_checks([_gpu(0, []), _gpu(1, [fallen])])
    finding = checks["hardware.gpu1.xid"]
    assert (finding["check"]["verdict"], finding["readiness"]) == ("FAIL", "reboot")
    assert finding["check"]["actual"] == "Xid 79 x1, at 5107.6 s after boot"
    assert readiness(findings)["verdict"] == "reboot"
    assert readiness(findings)["reasons"] == [
        "hardware.gpu1.xid: Xid 79: the GPU has fallen off the bus: the driver cannot reach it over PCIe; action: "
        "drain the node and reboot it (reboot)"]


def test_a_double_bit_error_asks_for_a_reset():
    findings, checks = _xid_checks([_gpu(0, [_code(48, count=2, first=61.25, last=70.0)])])
    assert (checks["hardware.gpu0.xid"]["check"]["verdict"], checks["hardware.gpu0.xid"]["readiness"]) == (
        "FAIL", "reset")
    assert checks["hardware.gpu0.xid"]["check"]["actual"] == "Xid 48 x2, 61.2 s to 70.0 s after boot"
    assert readiness(findings)["verdict"] == "reset"


def test_an_application_s_fault_warns_and_leaves_the_node_ready():
    findings, checks = _xid_checks([_gpu(0, [_code(13, count=3, first=812.5, last=900.0, pid=4242, name="python3")])])
    finding = checks["hardware.gpu0.xid"]
    assert (finding["check"]["verdict"], finding["readiness"]) == ("WARN", "ready")
    assert finding["check"]["actual"] == "Xid 13 x3, 812.5 s to 900.0 s after boot, last by pid 4242 python3"
    assert "restart the application" in finding["check"]["reason"]
    assert readiness(findings) == {"verdict": "ready", "reasons": []}


def test_an_ignored_code_alone_passes():
    _findings, checks = _xid_checks([_gpu(0, [_code(63)])])
    assert (checks["hardware.gpu0.xid"]["check"]["verdict"], checks["hardware.gpu0.xid"]["readiness"]) == (
        "PASS", "ready")
    assert checks["hardware.gpu0.xid"]["check"]["actual"] == "Xid 63 x1, at 100.0 s after boot"


def test_the_worst_code_wins_and_leads_the_reason():
    findings, checks = _xid_checks([_gpu(0, [_code(13), _code(48), _code(79)])])
    reason = checks["hardware.gpu0.xid"]["check"]["reason"]
    assert checks["hardware.gpu0.xid"]["readiness"] == "reboot"
    assert reason.index("Xid 79") < reason.index("Xid 48") < reason.index("Xid 13")
    assert readiness(findings)["verdict"] == "reboot"


def test_a_code_outside_the_catalogue_degrades_and_names_the_catalogue():
    findings, checks = _xid_checks([_gpu(0, [_code(4242)])])
    finding = checks["hardware.gpu0.xid"]
    assert (finding["check"]["verdict"], finding["readiness"]) == ("WARN", "degraded")
    assert "not in the shipped catalogue" in finding["check"]["reason"]
    assert readiness(findings)["verdict"] == "degraded"


def test_xid_154_follows_the_action_the_driver_names():
    message = "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)"
    findings, _checks = _xid_checks([_gpu(0, [_code(119), _code(154, message=message)])])
    assert readiness(findings)["verdict"] == "reboot"
    assert "the driver asks: Node Reboot Required" in readiness(findings)["reasons"][0]


def test_an_unread_kernel_log_is_a_skip_with_its_reason_never_a_pass():
    problem = "dmesg failed with exit code 1: dmesg: read kernel buffer failed: Operation not permitted"
    findings, checks = _xid_checks([_gpu(0, None), _gpu(1, None)], {"read": False, "problem": problem, "unlisted": []})
    for index in (0, 1):
        finding = checks["hardware.gpu%d.xid" % index]["check"]
        assert (finding["verdict"], finding["actual"]) == ("SKIP", "unknown")
        assert problem in finding["reason"] and "unknown" in finding["reason"]
    assert readiness(findings) == {"verdict": "ready", "reasons": []}


def test_xids_of_an_address_nvidia_smi_no_longer_lists_reach_the_verdict():
    unlisted = [{"pci_bus_id": "0000:2b:00.0", "uuid": "GPU-5e0b4bd0",
                 "xid": [_code(79, message="GPU has fallen off the bus.")]}]
    findings, checks = _xid_checks([_gpu(0, [])], {"read": True, "problem": None, "unlisted": unlisted})
    finding = checks["hardware.xid.unlisted"]
    assert (finding["check"]["verdict"], finding["readiness"]) == ("FAIL", "reboot")
    assert finding["check"]["actual"] == "0000:2b:00.0 (GPU-5e0b4bd0): Xid 79 x1, at 100.0 s after boot"
    assert finding["check"]["reason"].startswith("on PCI addresses nvidia-smi does not list")
    assert readiness(findings)["verdict"] == "reboot"
    assert readiness(findings)["reasons"][0].startswith("hardware.xid.unlisted: ")


def test_without_a_kernel_log_no_xid_is_judged():
    """assess on nvidia-smi's health alone (as before the kernel log was read): no Xid check at all."""
    assert not [item for item in assess([_gpu(0, [_code(79)])]) if ".xid" in item["check"]["id"]]
