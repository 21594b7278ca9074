# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's gres.conf checks: each GPU's Cores= against what the topology facts give."""

from __future__ import annotations

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_document import node_checks
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_slurm_checks import slurm_gres_checks

INPUTS = {"slurm_gres_autodetect": "off", "slurm_gres_cgroup": True}
WANTED = [{"file": "/dev/nvidia0", "type": "h100", "cores": [0, 1, 2, 3]},
          {"file": "/dev/nvidia1", "type": "h100", "cores": [4, 5, 6, 7]}]


def _state(current, cgroup_changed=False, **extra):
    state = {"changed": False, "wanted": WANTED, "current": current, "autodetect_current": False,
             "cgroup_conf": {"path": "/etc/slurm/cgroup.conf", "changed": cgroup_changed}}
    state.update(extra)
    return state


def _verdicts(checks):
    return dict((item["id"], item["verdict"]) for item in checks)


def test_matching_cores_pass():
    checks = slurm_gres_checks(_state(list(WANTED)), INPUTS)
    assert _verdicts(checks) == {"slurm.gres.nvidia0": "PASS", "slurm.gres.nvidia1": "PASS", "slurm.cgroup": "PASS"}


def test_cpu_ids_in_place_of_core_indexes_fail_naming_both():
    # With SMT, CPU ids 0-3,8-11 written as Cores= name cores that are not the GPU's.
    current = [dict(WANTED[0], cores=[0, 1, 2, 3, 8, 9, 10, 11]), WANTED[1]]
    checks = slurm_gres_checks(_state(current, cgroup_changed=True), INPUTS)
    by_id = dict((item["id"], item) for item in checks)
    assert by_id["slurm.gres.nvidia0"]["verdict"] == "FAIL"
    assert (by_id["slurm.gres.nvidia0"]["expected"], by_id["slurm.gres.nvidia0"]["actual"]) == (
        "Cores=0-3", "Cores=0-3,8-11")
    assert "not CPU ids" in by_id["slurm.gres.nvidia0"]["reason"]
    assert by_id["slurm.cgroup"]["verdict"] == "FAIL"


def test_missing_and_duplicated_lines_fail():
    checks = slurm_gres_checks(_state([WANTED[1], WANTED[1]]), INPUTS)
    by_id = dict((item["id"], item) for item in checks)
    assert by_id["slurm.gres.nvidia0"]["actual"] == "no line"
    assert by_id["slurm.gres.nvidia1"]["actual"] == "2 lines"


def test_mig_device_lines_are_checked_by_their_files():
    mig = {"file": "/dev/nvidia0,/dev/nvidia-caps/nvidia-cap21,/dev/nvidia-caps/nvidia-cap22", "type": "a100_3g.20gb",
           "cores": [0, 1, 2, 3]}
    checks = slurm_gres_checks(_state([dict(mig, cores=[0, 1])], wanted=[mig]), INPUTS)
    by_id = dict((item["id"], item) for item in checks)
    device = by_id["slurm.gres.nvidia0+nvidia-cap21+nvidia-cap22"]
    assert device["verdict"] == "FAIL" and device["actual"] == "Cores=0-1"
    assert device["title"] == "gres.conf cores of the MIG device at %s" % mig["file"]


def test_autodetect():
    inputs = dict(INPUTS, slurm_gres_autodetect="nvml")
    assert _verdicts(slurm_gres_checks(_state([], wanted=[], autodetect_current=True), inputs))[
        "slurm.gres.autodetect"] == "PASS"
    assert _verdicts(slurm_gres_checks(_state([], wanted=[]), inputs))["slurm.gres.autodetect"] == "FAIL"


def test_nodes_outside_slurm_nodes_get_no_slurm_checks_and_a_role_failure_fails():
    assert slurm_gres_checks(None, INPUTS) == []
    assert _verdicts(slurm_gres_checks(None, INPUTS, "gres.conf not changed: GPU 0 has MIG enabled")) == {
        "slurm.gres": "FAIL"}


def test_the_node_document_places_slurm_after_topology():
    checks = node_checks({"slurm_gres": INPUTS}, {"slurm_gres": _state(list(WANTED))}, {}, {}, [])
    areas = [item["area"] for item in checks]
    assert areas.index("slurm") > areas.index("topology")
