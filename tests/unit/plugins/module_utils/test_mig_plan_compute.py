# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compute-instance profiles in the MIG planner, as mig-parted reads them, on the emulator's
A100 80GB and H100 tables (fixtures a100_80gb and h100 of conftest.py)."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils.mig_plan import LayoutError, plan, split_profile, wanted_shapes


def _gi(instance_id, profile, start, sizes):
    return {"id": instance_id, "profile": profile, "start": start,
            "compute_instances": [{"id": n, "size": size} for n, size in enumerate(sizes)]}


@pytest.mark.parametrize("name, split", [
    ("1c.3g.40gb", ("3g.40gb", 1)), ("3g.40gb", ("3g.40gb", 3)), ("7g.80gb", ("7g.80gb", 7)),
    ("1g.10gb+me", ("1g.10gb+me", 1)), ("1c.1g.10gb+me", ("1g.10gb+me", 1)), ("odd", ("odd", None)),
])
def test_names_split_as_mig_parted_parses_them(name, split):
    assert split_profile(name) == split


def test_compute_instances_fill_one_gpu_instance_before_the_next(a100_80gb, h100):
    assert wanted_shapes(a100_80gb, {"1c.3g.40gb": 3}) == {("3g.40gb", (1, 1, 1)): 1}
    assert wanted_shapes(a100_80gb, {"1c.3g.40gb": 4}) == {("3g.40gb", (1, 1, 1)): 1, ("3g.40gb", (1,)): 1}
    assert wanted_shapes(a100_80gb, {"2c.3g.40gb": 1, "1c.3g.40gb": 1}) == {("3g.40gb", (2, 1)): 1}
    # The whole GPU instance is its default compute instance, however it is spelt.
    assert wanted_shapes(a100_80gb, {"3c.3g.40gb": 1}) == wanted_shapes(a100_80gb, {"3g.40gb": 1}) == {("3g.40gb", (3,)): 1}
    assert wanted_shapes(h100, {"4c.7g.80gb": 1, "3c.7g.80gb": 1}) == {("7g.80gb", (4, 3)): 1}


def test_creation_names_each_compute_instance_with_its_profile_id(h100):
    result = plan(h100, [], {"1c.3g.40gb": 2, "1g.10gb+me": 1})
    by_profile = dict((c["profile"], c) for c in result["create"])
    assert by_profile["3g.40gb"]["compute_instances"] == [{"profile": "1c.3g.40gb", "profile_id": 0}] * 2
    assert by_profile["1g.10gb+me"]["profile_id"] == h100["1g.10gb+me"]["id"]
    assert by_profile["1g.10gb+me"]["compute_instances"] == [{"profile": "1g.10gb+me", "profile_id": 0}]


def test_a_gpu_instance_is_kept_only_with_the_compute_instances_asked(a100_80gb):
    split = _gi(1, "3g.40gb", 0, [1, 1, 1])
    whole = _gi(2, "3g.40gb", 4, [3])
    kept = plan(a100_80gb, [split, whole], {"1c.3g.40gb": 3, "3g.40gb": 1})
    assert kept["keep"] == [split, whole] and kept["destroy"] == [] and kept["create"] == []
    changed = plan(a100_80gb, [split, whole], {"3g.40gb": 2})
    assert changed["keep"] == [whole] and changed["destroy"] == [split]
    assert [(c["profile"], c["start"]) for c in changed["create"]] == [("3g.40gb", 0)]
    # A GPU instance without compute instances serves nobody: it is not kept.
    empty = _gi(3, "3g.40gb", 0, [])
    assert plan(a100_80gb, [empty], {"3g.40gb": 1})["destroy"] == [empty]


@pytest.mark.parametrize("desired, fragment", [
    ({"4c.3g.40gb": 1}, "MIG profile 4c.3g.40gb: 3g.40gb GPU instances offer the compute instances "
                        "1c.3g.40gb, 2c.3g.40gb, 3g.40gb"),
    ({"1c.3g.20gb": 1}, "unknown MIG profile 1c.3g.20gb"),
    ({"1c.7g.80gb": 8}, "MIG profile 7g.80gb: 2 instances asked, this GPU allows 1"),
    ({"1c.3g.40gb": -1}, "count -1 is not a non-negative integer"),
])
def test_bad_compute_instance_profiles_are_refused(a100_80gb, desired, fragment):
    with pytest.raises(LayoutError) as error:
        plan(a100_80gb, [], desired)
    assert fragment in str(error.value)


def test_what_the_gpu_instances_offer_decides_where_it_is_known(a100_80gb):
    # A 4g GPU instance offers no 3c (mig -lcip); without that listing only the size rules apply.
    assert wanted_shapes(a100_80gb, {"3c.4g.40gb": 1}) == {("4g.40gb", (3,)): 1}
    with pytest.raises(LayoutError) as error:
        wanted_shapes(a100_80gb, {"3c.4g.40gb": 1}, offers={"4g.40gb": {1, 2, 4}})
    assert "offer the compute instances 1c.4g.40gb, 2c.4g.40gb, 4g.40gb" in str(error.value)
