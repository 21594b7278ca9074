# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The PCIe link's generation at idle and under work: lower at idle where the real GPUs of a kind drop it, back
at its maximum while a CUDA application (a copy) runs, and capped by the pcie_link fault under load."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import query, single_gpu
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.test_emulator_health_formats import (
    P100_R510,
    RTX4090_R535,
    capture_gpu,
    emulated_gpu,
    h200_gpu,
)

LINK = "pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max"
A10G_R515 = "telegraf_a10g_driver515_nvidia_smi_q_x.xml.txt"


def link_of(gpu):
    """(current generation, max generation, idle reason) of a -q -x <gpu> element."""
    return (gpu.findtext("pci/pci_gpu_link_info/pcie_gen/current_link_gen"),
            gpu.findtext("pci/pci_gpu_link_info/pcie_gen/max_link_gen"),
            gpu.findtext("clocks_event_reasons/clocks_event_reason_gpu_idle")
            or gpu.findtext("clocks_throttle_reasons/clocks_throttle_reason_gpu_idle"))


def test_real_idle_gpus_of_the_emulated_kinds_drop_the_generation_and_keep_the_width():
    """What the emulator follows: the captures behind health._link_generation."""
    for name in (RTX4090_R535, A10G_R515):
        gpu = capture_gpu(name)
        current, highest = int(link_of(gpu)[0]), int(link_of(gpu)[1])
        assert current < highest, name
        assert gpu.findtext("performance_state") == "P8", name
    assert capture_gpu(RTX4090_R535).findtext("pci/pci_gpu_link_info/link_widths/current_link_width") == "16x"
    # A GPU that idles at P0 keeps its generation: the P100 and the project's H200.
    assert link_of(capture_gpu(P100_R510))[:2] == ("3", "3")
    assert link_of(h200_gpu()) == ("5", "5", "Active")


def test_an_idle_l40s_and_rtx_6000_ada_read_gen1_of_4_at_full_width(make_state, smi):
    path = make_state("l40s_4x")
    assert [query(smi, path, LINK, str(index)) for index in range(4)] == ["1, 4, 16, 16"] * 4
    assert link_of(emulated_gpu(smi, path)) == ("1", "4", "Active")
    assert emulated_gpu(smi, path).findtext("pci/pci_gpu_link_info/pcie_gen/device_current_link_gen") == "1"
    workstation = make_state("workstation_2gpu", name="workstation.json")
    assert query(smi, workstation, LINK) == "1, 4, 16, 16"


def test_gpus_that_keep_their_generation_at_idle_still_do(make_state, smi):
    assert query(smi, make_state("dgx_h100"), LINK) == "5, 5, 16, 16"
    assert query(smi, make_state("a100_8x_mig", name="a100.json"), LINK) == "4, 4, 16, 16"
    p100 = make_state("l40s_4x", single_gpu("Tesla P100-PCIE-16GB", "0000:04:00.0"), name="p100.json")
    assert query(smi, p100, LINK) == "3, 3, 16, 16"


def test_the_link_returns_to_its_maximum_while_a_cuda_application_runs_and_drops_after(make_state, smi, mps_env, apps):
    path = make_state("l40s_4x")
    app = apps(path, dict(mps_env, CUDA_VISIBLE_DEVICES="2"))
    assert "CUDA context on GPU 2" in app.stdout.readline()
    assert [query(smi, path, LINK, str(index)) for index in range(4)] == [
        "1, 4, 16, 16", "1, 4, 16, 16", "4, 4, 16, 16", "1, 4, 16, 16"]
    rc, out, _err = smi(path, "-q", "-x", "-i", "2")
    assert rc == 0 and link_of(ET.fromstring(out).find("gpu")) == ("4", "4", "Not Active")
    app.terminate()
    app.wait()
    assert query(smi, path, LINK, "2") == "1, 4, 16, 16"


def test_the_pcie_link_fault_caps_the_link_under_load(make_state, smi, mps_env, apps):
    path = make_state("l40s_4x", lambda state: state["faults"].update(pcie_link={"1": {"gen": 2, "width": 8}}))
    assert query(smi, path, LINK, "1") == "1, 4, 8, 16"
    app = apps(path, dict(mps_env, CUDA_VISIBLE_DEVICES="1"))
    assert "CUDA context on GPU 1" in app.stdout.readline()
    assert query(smi, path, LINK, "1") == "2, 4, 8, 16"
    app.terminate()
    app.wait()


def test_the_fault_on_a_gpu_that_keeps_its_generation_shows_at_idle_too(make_state, smi):
    path = make_state("dgx_h100", lambda state: state["faults"].update(pcie_link={"3": {"gen": 3}}))
    assert (query(smi, path, LINK, "3"), query(smi, path, LINK, "4")) == ("3, 5, 16, 16", "5, 5, 16, 16")
