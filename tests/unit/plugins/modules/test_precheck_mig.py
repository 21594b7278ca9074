# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The precheck's check of a recorded nvidia_mig call on the emulated MIG node: in sync only while
no GPU differs from the layout and no GPU client waits to be started again."""

from __future__ import annotations

import json

from ansible_collections.gpuops.hardening.plugins.module_utils import mig_survey, precheck, receipts
from ansible_collections.gpuops.hardening.plugins.module_utils.unit_record import MIG_CLIENTS_STOPPED
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.mig_node import LAYOUT, mig_layouts, run_mig


def _checked(node):
    checked = precheck.check_recorded(node.root, {"nvidia_mig"})
    assert [entry["module"] for entry in checked] == ["nvidia_mig"], checked
    return checked[0]


def test_a_converged_layout_is_in_sync_and_the_check_changes_no_gpu(mig_node):
    node = mig_node()
    args = {"layouts": mig_layouts(g0=LAYOUT), "root": node.root}
    assert not run_mig(**args)["failed"]
    assert receipts.load(node.root)["nvidia_mig"]["args"] == args
    before, calls = node.mig_uuids(), len(node.calls)

    checked = _checked(node)
    assert checked["result"]["changed"] is False and not checked["result"]["failed"], checked
    assert node.mig_uuids() == before
    assert not [call for call in node.calls[calls:] if "-cgi" in call or "-dgi" in call or "-mig" in call]
    # The module reads the GPUs once, for the layouts and the plan both.
    assert node.calls[calls:].count(mig_survey.QUERY) == 1, node.calls[calls:]


def test_a_destroyed_instance_makes_the_call_go_to_the_node(mig_node):
    node = mig_node()
    assert not run_mig(layouts=mig_layouts(g0=LAYOUT))["failed"]
    gpu_instance = node.instances(0)[0][0]
    node.smi("mig", "-i", "0", "-dci", "-gi", str(gpu_instance))
    node.smi("mig", "-i", "0", "-dgi", "-gi", str(gpu_instance))
    assert _checked(node)["result"]["changed"] is True


def test_clients_left_stopped_by_a_killed_run_make_the_call_go_to_the_node(mig_node):
    node = mig_node()
    assert not run_mig(layouts=mig_layouts(g0=LAYOUT))["failed"]
    node.units["nvidia-dcgm.service"] = False
    with open(node.root + MIG_CLIENTS_STOPPED, "w", encoding="utf-8") as handle:
        json.dump({"units": ["nvidia-dcgm.service"]}, handle)
    checked = _checked(node)
    assert checked["result"]["changed"] is True and checked["result"]["clients_restarted"] == ["nvidia-dcgm.service"]
    assert node.unit_calls == [], "the check started nothing"
