# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPUDirect readiness: each condition's verdict, the device and the fix it names, and the node's readiness."""

from __future__ import annotations

import copy

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_gpudirect_checks import assess_gpudirect
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_hardware_checks import assess, readiness


def _acs(control=0, readable=True, present=True):
    if not readable:
        return {"readable": False, "present": None, "capability": None, "control": None,
                "request_redirect": None, "completion_redirect": None}
    return {"readable": True, "present": present, "capability": 0x5F, "control": control,
            "request_redirect": bool(control & 4), "completion_redirect": bool(control & 8)}


PASSTHROUGH = {"group": "17", "type": "identity", "mode": "passthrough"}
HEALTHY = {
    "rdma_devices": ["mlx5_0"],
    "iommu_cmdline": ["intel_iommu=on", "iommu=pt"],
    "peermem": {"loaded": True, "initstate": "live", "registry": True, "clients": ["nv_mem", "nv_mem_nc"]},
    "gpus": [{"index": 0, "pci_bus_id": "0000:1b:00.0", "iommu": dict(PASSTHROUGH),
              "nic": {"name": "mlx5_0", "pci_bus_id": "0000:1d:00.0", "iommu": dict(PASSTHROUGH)},
              "bridges": [{"pci_bus_id": "0000:17:00.0", "config_bytes": 4096, "acs": _acs()},
                          {"pci_bus_id": "0000:18:10.0", "config_bytes": 4096, "acs": _acs()}]}],
}


def _by_id(gpudirect):
    return dict((item["check"]["id"], item) for item in assess_gpudirect(gpudirect))


def _changed(change):
    fact = copy.deepcopy(HEALTHY)
    change(fact)
    return _by_id(fact)


def test_a_healthy_node_passes_every_check_and_stays_ready():
    found = _by_id(HEALTHY)
    assert {key: item["check"]["verdict"] for key, item in found.items()} == {
        "hardware.gpu0.iommu": "PASS", "hardware.gpu0.acs": "PASS", "hardware.nvidia_peermem": "PASS"}
    assert readiness(list(found.values())) == {"verdict": "ready", "reasons": []}
    assert found["hardware.nvidia_peermem"]["check"]["actual"] == "loaded, registered as nv_mem"


def test_a_translating_iommu_warns_naming_the_device_the_command_line_and_the_fix():
    def translated(fact):
        fact["gpus"][0]["nic"]["iommu"] = {"group": "18", "type": "DMA-FQ", "mode": "translated"}
        fact["iommu_cmdline"] = ["intel_iommu=on"]
    item = _changed(translated)["hardware.gpu0.iommu"]
    assert item["check"]["verdict"] == "WARN" and item["readiness"] == "degraded"
    reason = item["check"]["reason"]
    assert reason.startswith("mlx5_0 (0000:1d:00.0) behind a translating IOMMU")
    assert "iommu=pt" in reason and "the command line has intel_iommu=on" in reason
    assert item["check"]["actual"] == "GPU 0 (0000:1b:00.0): identity, mlx5_0 (0000:1d:00.0): DMA-FQ"


def test_no_iommu_passes_and_an_unknown_type_is_not_a_pass():
    def off(fact):
        fact["gpus"][0]["iommu"] = fact["gpus"][0]["nic"]["iommu"] = {"group": None, "type": None, "mode": "off"}
    assert _changed(off)["hardware.gpu0.iommu"]["check"]["verdict"] == "PASS"

    def unknown(fact):
        fact["gpus"][0]["iommu"] = {"group": "3", "type": None, "mode": "unknown"}
    assert _changed(unknown)["hardware.gpu0.iommu"]["check"]["verdict"] == "SKIP"


def test_acs_redirect_on_a_bridge_warns_naming_the_bridge_and_the_fix():
    def redirect(fact):
        fact["gpus"][0]["bridges"][1]["acs"] = _acs(0x1D)
    item = _changed(redirect)["hardware.gpu0.acs"]
    assert item["check"]["verdict"] == "WARN" and item["readiness"] == "degraded"
    assert item["check"]["actual"] == "0000:18:10.0 (ReqRedir+CmpltRedir)"
    assert "setpci -s <bdf> ECAP_ACS+6.w=0" in item["check"]["reason"] and "BIOS" in item["check"]["reason"]

    def request_only(fact):
        fact["gpus"][0]["bridges"][0]["acs"] = _acs(0x04)
    assert _changed(request_only)["hardware.gpu0.acs"]["check"]["actual"] == "0000:17:00.0 (ReqRedir)"


def test_a_short_config_read_is_unknown_not_a_pass():
    def short(fact):
        fact["gpus"][0]["bridges"][0].update(config_bytes=64, acs=_acs(readable=False))
    item = _changed(short)["hardware.gpu0.acs"]
    assert item["check"]["verdict"] == "SKIP" and item["check"]["actual"] == "unknown"
    assert "0000:17:00.0 (64 bytes)" in item["check"]["reason"] and "root" in item["check"]["reason"]


def test_a_bridge_without_acs_and_a_gpu_without_a_nic():
    def no_acs(fact):
        fact["gpus"][0]["bridges"][0]["acs"] = _acs(present=False)
    assert _changed(no_acs)["hardware.gpu0.acs"]["check"]["verdict"] == "PASS"

    def no_nic(fact):
        fact["gpus"][0].update(nic=None, bridges=None)
    item = _changed(no_nic)["hardware.gpu0.acs"]
    assert item["check"]["verdict"] == "SKIP" and "no RDMA NIC" in item["check"]["reason"]


def test_peermem_missing_not_live_or_not_registered_warns():
    def missing(fact):
        fact["peermem"] = {"loaded": False, "initstate": None, "registry": True, "clients": []}
    item = _changed(missing)["hardware.nvidia_peermem"]
    assert item["check"]["verdict"] == "WARN" and item["readiness"] == "degraded"
    assert "modprobe nvidia-peermem" in item["check"]["reason"]

    def going(fact):
        fact["peermem"]["initstate"] = "going"
    assert _changed(going)["hardware.nvidia_peermem"]["check"]["verdict"] == "WARN"

    def unregistered(fact):
        fact["peermem"]["clients"] = ["amdkfd"]
    item = _changed(unregistered)["hardware.nvidia_peermem"]
    assert item["check"]["verdict"] == "WARN" and "amdkfd" in item["check"]["reason"]


def test_loaded_without_a_peer_memory_list_passes_on_the_module_s_own_init():
    def no_registry(fact):
        fact["peermem"] = {"loaded": True, "initstate": "live", "registry": False, "clients": None}
    item = _changed(no_registry)["hardware.nvidia_peermem"]
    assert item["check"]["verdict"] == "PASS" and item["check"]["actual"] == "loaded"


def test_a_node_without_rdma_devices_gets_one_skip_and_none_without_the_fact():
    found = assess_gpudirect({"rdma_devices": [], "gpus": [], "peermem": None, "iommu_cmdline": None})
    assert [(item["check"]["id"], item["check"]["verdict"]) for item in found] == [("hardware.gpudirect", "SKIP")]
    assert assess_gpudirect(None) == []


def test_the_hardware_area_folds_gpudirect_into_the_node_s_readiness():
    health = [{"index": 0, "uuid": "GPU-0", "name": "NVIDIA H100 80GB HBM3", "pci_bus_id": "00000000:1B:00.0",
               "pcie": {"gen_current": 5, "gen_max": 5, "gen_device_current": 5, "gen_device_max": 5,
                        "gen_host_max": 5, "width_current": 16, "width_max": 16},
               "ecc": {"mode_current": "Enabled", "mode_pending": "Enabled", "volatile_correctable": 0,
                       "volatile_uncorrectable": 0, "aggregate_correctable": 0, "aggregate_uncorrectable": 0,
                       "sram_threshold_exceeded": False},
               "retired_pages": {"single_bit": None, "double_bit": None, "pending": None},
               "remapped_rows": {"correctable": 0, "uncorrectable": 0, "pending": False, "failure": False},
               "clock_event_reasons_reported": True, "clock_event_reasons": [],
               "fabric": {"state": None, "status": None}, "nvlink": None}]
    fact = copy.deepcopy(HEALTHY)
    fact["peermem"]["loaded"] = False
    verdict = readiness(assess(health, None, gpudirect=fact))
    assert verdict["verdict"] == "degraded"
    assert verdict["reasons"] == ["hardware.nvidia_peermem: %s (degraded)" % _by_id(fact)[
        "hardware.nvidia_peermem"]["check"]["reason"]]
    assert not assess([], None, gpudirect=fact)
