# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia_mig with compute-instance profiles, and a destroy refused by a hidden holder."""

from __future__ import annotations

from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.mig_node import mig_layouts, run_mig

# The real text nvidia-smi prints when something holds the GPU instance it was asked to destroy.
HELD = ("Unable to destroy GPU instance ID  %d from GPU  0: In use by another client\n"
        "Failed to destroy GPU instances: In use by another client\n")


def test_compute_instance_profiles_fill_a_gpu_instance_and_are_kept_when_they_match(mig_node):
    node = mig_node()
    result = run_mig(layouts=mig_layouts(g0={"1c.3g.40gb": 3, "3g.40gb": 1}))
    assert not result["failed"], result["msg"]
    assert sorted(node.compute_instances(0).values()) == [["1c.3g.40gb"] * 3, ["3g.40gb"]]
    # Compute instances other than the default one come from -cci with their profile ids, not from -C.
    assert node.ran("-cgi") == [["mig", "-i", "0", "-cgi", "9:0,9:4"]]
    by_names = dict((tuple(names), gi) for gi, names in node.compute_instances(0).items())
    assert node.ran("-cci") == [["mig", "-i", "0", "-cci", "0,0,0", "-gi", str(by_names[("1c.3g.40gb",) * 3])],
                                ["mig", "-i", "0", "-cci", "2", "-gi", str(by_names[("3g.40gb",)])]]
    uuids = node.mig_uuids()
    again = run_mig(layouts=mig_layouts(g0={"1c.3g.40gb": 3, "3g.40gb": 1}))
    assert not again["changed"] and again["applied"] and node.mig_uuids() == uuids


def test_a_gpu_instance_whose_compute_instances_differ_is_replaced_and_the_other_kept(mig_node):
    node = mig_node()
    assert not run_mig(layouts=mig_layouts(g0={"1c.3g.40gb": 3, "3g.40gb": 1}))["failed"]
    whole = next(gi for gi, names in node.compute_instances(0).items() if names == ["3g.40gb"])
    result = run_mig(layouts=mig_layouts(g0={"2c.3g.40gb": 1, "1c.3g.40gb": 1, "3g.40gb": 1}))
    assert not result["failed"], result["msg"]
    entry = result["gpus"][0]
    assert [i["id"] for i in entry["keep"]] == [whole] and len(entry["destroy"]) == 1
    assert entry["create"][0]["compute_instances"] == [{"profile": "2c.3g.40gb", "profile_id": 1},
                                                       {"profile": "1c.3g.40gb", "profile_id": 0}]
    assert sorted(node.compute_instances(0).values()) == [["1c.3g.40gb", "2c.3g.40gb"], ["3g.40gb"]]


def test_a_compute_instance_profile_the_gpu_instances_do_not_offer_is_refused_first(mig_node):
    node = mig_node()
    assert not run_mig(layouts=mig_layouts(g0={"4g.40gb": 1}))["failed"]
    before = node.instances(0)
    result = run_mig(layouts=mig_layouts(g0={"3c.4g.40gb": 1}))
    assert result["failed"] and result["msg"].endswith("; nothing was changed")
    assert "3c.4g.40gb: 4g.40gb GPU instances offer the compute instances 1c.4g.40gb, 2c.4g.40gb, 4g.40gb" in result["msg"]
    assert node.instances(0) == before


def test_a_hidden_holder_on_destroy_fails_and_the_gpu_is_put_back(mig_node):
    node = mig_node()
    assert not run_mig(layouts=mig_layouts(g0={"1g.10gb": 3}))["failed"]
    before = node.instances(0)
    held = before[1][0]

    def hold(state):
        state["faults"]["exit"] = {"nvidia-smi": {"rc": 255, "stdout": HELD % held, "match": ["-dgi", str(held)]}}
    node.edit(hold)
    result = run_mig(layouts=mig_layouts(g0={"7g.80gb": 1}))
    assert result["failed"]
    assert ("GPU 0 GPU instance %d is held by a client that is not a compute process, such as DCGM (nvidia-dcgm, "
            "dcgm-exporter), nvsm or nvidia_drm; add its service to gpu_clients or stop it" % held) in result["msg"]
    assert "nothing new was created on GPU 0" in result["msg"] and "with new UUIDs" in result["msg"]
    # The same profiles at the same placements, each with its compute instance again; no 7g.
    assert sorted((i[1], i[2]) for i in node.instances(0)) == sorted((i[1], i[2]) for i in before)
    assert sorted(node.compute_instances(0).values()) == [["1g.10gb"]] * 3
    assert [r["profile"] for r in result["gpus"][0]["recreated"]] == ["1g.10gb"]
    assert not [call for call in node.ran("-cgi") if "0:0" in call[-1]]
    assert node.units["nvidia-dcgm.service"]
