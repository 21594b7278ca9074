# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The MIG planner on the emulator's A100 and H100 tables (fixtures a100_80gb and h100 of
conftest.py, read through the emulated nvidia-smi mig -lgip / -lgipp) and on a real H100 PCIe's -lgip and -lgipp captures."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import nvidia_smi
from ansible_collections.gpuops.hardening.plugins.module_utils.mig_plan import LayoutError, gpu_profiles, plan
from ansible_collections.gpuops.hardening.tests.unit import real_captures

SLICES = 8


@pytest.fixture
def h100_real():
    return gpu_profiles(
        nvidia_smi.parse_gpu_instance_profiles(real_captures.load("h100_pcie_80gb_driver525_nvidia_smi_mig_lgip.txt")),
        nvidia_smi.parse_gpu_instance_placements(real_captures.load("h100_pcie_80gb_driver525_nvidia_smi_mig_lgipp.txt")),
        0)


def _instance(instance_id, profile, start):
    return {"id": instance_id, "profile": profile, "start": start, "uuid": "MIG-%d" % instance_id}


def _fits(profiles, result, current):
    """Every kept and created instance sits on a valid start, and none overlap."""
    used = [None] * SLICES
    placed = [(i["profile"], i["start"]) for i in result["keep"]] + [(c["profile"], c["start"]) for c in result["create"]]
    for profile, start in placed:
        assert start in profiles[profile]["starts"], (profile, start)
        for slice_ in range(start, start + profiles[profile]["size"]):
            assert used[slice_] is None, (profile, start, used)
            used[slice_] = profile
    kept_ids = [i["id"] for i in result["keep"]]
    assert sorted(kept_ids + [i["id"] for i in result["destroy"]]) == sorted(i["id"] for i in current)


def _counts(result):
    counts = {}
    for name in [i["profile"] for i in result["keep"]] + [c["profile"] for c in result["create"]]:
        counts[name] = counts.get(name, 0) + 1
    return counts


def test_placements_parse_from_the_real_capture(h100_real):
    assert h100_real["1g.10gb"] == {"id": 19, "size": 1, "starts": [0, 1, 2, 3, 4, 5, 6], "max": 7, "slices": 1}
    assert h100_real["3g.40gb"]["starts"] == [0, 4] and h100_real["7g.80gb"]["size"] == 8


def test_a_fresh_gpu_gets_the_whole_layout(h100_real):
    desired = {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}
    result = plan(h100_real, [], desired)
    assert result["keep"] == [] and result["destroy"] == []
    assert _counts(result) == desired
    _fits(h100_real, result, [])


def test_an_unchanged_layout_keeps_everything(h100):
    current = [_instance(1, "3g.40gb", 4), _instance(5, "2g.20gb", 0), _instance(9, "1g.10gb", 2), _instance(10, "1g.10gb", 3)]
    result = plan(h100, current, {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2})
    assert result == {"keep": sorted(current, key=lambda i: i["start"]), "destroy": [], "create": []}


def test_instances_the_new_layout_still_holds_are_kept(h100):
    current = [_instance(2, "3g.40gb", 0), _instance(7, "1g.10gb", 4)]
    result = plan(h100, current, {"3g.40gb": 1, "1g.10gb": 3})
    assert [i["id"] for i in result["keep"]] == [2, 7] and result["destroy"] == []
    assert sorted(c["start"] for c in result["create"]) == [5, 6]
    _fits(h100, result, current)


def test_only_the_instances_that_differ_go(h100):
    current = [_instance(2, "3g.40gb", 0), _instance(3, "2g.20gb", 4), _instance(4, "2g.20gb", 6)]
    result = plan(h100, current, {"3g.40gb": 1, "1g.10gb": 3})
    assert [i["id"] for i in result["keep"]] == [2]
    assert [i["id"] for i in result["destroy"]] == [3, 4]
    assert _counts(result) == {"3g.40gb": 1, "1g.10gb": 3}
    _fits(h100, result, current)


def test_a_kept_instance_moves_when_only_another_start_leaves_room(h100):
    # Four 1g instances need slices 0-3 (a 1g never starts at slice 7), so the 3g at 0 goes to 4.
    current = [_instance(2, "3g.40gb", 0)]
    result = plan(h100, current, {"3g.40gb": 1, "1g.10gb": 4})
    assert result["keep"] == [] and result["destroy"] == current
    assert {"profile": "3g.40gb", "profile_id": 9, "start": 4,
            "compute_instances": [{"profile": "3g.40gb", "profile_id": 2}]} in result["create"]
    _fits(h100, result, current)


def test_an_instance_in_the_way_of_a_placement_is_recreated_elsewhere(a100_80gb):
    # A 4g instance can only start at slice 0: the 1g at slice 1 must move.
    four_g = next(name for name in a100_80gb if name.startswith("4g."))
    one_g = next(name for name, p in a100_80gb.items() if name.startswith("1g.") and p["size"] == 1 and "+" not in name)
    assert a100_80gb[four_g]["starts"] == [0]
    current = [_instance(11, one_g, 1), _instance(12, one_g, 6)]
    result = plan(a100_80gb, current, {four_g: 1, one_g: 3})
    assert [i["id"] for i in result["destroy"]] == [11] and [i["id"] for i in result["keep"]] == [12]
    _fits(a100_80gb, result, current)
    assert _counts(result) == {four_g: 1, one_g: 3}


def test_a_profile_set_to_zero_destroys_its_instances(h100):
    current = [_instance(1, "7g.80gb", 0)]
    result = plan(h100, current, {"7g.80gb": 0, "1g.10gb": 7})
    assert result["keep"] == [] and result["destroy"] == current and len(result["create"]) == 7
    _fits(h100, result, current)


@pytest.mark.parametrize("desired, fragments", [
    ({"3g.40gb": 2, "1g.10gb": 1}, ["does not fit", "3g.40gb x2", "1g.10gb x1", "1g.10gb (ID 19)"]),
    ({"1g.10gb": 8}, ["1g.10gb: 8 instances asked, this GPU allows 7"]),
    ({"3g.20gb": 1}, ["unknown MIG profile 3g.20gb", "3g.40gb (ID 9)", "7g.80gb (ID 0)"]),
    ({"1g.10gb": -1}, ["count -1 is not a non-negative integer"]),
    ({"1g.10gb": True}, ["count True is not a non-negative integer"]),
])
def test_impossible_layouts_name_the_profiles(h100_real, desired, fragments):
    with pytest.raises(LayoutError) as error:
        plan(h100_real, [], desired)
    for fragment in fragments:
        assert fragment in str(error.value)


def test_the_emulator_and_the_real_h100_tables_place_alike(h100, h100_real):
    # The same GPU instance profiles start at the same slices on the emulated and the real H100.
    for name in ("1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"):
        assert (h100[name]["starts"], h100[name]["size"]) == (h100_real[name]["starts"], h100_real[name]["size"]), name
