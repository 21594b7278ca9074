# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_health.parse_gpu_health on real `nvidia-smi -q -x` captures: every expected value below is written down by hand
from the capture's text (drivers 418 to 580), read at test time."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils.gpu_health import (
    parse_gpu_health,
    parse_nvlink_status,
    uses_nvlink,
    with_nvlinks,
)
from ansible_collections.gpuops.hardening.tests.unit import real_captures

H200 = os.path.join(os.path.dirname(__file__), "fixtures", "h200_device_check", "nvidia_smi_q_x.xml")


def _pcie(gen_current, gen_max, width_current, width_max, device_current=None, device_max=None, host_max=None):
    return {"gen_current": gen_current, "gen_max": gen_max, "gen_device_current": device_current,
            "gen_device_max": device_max, "gen_host_max": host_max, "width_current": width_current, "width_max": width_max}


def _ecc(mode, volatile=(None, None), aggregate=(None, None), sram_threshold_exceeded=None):
    return {"mode_current": mode, "mode_pending": mode, "volatile_correctable": volatile[0],
            "volatile_uncorrectable": volatile[1], "aggregate_correctable": aggregate[0],
            "aggregate_uncorrectable": aggregate[1], "sram_threshold_exceeded": sram_threshold_exceeded}


NO_PAGES = {"single_bit": None, "double_bit": None, "pending": None}
NO_REMAPPER = {"correctable": None, "uncorrectable": None, "pending": None, "failure": None}
CLEAN_REMAPPER = {"correctable": 0, "uncorrectable": 0, "pending": False, "failure": False}
NO_FABRIC = {"state": None, "status": None}

CASES = {
    # 580 on an H200: the device's own gen, no host maximum; SRAM uncorrectable split in two, all 0; a row remapper.
    "h200": (_pcie(5, 5, 16, 16, device_current=5, device_max=5), _ecc("Enabled", (0, 0), (0, 0), False), NO_PAGES,
             CLEAN_REMAPPER, ["gpu_idle"]),
    # 535 on an RTX 4090 at idle: gen 1 of 3 (host 3, device 4); ECC off, so no counters.
    "netdata_rtx4090_persistence_enabled_driver535_nvidia_smi_q_x.xml.txt": (
        _pcie(1, 3, 16, 16, device_current=1, device_max=4, host_max=3), _ecc("Disabled"), NO_PAGES, CLEAN_REMAPPER,
        ["gpu_idle"]),
    # 515 on an A10G: width 8 of 16, gen 1 of 4 at idle; the older clocks_throttle_reasons.
    "telegraf_a10g_driver515_nvidia_smi_q_x.xml.txt": (
        _pcie(1, 4, 8, 16), _ecc("Enabled", (0, 0), (0, 0)), NO_PAGES, CLEAN_REMAPPER, ["gpu_idle"]),
    # 418 on a Quadro P400: the single_bit/double_bit counters, all N/A; no remapped_rows element.
    "telegraf_quadro_p400_driver418_nvidia_smi_q_x.xml.txt": (
        _pcie(1, 3, 16, 16), _ecc(None), NO_PAGES, NO_REMAPPER, ["gpu_idle"]),
    # 510 on a P100: 3 aggregate single-bit errors, page retirement counting 0 with nothing pending.
    "netdata_tesla_p100_pcie_driver510_nvidia_smi_q_x.xml.txt": (
        _pcie(3, 3, 16, 16), _ecc("Enabled", (0, 0), (3, 0)), {"single_bit": 0, "double_bit": 0, "pending": False},
        NO_REMAPPER, ["gpu_idle"]),
    # 510 on an A100 in a VM with MIG on: volatile counters N/A, aggregate 0; remapped_rows N/A; no reason active.
    "netdata_a100_sxm4_40gb_mig_enabled_2migdevices_driver510_nvidia_smi_q_x.xml.txt": (
        _pcie(4, 4, 16, 16), _ecc("Enabled", (None, None), (0, 0)), NO_PAGES, NO_REMAPPER, []),
}


def _capture(name):
    if name == "h200":
        with open(H200, encoding="utf-8") as handle:
            return real_captures.body(handle.read())
    return real_captures.load(name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_health_fields_as_the_capture_shows_them(name):
    pcie, ecc, pages, rows, active = CASES[name]
    (gpu,) = parse_gpu_health(_capture(name))
    assert gpu["index"] == 0 and gpu["uuid"].startswith("GPU-")
    assert gpu["pcie"] == pcie
    assert gpu["ecc"] == ecc
    assert gpu["retired_pages"] == pages
    assert gpu["remapped_rows"] == rows
    assert gpu["clock_event_reasons_reported"] is True and gpu["clock_event_reasons"] == active
    assert gpu["fabric"] == NO_FABRIC


def test_every_real_capture_parses_with_one_entry_per_gpu():
    names = [name for name in os.listdir(real_captures.real_dir()) if "q_x" in name]
    assert len(names) >= 8
    for name in names:
        health = parse_gpu_health(real_captures.load(name))
        assert [gpu["index"] for gpu in health] == list(range(len(health))), name
        for gpu in health:
            assert gpu["pcie"]["width_max"] in (1, 2, 4, 8, 16), name


def test_faults_as_nvidia_smi_writes_them():
    """A GPU with its link trained down, pending remaps, the power brake on and a fabric still training."""
    text = """<?xml version="1.0" ?><nvidia_smi_log><driver_version>580.1</driver_version><gpu id="00000000:1B:00.0">
    <product_name>NVIDIA H100 80GB HBM3</product_name><uuid>GPU-1</uuid>
    <pci><pci_bus_id>00000000:1B:00.0</pci_bus_id><pci_gpu_link_info>
      <pcie_gen><max_link_gen>5</max_link_gen><current_link_gen>2</current_link_gen></pcie_gen>
      <link_widths><max_link_width>16x</max_link_width><current_link_width>8x</current_link_width></link_widths>
    </pci_gpu_link_info></pci>
    <ecc_errors><volatile><dram_uncorrectable>2</dram_uncorrectable><sram_uncorrectable_parity>1</sram_uncorrectable_parity>
    </volatile></ecc_errors>
    <remapped_rows><remapped_row_corr>1</remapped_row_corr><remapped_row_unc>3</remapped_row_unc>
      <remapped_row_pending>Yes</remapped_row_pending><remapped_row_failure>No</remapped_row_failure></remapped_rows>
    <clocks_event_reasons><clocks_event_reason_gpu_idle>Not Active</clocks_event_reason_gpu_idle>
      <clocks_event_reason_hw_slowdown>Active</clocks_event_reason_hw_slowdown>
      <clocks_event_reason_hw_power_brake_slowdown>Active</clocks_event_reason_hw_power_brake_slowdown>
    </clocks_event_reasons>
    <fabric><state>In Progress</state><status>N/A</status></fabric></gpu></nvidia_smi_log>"""
    (gpu,) = parse_gpu_health(text)
    assert (gpu["pcie"]["gen_current"], gpu["pcie"]["width_current"]) == (2, 8)
    assert gpu["ecc"]["volatile_uncorrectable"] == 3 and gpu["ecc"]["mode_current"] is None
    assert gpu["remapped_rows"] == {"correctable": 1, "uncorrectable": 3, "pending": True, "failure": False}
    assert gpu["clock_event_reasons"] == ["hw_slowdown", "hw_power_brake_slowdown"]
    assert gpu["fabric"] == {"state": "In Progress", "status": None}


def test_no_document_is_an_error():
    with pytest.raises(ValueError):
        parse_gpu_health("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")


def test_nvlink_status_per_gpu_with_a_link_down():
    text = ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)\n\t Link 0: 26.562 GB/s\n\t Link 1: <inactive>\n"
            "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n\t Link 0: 26.562 GB/s\n\t Link 1: 26.562 GB/s\n")
    assert parse_nvlink_status(text) == {0: {"active": [0], "inactive": [1]}, 1: {"active": [0, 1], "inactive": []}}


def test_a_gpu_without_nvlink_prints_nothing_and_gets_none():
    """The H200 capture: `nvlink -s` printed nothing; its `topo -m` shows no NV link, so it is not even read."""
    capture = os.path.join(os.path.dirname(H200), "nvidia_smi_nvlink_s.txt")
    with open(capture, encoding="utf-8") as handle:
        assert parse_nvlink_status(real_captures.body(handle.read())) == {}
    assert not uses_nvlink({"links": {}})
    assert uses_nvlink({"links": {"GPU0": {"GPU1": "NV18", "NIC0": "PXB"}}})
    assert with_nvlinks([{"index": 0}], {}) == [{"index": 0, "nvlink": None}]
