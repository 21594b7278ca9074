# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compute-instance profiles in the MIG planner, as mig-parted reads them, on the emulator's
A100 80GB and H100 tables."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import nvidia_smi
from ansible_collections.gpuops.hardening.plugins.module_utils.mig_plan import (
    LayoutError, gpu_profiles, plan, split_profile, wanted_shapes)
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import enable_mig


def _table(tmp_path, profile):
    state = api.new_state(profile)
    enable_mig(state)
    path = str(tmp_path / "state.json")
    api.write_state(state, path)
    listings = [api.run("nvidia-smi", ["mig", "-i", "0", action], path)[1] for action in ("-lgip", "-lgipp")]
    return gpu_profiles(nvidia_smi.parse_gpu_instance_profiles(listings[0]),
                        nvidia_smi.parse_gpu_instance_placements(listings[1]), 0)


@pytest.fixture
def a100(tmp_path):
    return _table(tmp_path, "a100_8x_mig")


@pytest.fixture
def h100(tmp_path):
    return _table(tmp_path, "dgx_h100")


def _gi(instance_id, profile, start, sizes):
    return {"id": instance_id, "profile": profile, "start": start,
            "compute_instances": [{"id": n, "size": size} for n, size in enumerate(sizes)]}


@pytest.mark.parametrize("name, split", [
    ("1c.3g.40gb", ("3g.40gb", 1)), ("3g.40gb", ("3g.40gb", 3)), ("7g.80gb", ("7g.80gb", 7)),
    ("1g.10gb+me", ("1g.10gb+me", 1)), ("1c.1g.10gb+me", ("1g.10gb+me", 1)), ("odd", ("odd", None)),
])
def test_names_split_as_mig_parted_parses_them(name, split):
    assert split_profile(name) == split


def test_compute_instances_fill_one_gpu_instance_before_the_next(a100, h100):
    assert wanted_shapes(a100, {"1c.3g.40gb": 3}) == {("3g.40gb", (1, 1, 1)): 1}
    assert wanted_shapes(a100, {"1c.3g.40gb": 4}) == {("3g.40gb", (1, 1, 1)): 1, ("3g.40gb", (1,)): 1}
    assert wanted_shapes(a100, {"2c.3g.40gb": 1, "1c.3g.40gb": 1}) == {("3g.40gb", (2, 1)): 1}
    # The whole GPU instance is its default compute instance, however it is spelt.
    assert wanted_shapes(a100, {"3c.3g.40gb": 1}) == wanted_shapes(a100, {"3g.40gb": 1}) == {("3g.40gb", (3,)): 1}
    assert wanted_shapes(h100, {"4c.7g.80gb": 1, "3c.7g.80gb": 1}) == {("7g.80gb", (4, 3)): 1}


def test_creation_names_each_compute_instance_with_its_profile_id(h100):
    result = plan(h100, [], {"1c.3g.40gb": 2, "1g.10gb+me": 1})
    by_profile = dict((c["profile"], c) for c in result["create"])
    assert by_profile["3g.40gb"]["compute_instances"] == [{"profile": "1c.3g.40gb", "profile_id": 0}] * 2
    assert by_profile["1g.10gb+me"]["profile_id"] == h100["1g.10gb+me"]["id"]
    assert by_profile["1g.10gb+me"]["compute_instances"] == [{"profile": "1g.10gb+me", "profile_id": 0}]


def test_a_gpu_instance_is_kept_only_with_the_compute_instances_asked(a100):
    split = _gi(1, "3g.40gb", 0, [1, 1, 1])
    whole = _gi(2, "3g.40gb", 4, [3])
    kept = plan(a100, [split, whole], {"1c.3g.40gb": 3, "3g.40gb": 1})
    assert kept["keep"] == [split, whole] and kept["destroy"] == [] and kept["create"] == []
    changed = plan(a100, [split, whole], {"3g.40gb": 2})
    assert changed["keep"] == [whole] and changed["destroy"] == [split]
    assert [(c["profile"], c["start"]) for c in changed["create"]] == [("3g.40gb", 0)]
    # A GPU instance without compute instances serves nobody: it is not kept.
    empty = _gi(3, "3g.40gb", 0, [])
    assert plan(a100, [empty], {"3g.40gb": 1})["destroy"] == [empty]


@pytest.mark.parametrize("desired, fragment", [
    ({"4c.3g.40gb": 1}, "MIG profile 4c.3g.40gb: 3g.40gb GPU instances offer the compute instances "
                        "1c.3g.40gb, 2c.3g.40gb, 3g.40gb"),
    ({"1c.3g.20gb": 1}, "unknown MIG profile 1c.3g.20gb"),
    ({"1c.7g.80gb": 8}, "MIG profile 7g.80gb: 2 instances asked, this GPU allows 1"),
    ({"1c.3g.40gb": -1}, "count -1 is not a non-negative integer"),
])
def test_bad_compute_instance_profiles_are_refused(a100, desired, fragment):
    with pytest.raises(LayoutError) as error:
        plan(a100, [], desired)
    assert fragment in str(error.value)


def test_what_the_gpu_instances_offer_decides_where_it_is_known(a100):
    # A 4g GPU instance offers no 3c (mig -lcip); without that listing only the size rules apply.
    assert wanted_shapes(a100, {"3c.4g.40gb": 1}) == {("4g.40gb", (3,)): 1}
    with pytest.raises(LayoutError) as error:
        wanted_shapes(a100, {"3c.4g.40gb": 1}, offers={"4g.40gb": {1, 2, 4}})
    assert "offer the compute instances 1c.4g.40gb, 2c.4g.40gb, 4g.40gb" in str(error.value)
