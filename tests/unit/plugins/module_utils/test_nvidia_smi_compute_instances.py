# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_compute_instances (mig -lci) and parse_compute_instance_profiles (mig -lcip).

No real -lci or -lcip capture exists, so the layout is the emulator's (the MIG user
guide's); the real captures check that compute instances created on real GPUs read
back the same, and that the other MIG listings are never taken for these tables."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import nvidia_smi
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit import real_captures
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import single_gpu


def _smi(path, *argv):
    rc, out, err = api.run("nvidia-smi", list(argv), path)
    assert rc == 0, err
    return out


@pytest.fixture
def a100_40gb(tmp_path):
    state = api.new_state("a100_8x_mig")
    single_gpu("NVIDIA A100-SXM4-40GB", "0000:00:03.0", mig="Enabled")(state)
    path = str(tmp_path / "state.json")
    api.write_state(state, path)
    return path


@pytest.mark.parametrize("capture", ["a100_40gb_nvidia_smi_mig_cgi_9_3g20gb_C.txt"])
def test_the_compute_instances_a_real_cgi_created_read_back_from_lci(a100_40gb, capture):
    real = nvidia_smi.parse_mig_command_output(real_captures.load(capture))
    _smi(a100_40gb, *real_captures.command_of(capture).split("nvidia-smi", 1)[1].split())
    listed = nvidia_smi.parse_compute_instances(_smi(a100_40gb, "mig", "-lci"))
    assert sorted((ci["gpu"], ci["gpu_instance"], ci["id"], ci["profile"], ci["profile_id"]) for ci in listed) == sorted(
        (ci["gpu"], ci["gpu_instance"], ci["id"], ci["profile"], ci["profile_id"]) for ci in real["compute_instances"])
    assert all(ci["start"] == 0 and ci["size"] == 3 for ci in listed)


def test_split_gpu_instances_list_each_compute_instance_and_the_profiles_left(a100_40gb):
    _smi(a100_40gb, "mig", "-cgi", "9:0")
    # The larger one first: a 2c compute instance only starts at the GPU instance's first slice.
    _smi(a100_40gb, "mig", "-cci", "1,0", "-gi", "2")
    listed = nvidia_smi.parse_compute_instances(_smi(a100_40gb, "mig", "-lci"))
    assert [(ci["gpu_instance"], ci["id"], ci["profile"], ci["profile_id"], ci["start"], ci["size"]) for ci in listed] == [
        (2, 0, "2c.3g.20gb", 1, 0, 2), (2, 1, "1c.3g.20gb", 0, 2, 1)]
    offered = nvidia_smi.parse_compute_instance_profiles(_smi(a100_40gb, "mig", "-lcip", "-gi", "2"))
    assert [(p["profile"], p["profile_id"], p["default"], p["free"], p["total"]) for p in offered] == [
        ("1c.3g.20gb", 0, False, 0, 3), ("2c.3g.20gb", 1, False, 0, 1), ("3g.20gb", 2, True, 0, 1)]


@pytest.mark.parametrize("capture", ["a100_40gb_nvidia_smi_mig_lgi_2x3g20gb.txt", "a100_40gb_nvidia_smi_mig_lgip.txt",
                                     "h100_pcie_80gb_driver525_nvidia_smi_mig_lgi.txt",
                                     "h100_pcie_80gb_driver525_nvidia_smi_mig_lgipp.txt",
                                     "polaris_a100_mig_compute_instances_nvidia_smi_processes_tail.txt"])
def test_other_real_mig_listings_are_not_taken_for_compute_instances(capture):
    text = real_captures.load(capture)
    assert text.strip()
    assert nvidia_smi.parse_compute_instances(text) == []
    assert nvidia_smi.parse_compute_instance_profiles(text) == []


def test_no_compute_instances_is_an_empty_list():
    assert nvidia_smi.parse_compute_instances("No compute instances found\r\n") == []
    assert nvidia_smi.parse_compute_instance_profiles("") == []
