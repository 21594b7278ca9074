# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The healthy health readings (-q -x, --query-gpu, nvlink -s) against real captures
of a comparable driver: same element paths, same value formats."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET

from ansible_collections.gpuops.hardening.tests.unit import real_captures
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import query, single_gpu

H200_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "plugins", "module_utils", "fixtures", "h200_device_check")
A100_R535 = "telegraf_a100_sxm4_80gb_x4_mig_enabled_driver535_nvidia_smi_q_x.xml.txt"
RTX4090_R535 = "netdata_rtx4090_persistence_enabled_driver535_nvidia_smi_q_x.xml.txt"
P2000_R525 = "telegraf_quadro_p2000_persistence_enabled_driver525_nvidia_smi_q_x.xml.txt"
P100_R510 = "netdata_tesla_p100_pcie_driver510_nvidia_smi_q_x.xml.txt"
H800_R525_TEXT = "h800_8gpu_driver525_nvidia_smi_q_i0.txt"


def h200_gpu():
    with open(os.path.join(H200_DIR, "nvidia_smi_q_x.xml"), encoding="utf-8") as handle:
        text = "".join(line for line in handle if not line.startswith("#"))
    return ET.fromstring(text).find("gpu")


def capture_gpu(name):
    return ET.fromstring(real_captures.load(name)).find("gpu")


def emulated_gpu(smi, path, index="0"):
    rc, out, _err = smi(path, "-q", "-x", "-i", index)
    assert rc == 0
    return ET.fromstring(out).find("gpu")


def paths(element):
    """Tag paths below element, relative to it."""
    found = set()
    for child in element:
        found.add(child.tag)
        found |= set(child.tag + "/" + sub for sub in paths(child))
    return found


def leaves(element):
    return dict((p, (element.findtext(p) or "").strip()) for p in paths(element) if len(element.find(p)) == 0)


def test_pcie_link_info_matches_the_r535_and_r580_captures(make_state, smi):
    ours = emulated_gpu(smi, make_state("a100_8x_mig")).find("pci/pci_gpu_link_info")
    for theirs in (capture_gpu(A100_R535).find("pci/pci_gpu_link_info"), h200_gpu().find("pci/pci_gpu_link_info")):
        assert paths(ours) == paths(theirs)
    assert leaves(ours) == leaves(capture_gpu(A100_R535).find("pci/pci_gpu_link_info"))
    assert [ours.findtext("link_widths/" + w) for w in ("max_link_width", "current_link_width")] == ["16x", "16x"]


def test_clock_event_reasons_match_the_r535_and_r580_captures_with_idle_active(make_state, smi):
    ours = emulated_gpu(smi, make_state("a100_8x_mig")).find("clocks_event_reasons")
    h200 = h200_gpu().find("clocks_event_reasons")
    assert [c.tag for c in ours] == [c.tag for c in h200] == [c.tag for c in capture_gpu(RTX4090_R535).find("clocks_event_reasons")]
    # Both idle and without MIG: the idle reason alone is active.
    assert leaves(ours) == leaves(h200)
    assert ours.findtext("clocks_event_reason_gpu_idle") == "Active"


def test_an_r525_driver_prints_throttle_reasons_as_the_r525_capture(make_state, smi):
    ours = emulated_gpu(smi, make_state("dgx_h100")).find("clocks_throttle_reasons")
    theirs = capture_gpu(P2000_R525).find("clocks_throttle_reasons")
    assert ours is not None and leaves(ours) == leaves(theirs)
    assert emulated_gpu(smi, make_state("dgx_h100")).find("clocks_event_reasons") is None


def test_ecc_errors_match_the_v12_captures_enabled_and_disabled(make_state, smi):
    ours = emulated_gpu(smi, make_state("a100_8x_mig")).find("ecc_errors")
    theirs = capture_gpu(A100_R535).find("ecc_errors")
    assert leaves(ours) == leaves(theirs)
    assert set(leaves(ours).values()) == {"0"}
    off = emulated_gpu(smi, make_state("workstation_2gpu"), "1")
    assert off.findtext("ecc_mode/current_ecc") == "Disabled"
    assert leaves(off.find("ecc_errors")) == leaves(capture_gpu(RTX4090_R535).find("ecc_errors"))


def test_row_remapping_models_print_retired_pages_as_na_like_the_captures(make_state, smi):
    for profile in ("a100_8x_mig", "dgx_h100", "l40s_4x"):
        ours = emulated_gpu(smi, make_state(profile, name=profile + ".json")).find("retired_pages")
        assert leaves(ours) == leaves(capture_gpu(A100_R535).find("retired_pages")) == leaves(h200_gpu().find("retired_pages"))


def test_remapped_rows_match_the_r535_capture_and_the_h800_bank_count(make_state, smi):
    ours = emulated_gpu(smi, make_state("dgx_h100")).find("remapped_rows")
    theirs = capture_gpu(RTX4090_R535).find("remapped_rows")
    assert paths(ours) == paths(theirs)
    assert [ours.findtext(t) for t in ("remapped_row_corr", "remapped_row_unc", "remapped_row_pending", "remapped_row_failure")] == \
        ["0", "0", "No", "No"]
    h800 = real_captures.load(H800_R525_TEXT)
    assert re.search(r"Max\s+: 2560 bank\(s\)", h800)
    assert ours.findtext("row_remapper_histogram/row_remapper_histogram_max") == "2560 bank(s)"


def test_with_mig_enabled_remapped_rows_are_na_and_the_gpu_not_idle_like_the_a100_capture(make_state, smi):
    ours = emulated_gpu(smi, make_state("a100_8x_mig", lambda s: s["gpus"][0]["mig"].update(current="Enabled", pending="Enabled")))
    theirs = capture_gpu(A100_R535)
    assert ours.findtext("remapped_rows") == theirs.findtext("remapped_rows") == "N/A"
    assert leaves(ours.find("clocks_event_reasons")) == leaves(theirs.find("clocks_event_reasons"))


def test_pascal_reports_per_unit_ecc_and_retired_pages_like_the_p100_capture(make_state, smi):
    ours = emulated_gpu(smi, make_state("l40s_4x", single_gpu("Tesla P100-PCIE-16GB", "0000:04:00.0")))
    theirs = capture_gpu(P100_R510)
    assert leaves(ours.find("retired_pages")) == leaves(theirs.find("retired_pages"))
    volatile = leaves(ours.find("ecc_errors/volatile"))
    assert volatile == leaves(theirs.find("ecc_errors/volatile"))
    assert paths(ours.find("ecc_errors")) == paths(theirs.find("ecc_errors"))
    assert ours.findtext("remapped_rows") == "N/A"


def test_fabric_completes_on_the_nvswitch_hopper_node_and_is_na_elsewhere(make_state, smi):
    h800 = real_captures.load(H800_R525_TEXT)
    fabric = re.search(r"Fabric\n\s+State\s+: (.+)\n\s+Status\s+: (.+)\n", h800)
    ours = emulated_gpu(smi, make_state("dgx_h100")).find("fabric")
    assert (ours.findtext("state"), ours.findtext("status")) == fabric.groups() == ("Completed", "Success")
    pcie = emulated_gpu(smi, make_state("l40s_4x", name="l40s.json")).find("fabric")
    assert leaves(pcie) == leaves(capture_gpu(RTX4090_R535).find("fabric")) == {"state": "N/A", "status": "N/A"}


def test_query_fields_for_health_on_a_healthy_node(make_state, smi):
    path = make_state("dgx_h100")
    fields = ("pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,ecc.mode.current,"
              "ecc.errors.uncorrected.volatile.total,retired_pages.pending,remapped_rows.pending,remapped_rows.failure,"
              "clocks_event_reasons.hw_slowdown,clocks_throttle_reasons.gpu_idle,clocks_event_reasons.active,fabric.state,fabric.status")
    expected = "5, 5, 16, 16, Enabled, 0, [N/A], No, No, Not Active, Active, 0x0000000000000001, Completed, Success"
    assert query(smi, path, fields, "7") == expected
    # Same layout as the R580 capture's PCIe columns on an H200.
    with open(os.path.join(H200_DIR, "nvidia_smi_query_gpu.csv"), encoding="utf-8") as handle:
        row = [line for line in handle if not line.startswith("#")][1]
    assert row.rstrip("\n").split(", ")[-4:] == query(smi, path, fields.split(",ecc", maxsplit=1)[0]).split(", ")


def test_nvlink_status_lists_every_link_of_an_nvlink_node_and_nothing_elsewhere(make_state, smi):
    rc, out, _err = smi(make_state("dgx_h100"), "nvlink", "-s")
    lines = out.splitlines()
    assert rc == 0 and len(lines) == 8 * 19
    assert re.fullmatch(r"GPU 0: NVIDIA H100 80GB HBM3 \(UUID: GPU-[0-9a-f-]{36}\)", lines[0])
    assert lines[1:19] == ["\t Link %d: 26.562 GB/s" % link for link in range(18)]
    rc, out, _err = smi(make_state("a100_8x_mig", name="a100.json"), "nvlink", "-s", "-i", "3")
    assert rc == 0 and out.splitlines()[1:] == ["\t Link %d: 25 GB/s" % link for link in range(12)]
    # The H200 capture without NVLink: exit 0 and no output at all.
    with open(os.path.join(H200_DIR, "nvidia_smi_nvlink_s.txt"), encoding="utf-8") as handle:
        assert [line for line in handle if not line.startswith("#")] == []
    assert smi(make_state("l40s_4x", name="l40s.json"), "nvlink", "-s")[:2] == (0, "")
