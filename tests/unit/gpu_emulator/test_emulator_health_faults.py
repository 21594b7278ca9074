# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each health fault shows on its GPU and leaves the others healthy."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api, installer
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import query, single_gpu


def faulted(make_state, profile, **faults):
    return make_state(profile, lambda s: s["faults"].update(faults))


def gpus(smi, path):
    rc, out, _err = smi(path, "-q", "-x")
    assert rc == 0
    return ET.fromstring(out).findall("gpu")


def test_a_link_trained_down_drops_current_gen_and_width_only(make_state, smi):
    path = faulted(make_state, "dgx_h100", pcie_link={"2": {"gen": 2, "width": 8}})
    links = [g.find("pci/pci_gpu_link_info") for g in gpus(smi, path)]
    assert [links[2].findtext("pcie_gen/" + t) for t in ("max_link_gen", "current_link_gen", "device_current_link_gen")] == ["5", "2", "2"]
    assert (links[2].findtext("link_widths/max_link_width"), links[2].findtext("link_widths/current_link_width")) == ("16x", "8x")
    assert all(link.findtext("pcie_gen/current_link_gen") == "5" for i, link in enumerate(links) if i != 2)
    fields = "pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max"
    assert (query(smi, path, fields, "2"), query(smi, path, fields, "3")) == ("2, 5, 8, 16", "5, 5, 16, 16")


def test_ecc_error_counts_show_per_period_and_in_the_totals(make_state, smi):
    counts = {"volatile": {"dram_uncorrectable": 2, "sram_correctable": 7}, "aggregate": {"dram_uncorrectable": 5}}
    path = faulted(make_state, "a100_8x_mig", ecc_errors={"1": counts})
    errors = [g.find("ecc_errors") for g in gpus(smi, path)]
    assert errors[1].findtext("volatile/dram_uncorrectable") == "2"
    assert errors[1].findtext("volatile/sram_correctable") == "7"
    assert errors[1].findtext("aggregate/dram_uncorrectable") == "5"
    assert errors[1].findtext("aggregate/sram_correctable") == "0"
    assert all(set(e.itertext()) - {"\n", "\t"} <= {"0"} or not "".join(e.itertext()).strip("\n\t0") for i, e in enumerate(errors) if i != 1)
    fields = "ecc.errors.uncorrected.volatile.total,ecc.errors.corrected.volatile.sram,ecc.errors.uncorrected.aggregate.dram"
    assert (query(smi, path, fields, "1"), query(smi, path, fields, "0")) == ("2, 7, 5", "0, 0, 0")


def test_retired_pages_on_a_page_retirement_gpu(make_state, smi):
    def edit(state):
        single_gpu("Tesla P100-PCIE-16GB", "0000:04:00.0")(state)
        state["faults"]["retired_pages"] = {"0": {"single_bit": 3, "double_bit": 1, "pending": True}}
    path = make_state("l40s_4x", edit)
    pages = gpus(smi, path)[0].find("retired_pages")
    assert [pages.findtext(p) for p in ("multiple_single_bit_retirement/retired_count", "double_bit_retirement/retired_count",
                                        "pending_blacklist", "pending_retirement")] == ["3", "1", "Yes", "Yes"]
    assert query(smi, path, "retired_pages.sbe,retired_pages.dbe,retired_pages.pending") == "3, 1, Yes"
    healthy = make_state("l40s_4x", single_gpu("Tesla P100-PCIE-16GB", "0000:04:00.0"), name="healthy.json")
    assert query(smi, healthy, "retired_pages.sbe,retired_pages.dbe,retired_pages.pending") == "0, 0, No"


def test_remapped_rows_pending_and_failed(make_state, smi):
    rows = {"5": {"correctable": 1, "uncorrectable": 2, "pending": True, "failure": True}}
    path = faulted(make_state, "dgx_h100", remapped_rows=rows)
    remapped = [g.find("remapped_rows") for g in gpus(smi, path)]
    tags = ("remapped_row_corr", "remapped_row_unc", "remapped_row_pending", "remapped_row_failure")
    assert [remapped[5].findtext(t) for t in tags] == ["1", "2", "Yes", "Yes"]
    assert all([r.findtext(t) for t in tags] == ["0", "0", "No", "No"] for i, r in enumerate(remapped) if i != 5)
    fields = "remapped_rows.sbe,remapped_rows.dbe,remapped_rows.pending,remapped_rows.failure"
    assert (query(smi, path, fields, "5"), query(smi, path, fields, "4")) == ("1, 2, Yes, Yes", "0, 0, No, No")


def test_active_clock_reasons_by_their_capture_names(make_state, smi):
    reasons = ["hw_slowdown", "hw_power_brake_slowdown", "hw_thermal_slowdown", "sw_thermal_slowdown", "sw_power_cap"]
    path = faulted(make_state, "a100_8x_mig", clock_reasons={"6": reasons})
    events = [g.find("clocks_event_reasons") for g in gpus(smi, path)]
    active = sorted(e.tag for e in events[6] if e.text == "Active")
    assert active == sorted(["clocks_event_reason_" + r for r in reasons + ["gpu_idle"]])
    assert all([e.tag for e in ev if e.text == "Active"] == ["clocks_event_reason_gpu_idle"] for i, ev in enumerate(events) if i != 6)
    fields = "clocks_event_reasons.hw_slowdown,clocks_throttle_reasons.sw_thermal_slowdown,clocks_event_reasons.active"
    # 0x1 idle | 0x4 sw power cap | 0x8 hw slowdown | 0x20 sw thermal | 0x40 hw thermal | 0x80 power brake (nvml.h)
    assert query(smi, path, fields, "6") == "Active, Active, 0x00000000000000ED"
    assert query(smi, path, fields, "0") == "Not Active, Not Active, 0x0000000000000001"


def test_an_r525_driver_names_the_same_fault_a_throttle_reason(make_state, smi):
    path = faulted(make_state, "dgx_h100", clock_reasons={"0": ["hw_slowdown"]})
    assert gpus(smi, path)[0].findtext("clocks_throttle_reasons/clocks_throttle_reason_hw_slowdown") == "Active"


def test_fabric_state_per_gpu(make_state, smi):
    path = faulted(make_state, "dgx_h100", fabric={"3": {"state": "In Progress"}, "4": {"state": "Not Started"},
                                                   "5": {"state": "Completed", "status": "Insufficient Resources"}})
    fabric = [(g.findtext("fabric/state"), g.findtext("fabric/status")) for g in gpus(smi, path)]
    assert fabric[3:6] == [("In Progress", "N/A"), ("Not Started", "N/A"), ("Completed", "Insufficient Resources")]
    assert fabric[:3] + fabric[6:] == [("Completed", "Success")] * 5
    assert query(smi, path, "fabric.state,fabric.status", "3") == "In Progress, N/A"
    bad = faulted(make_state, "dgx_h100", fabric={"0": {"state": "Broken"}})
    assert smi(bad, "-q", "-x")[0] != 0


def test_nvlink_links_down_print_inactive(make_state, smi):
    path = faulted(make_state, "dgx_h100", nvlink_down={"1": [4, 9]})
    rc, out, _err = smi(path, "nvlink", "-s")
    blocks = re.split(r"(?m)^(?=GPU \d+: )", out)[1:]
    assert rc == 0 and len(blocks) == 8
    links = blocks[1].splitlines()[1:]
    assert [line for line in links if line.endswith("<inactive>")] == ["\t Link 4: <inactive>", "\t Link 9: <inactive>"]
    assert all("<inactive>" not in block for i, block in enumerate(blocks) if i != 1)
    assert smi(path, "nvlink", "-s", "-i", "1")[1] == blocks[1]


def test_xid_events_come_out_of_the_dmesg_shim_in_the_driver_format(make_state):
    events = [{"gpu": 2, "xid": 79, "message": "GPU has fallen off the bus.", "time": 5107.644336},
              {"gpu": 2, "xid": 13, "message": "Graphics Exception", "time": 812.5, "pid": 4242, "name": "python3"}]
    path = faulted(make_state, "dgx_h100", xid=events)
    rc, out, _err = api.run("dmesg", [], path)
    bus = api.read_state(path)["gpus"][2]["pci_bus_id"][:-2].lower()
    uuid = api.read_state(path)["gpus"][2]["uuid"]
    assert rc == 0
    assert out.splitlines() == [
        "[  812.500000] NVRM: GPU at PCI:%s: %s" % (bus, uuid),
        "[  812.500000] NVRM: Xid (PCI:%s): 13, pid=4242, name=python3, Graphics Exception" % bus,
        "[ 5107.644336] NVRM: Xid (PCI:%s): 79, GPU has fallen off the bus." % bus,
    ]
    assert api.run("dmesg", [], make_state("dgx_h100", name="quiet.json"))[:2] == (0, "")
    assert api.run("dmesg", ["-T"], path)[0] == 1


def test_install_puts_the_dmesg_shim_ahead_of_the_system_one(tmp_path):
    installer.install("dgx_h100", root=str(tmp_path))
    shim = tmp_path / "usr" / "local" / "bin" / "dmesg"
    assert shim.stat().st_mode & 0o777 == 0o755
    assert "main('dmesg'" in shim.read_text(encoding="utf-8")
    assert not (tmp_path / "usr" / "bin" / "dmesg").exists()


def test_an_xid_48_prints_in_the_driver_format_without_a_process(make_state):
    """NVIDIA's Dynamic Page Retirement guide ("Visibility") gives the text of an Xid 48: a DBE detected on the GPU."""
    message = "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 1."
    path = faulted(make_state, "dgx_h100", xid=[{"gpu": 5, "xid": 48, "message": message, "time": 61.25}])
    rc, out, _err = api.run("dmesg", [], path)
    bus = api.read_state(path)["gpus"][5]["pci_bus_id"][:-2].lower()
    assert rc == 0
    assert out.splitlines()[1:] == ["[   61.250000] NVRM: Xid (PCI:%s): 48, %s" % (bus, message)]


def test_a_restricted_kernel_log_fails_as_util_linux_dmesg_does(make_state):
    path = faulted(make_state, "dgx_h100", kernel_log="restricted",
                   xid=[{"gpu": 0, "xid": 79, "message": "GPU has fallen off the bus.", "time": 1.0}])
    assert api.run("dmesg", [], path) == (1, "", "dmesg: read kernel buffer failed: Operation not permitted\n")
