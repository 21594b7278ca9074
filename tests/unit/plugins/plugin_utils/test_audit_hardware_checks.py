# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hardware area and the readiness verdict on real captures (verdicts written down by hand from each capture's
text) and on each fault as nvidia-smi writes it."""

from __future__ import annotations

import os

from ansible_collections.gpuops.hardening.plugins.module_utils.gpu_health import parse_gpu_health
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_hardware_checks import assess, readiness
from ansible_collections.gpuops.hardening.tests.unit import real_captures

H200 = os.path.join(os.path.dirname(__file__), "..", "module_utils", "fixtures", "h200_device_check",
                    "nvidia_smi_q_x.xml")


def _verdicts(findings):
    return dict((item["check"]["id"], (item["check"]["verdict"], item["readiness"])) for item in findings)


def test_the_h200_at_idle_is_ready_and_its_generation_waits_for_load():
    with open(H200, encoding="utf-8") as handle:
        findings = assess(parse_gpu_health(real_captures.body(handle.read())))
    assert _verdicts(findings) == {
        "hardware.gpu0.model": ("PASS", "ready"),
        "hardware.gpu0.pcie_width": ("PASS", "ready"),
        "hardware.gpu0.pcie_gen": ("SKIP", "ready"),  # gpu_idle Active: Gen5 of 5 proves nothing at idle
        "hardware.gpu0.ecc_uncorrectable": ("PASS", "ready"),
        "hardware.gpu0.row_remap": ("PASS", "ready"),
        "hardware.gpu0.clocks": ("PASS", "ready"),
    }  # one GPU: no fabric expected of a single H200, however its boards are built
    assert readiness(findings) == {"verdict": "ready", "reasons": []}
    generation = next(item["check"] for item in findings if item["check"]["id"] == "hardware.gpu0.pcie_gen")
    assert (generation["expected"], generation["actual"]) == ("Gen5 under load", "Gen5 at idle")
    assert generation["reason"].endswith("judged only while the GPU works; playbooks/baseline.yml judges it under "
                                         "load (its check baseline.gpu0.pcie_link_under_load)")


def test_an_a10g_at_x8_of_x16_is_degraded():
    findings = assess(parse_gpu_health(real_captures.load("telegraf_a10g_driver515_nvidia_smi_q_x.xml.txt")))
    verdicts = _verdicts(findings)
    assert verdicts["hardware.gpu0.model"] == ("SKIP", "ready")  # no spec for an A10G: generic checks
    assert verdicts["hardware.gpu0.pcie_width"] == ("WARN", "degraded")
    assert readiness(findings)["verdict"] == "degraded"
    assert readiness(findings)["reasons"][0].startswith("hardware.gpu0.pcie_width: the link trained narrower")


def test_an_rtx_4090_in_a_gen3_host_is_degraded():
    """Its device maximum is Gen4, the link's Gen3 (max_host_link_gen 3)."""
    findings = assess(parse_gpu_health(real_captures.load(
        "netdata_rtx4090_persistence_enabled_driver535_nvidia_smi_q_x.xml.txt")))
    verdicts = _verdicts(findings)
    assert verdicts["hardware.gpu0.pcie_gen"] == ("WARN", "degraded")
    assert "hardware.gpu0.ecc_uncorrectable" not in verdicts  # ECC off: no counters to judge
    assert readiness(findings)["verdict"] == "degraded"


def test_a_p100_with_three_corrected_errors_and_no_pending_page_is_ready():
    findings = assess(parse_gpu_health(real_captures.load("netdata_tesla_p100_pcie_driver510_nvidia_smi_q_x.xml.txt")))
    verdicts = _verdicts(findings)
    assert verdicts["hardware.gpu0.retired_pages"] == ("PASS", "ready")
    assert verdicts["hardware.gpu0.ecc_uncorrectable"] == ("PASS", "ready")
    assert "hardware.gpu0.row_remap" not in verdicts  # a P100 retires pages; it has no row remapper
    assert readiness(findings)["verdict"] == "ready"


def _faulty(extra, reasons="<clocks_event_reason_gpu_idle>Not Active</clocks_event_reason_gpu_idle>",
            name="NVIDIA H100 80GB HBM3", gpus=1):
    gpu = """<gpu id="00000000:1B:00.0"><product_name>%s</product_name><uuid>GPU-1</uuid>
    <pci><pci_bus_id>00000000:1B:00.0</pci_bus_id><pci_gpu_link_info>
      <pcie_gen><max_link_gen>5</max_link_gen><current_link_gen>5</current_link_gen></pcie_gen>
      <link_widths><max_link_width>16x</max_link_width><current_link_width>16x</current_link_width></link_widths>
    </pci_gpu_link_info></pci><clocks_event_reasons>%s</clocks_event_reasons>%s</gpu>""" % (name, reasons, extra)
    return assess(parse_gpu_health("<nvidia_smi_log>%s</nvidia_smi_log>" % (gpu * gpus)))


def _remaps(pending="No", failure="No"):
    return ("<remapped_rows><remapped_row_corr>0</remapped_row_corr><remapped_row_unc>1</remapped_row_unc>"
            "<remapped_row_pending>%s</remapped_row_pending><remapped_row_failure>%s</remapped_row_failure>"
            "</remapped_rows>" % (pending, failure))


def test_pending_remaps_need_a_reset_and_a_failure_a_replacement():
    assert readiness(_faulty(_remaps(pending="Yes")))["verdict"] == "reset"
    failed = _faulty(_remaps(pending="Yes", failure="Yes"))
    assert _verdicts(failed)["hardware.gpu0.row_remap_failure"] == ("FAIL", "replace")
    assert readiness(failed)["verdict"] == "replace"


def test_uncorrectable_errors_and_pending_pages_need_a_reset():
    errors = "<ecc_errors><volatile><dram_uncorrectable>2</dram_uncorrectable></volatile></ecc_errors>"
    assert _verdicts(_faulty(errors))["hardware.gpu0.ecc_uncorrectable"] == ("FAIL", "reset")
    pages = ("<retired_pages><multiple_single_bit_retirement><retired_count>2</retired_count>"
             "</multiple_single_bit_retirement><double_bit_retirement><retired_count>1</retired_count>"
             "</double_bit_retirement><pending_retirement>Yes</pending_retirement></retired_pages>")
    assert _verdicts(_faulty(pages))["hardware.gpu0.retired_pages"] == ("FAIL", "reset")
    many = pages.replace("<retired_count>2<", "<retired_count>59<")
    assert _verdicts(_faulty(many))["hardware.gpu0.retired_pages"] == ("FAIL", "replace")


def test_clocks_held_by_the_power_brake_degrade_but_a_jobs_power_cap_does_not():
    brake = _faulty("", reasons="<clocks_event_reason_hw_power_brake_slowdown>Active"
                                "</clocks_event_reason_hw_power_brake_slowdown>")
    assert _verdicts(brake)["hardware.gpu0.clocks"] == ("WARN", "degraded")
    capped = _faulty("", reasons="<clocks_event_reason_sw_power_cap>Active</clocks_event_reason_sw_power_cap>")
    assert _verdicts(capped)["hardware.gpu0.clocks"] == ("PASS", "ready")


def test_a_link_below_its_generation_under_load_is_degraded():
    assert _verdicts(_faulty(""))["hardware.gpu0.pcie_gen"] == ("PASS", "ready")
    low = assess(parse_gpu_health(
        "<nvidia_smi_log><gpu><product_name>NVIDIA H100 80GB HBM3</product_name><pci><pci_gpu_link_info><pcie_gen>"
        "<max_link_gen>5</max_link_gen><current_link_gen>2</current_link_gen></pcie_gen></pci_gpu_link_info></pci>"
        "<clocks_event_reasons><clocks_event_reason_gpu_idle>Not Active</clocks_event_reason_gpu_idle>"
        "</clocks_event_reasons></gpu></nvidia_smi_log>"))
    assert _verdicts(low)["hardware.gpu0.pcie_gen"] == ("WARN", "degraded")


def test_a_fabric_still_training_needs_fabric_manager_and_a_reset():
    training = _faulty("<fabric><state>In Progress</state><status>N/A</status></fabric>", gpus=8)
    assert _verdicts(training)["hardware.gpu7.fabric"] == ("FAIL", "reset")
    trained = _faulty("<fabric><state>Completed</state><status>Success</status></fabric>", gpus=8)
    assert _verdicts(trained)["hardware.gpu0.fabric"] == ("PASS", "ready")
    assert _verdicts(_faulty("", gpus=8))["hardware.gpu0.fabric"] == ("WARN", "degraded")
    # A 4-GPU board links its GPUs directly: no fabric to expect.
    assert "hardware.gpu0.fabric" not in _verdicts(_faulty("", gpus=4))


def test_the_worst_finding_decides_and_leads_the_reasons():
    slowdown = "<clocks_event_reason_hw_slowdown>Active</clocks_event_reason_hw_slowdown>"
    verdict = readiness(_faulty(_remaps(pending="Yes"), reasons=slowdown))
    assert verdict["verdict"] == "reset"
    assert [reason.split(":", maxsplit=1)[0] for reason in verdict["reasons"]] == [
        "hardware.gpu0.row_remap_pending", "hardware.gpu0.clocks"]
    assert readiness([], collected=False) == {"verdict": None, "reasons": ["the GPUs' health was not read"]}


def test_an_nvlink_down_degrades_and_a_full_set_passes():
    health = parse_gpu_health(
        "<nvidia_smi_log><gpu><product_name>NVIDIA H100 80GB HBM3</product_name></gpu></nvidia_smi_log>")
    health[0]["nvlink"] = {"active": list(range(17)), "inactive": [17]}
    assert _verdicts(assess(health))["hardware.gpu0.nvlink"] == ("WARN", "degraded")
    health[0]["nvlink"] = {"active": list(range(12)), "inactive": []}
    assert _verdicts(assess(health))["hardware.gpu0.nvlink"] == ("WARN", "degraded")  # an H100 SXM has 18
    health[0]["nvlink"] = {"active": list(range(18)), "inactive": []}
    assert _verdicts(assess(health))["hardware.gpu0.nvlink"] == ("PASS", "ready")


def test_an_operators_model_override_makes_a_model_known_and_judges_against_its_values():
    """The A10G the shipped specs do not know becomes known; its link still trained below its own maximum (x8 of x16).
    An H100 board whose GPUs have 16 NVLinks is held to 16, not to the shipped 18."""
    health = parse_gpu_health(real_captures.load("telegraf_a10g_driver515_nvidia_smi_q_x.xml.txt"))
    overridden = _verdicts(assess(health, {"NVIDIA A10G": {"pcie_gen": 4, "pcie_width": 16}}))
    assert overridden["hardware.gpu0.model"] == ("PASS", "ready")
    assert overridden["hardware.gpu0.pcie_width"] == ("WARN", "degraded")
    health = parse_gpu_health(
        "<nvidia_smi_log><gpu><product_name>NVIDIA H100 80GB HBM3</product_name></gpu></nvidia_smi_log>")
    health[0]["nvlink"] = {"active": list(range(16)), "inactive": []}
    assert _verdicts(assess(health))["hardware.gpu0.nvlink"] == ("WARN", "degraded")
    assert _verdicts(assess(health, {"NVIDIA H100 80GB HBM3": {"nvlinks": 16}}))["hardware.gpu0.nvlink"] == (
        "PASS", "ready")


def test_the_h200_under_load_has_its_generation_judged():
    """A real H200 at 100 % (the under-load capture): gpu_idle is not active, so Gen5 of 5 is a PASS; idle 2 s later
    (the query after the load) the reason is back, as the idle capture above shows."""
    with open(H200.replace("nvidia_smi_q_x.xml", "nvidia_smi_q_x_under_load.xml"), encoding="utf-8") as handle:
        health = parse_gpu_health(real_captures.body(handle.read()))
    assert health[0]["clock_event_reasons"] == []
    findings = assess(health)
    assert _verdicts(findings)["hardware.gpu0.pcie_gen"] == ("PASS", "ready")
    assert readiness(findings) == {"verdict": "ready", "reasons": []}
    with open(H200.replace("nvidia_smi_q_x.xml", "nvidia_smi_query_after_load.csv"), encoding="utf-8") as handle:
        assert real_captures.body(handle.read()).splitlines()[1].split(", ")[4] == "Active"
