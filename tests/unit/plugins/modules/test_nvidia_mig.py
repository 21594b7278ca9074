# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvidia_mig module against the emulated nvidia-smi of an 8x A100 80GB node."""

from __future__ import annotations

import subprocess
import time

import pytest

from ansible_collections.gpuops.hardening.plugins.plugin_utils import node_plan
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.mig_node import LAYOUT, mig_layouts, run_mig


def test_a_layout_is_created_then_left_alone(mig_node):
    node = mig_node()
    result = run_mig(layouts=mig_layouts(g0=LAYOUT))
    assert not result["failed"], result["msg"]
    assert result["changed"] and result["applied"]
    assert sorted(i[1] for i in node.instances(0)) == ["1g.10gb", "1g.10gb", "3g.40gb"]
    assert node.instances(1) == []
    calls_before = len(node.calls)
    again = run_mig(layouts=mig_layouts(g0=LAYOUT))
    assert not again["changed"] and again["applied"] and again["gpus"][0]["create"] == []
    assert not [call for call in node.calls[calls_before:] if "-cgi" in call or "-dgi" in call or "-mig" in call]


def test_a_changed_layout_keeps_what_stays_and_other_gpus_are_not_touched(mig_node):
    node = mig_node()
    assert not run_mig(layouts=mig_layouts(g0=LAYOUT, g1={"7g.80gb": 1}))["failed"]
    before_gpu0, before_uuids = node.instances(0), node.mig_uuids()
    gpu1, calls_before = node.instances(1), len(node.calls)
    result = run_mig(layouts=mig_layouts(g0={"3g.40gb": 1, "1g.10gb": 3}, g1={"7g.80gb": 1}))
    assert not result["failed"], result["msg"]
    entry = result["gpus"][0]
    assert entry["destroy"] == [] and len(entry["keep"]) == 3 and len(entry["create"]) == 1
    assert set(before_gpu0) < set(node.instances(0))
    assert set(before_uuids) < set(node.mig_uuids())
    assert node.instances(1) == gpu1 and not result["gpus"][1]["changed"]
    assert not [call for call in node.calls[calls_before:] if call[:3] == ["mig", "-i", "1"] and "-lgi" not in call]


def test_an_instance_with_work_on_it_is_not_destroyed_unless_forced(mig_node):
    node = mig_node()
    assert not run_mig(layouts=mig_layouts(g0=LAYOUT))["failed"]
    three_g = next(i for i in node.instances(0) if i[1] == "3g.40gb")
    state = api.read_state(node.path)
    api.add_process(state, gpu=0, pid=4242, name="python3", used_memory_mib=512,
                    gpu_instance_id=three_g[0], compute_instance_id=0)
    api.write_state(state, node.path)
    before = node.instances(0)
    refused = run_mig(layouts=mig_layouts(g0={"1g.10gb": 7}))
    assert refused["failed"] and "pid 4242 (python3, GPU instance %d)" % three_g[0] in refused["msg"]
    assert "nothing was changed" in refused["msg"] and node.instances(0) == before
    state = api.read_state(node.path)
    state["processes"] = []
    api.write_state(state, node.path)
    forced = run_mig(layouts=mig_layouts(g0={"1g.10gb": 7}), force=True)
    assert not forced["failed"], forced["msg"]
    assert [i[1] for i in node.instances(0)] == ["1g.10gb"] * 7


def test_force_ends_the_work_in_the_way_and_the_change_goes_through(mig_node):
    node = mig_node()
    assert not run_mig(layouts=mig_layouts(g0=LAYOUT))["failed"]
    three_g = next(line.split("UUID: ")[1].rstrip(")") for line in node.smi("-L").splitlines() if "MIG 3g.40gb" in line)
    app = subprocess.Popen(api.command("cuda-app", ["--seconds", "120"]), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=api.environment(node.path, {"CUDA_VISIBLE_DEVICES": three_g}))
    try:
        for _attempt in range(100):
            if any(p["pid"] == app.pid for p in api.read_state(node.path)["processes"]):
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the CUDA application did not start: %r" % (app.communicate(timeout=5),))
        refused = run_mig(layouts=mig_layouts(g0={"1g.10gb": 7}))
        assert refused["failed"] and "pid %d (gpuemu-cuda-app" % app.pid in refused["msg"]
        forced = run_mig(layouts=mig_layouts(g0={"1g.10gb": 7}), force=True)
        assert not forced["failed"], forced["msg"]
        assert forced["gpus"][0]["end_processes"] == [{"pid": app.pid, "name": "gpuemu-cuda-app"}]
        assert app.wait(timeout=10) is not None
        assert [i[1] for i in node.instances(0)] == ["1g.10gb"] * 7
    finally:
        if app.poll() is None:
            app.kill()


@pytest.mark.parametrize("devices, fragments", [
    ({"3g.20gb": 1}, ["GPU 0 (", "unknown MIG profile 3g.20gb", "3g.40gb (ID 9)"]),
    ({"3g.40gb": 2, "2g.20gb": 1}, ["GPU 0 (", "does not fit", "2g.20gb x1, 3g.40gb x2"]),
])
def test_bad_layouts_fail_before_any_change(mig_node, devices, fragments):
    node = mig_node()
    calls_before = len(node.calls)
    result = run_mig(layouts=mig_layouts(g0=devices))
    assert result["failed"]
    for fragment in fragments:
        assert fragment in result["msg"]
    assert node.instances(0) == []
    assert not [call for call in node.calls[calls_before:] if "-cgi" in call or "-dgi" in call or "-mig" in call]


def test_without_reset_a_pending_mode_change_is_reported_not_applied(mig_node):
    node = mig_node(mig_gpus=(0,))
    result = run_mig(layouts=mig_layouts(g2=LAYOUT), reset=False)
    assert not result["failed"], result["msg"]
    entry = result["gpus"][0]
    assert entry["mode_change"] == "Enabled" and entry["pending"] and entry["reset_required"]
    assert not result["applied"] and any("waits for a GPU reset" in w for w in result["warnings"])
    assert node.modes(2) == ("Disabled", "Enabled")
    # The mode stays pending: the next run changes nothing and still says so.
    again = run_mig(layouts=mig_layouts(g2=LAYOUT), reset=False)
    assert not again["changed"] and again["gpus"][0]["pending"] and not again["applied"]
    assert not again["reboot_required"] and not node.ran("-r")


def test_a_mode_change_that_applies_at_once_gets_its_instances_in_the_samerun_mig(mig_node):
    node = mig_node(apply="immediate", mig_gpus=(0,))
    result = run_mig(layouts=mig_layouts(g3=LAYOUT))
    assert not result["failed"], result["msg"]
    assert result["applied"] and node.modes(3) == ("Enabled", "Enabled")
    # The mode applied at once: no reset was needed, none ran.
    assert not result["gpus"][0]["reset"] and not node.ran("-r")
    assert sorted(i[1] for i in node.instances(3)) == ["1g.10gb", "1g.10gb", "3g.40gb"]


def test_mig_off_destroys_the_instances_first(mig_node):
    node = mig_node(apply="immediate")
    assert not run_mig(layouts=mig_layouts(g1=LAYOUT))["failed"]
    result = run_mig(layouts={"1": {"mig_enabled": False}})
    assert not result["failed"], result["msg"]
    assert len(result["gpus"][0]["destroy"]) == 3 and node.modes(1) == ("Disabled", "Disabled")


def test_check_mode_shows_the_plan_and_changes_nothing(mig_node):
    node = mig_node()
    result = run_mig(check_mode=True, layouts=mig_layouts(g0=LAYOUT))
    # The result the run would return: it would reach the layout.
    assert result["changed"] and result["applied"]
    assert "create 3g.40gb at" in result["diff"][0]["after"]
    assert node.instances(0) == []


def test_a_mig_parted_config_applies_to_the_gpus_it_names(mig_node):
    node = mig_node()
    config = {"version": "v1", "mig-configs": {"two": [
        {"device-filter": "0x20B210DE", "devices": [1], "mig-enabled": True, "mig-devices": {"2g.20gb": 3}}]}}
    result = run_mig(mig_parted_config=config, mig_parted_name="two")
    assert not result["failed"], result["msg"]
    assert [entry["index"] for entry in result["gpus"]] == [1]
    assert [i[1] for i in node.instances(1)] == ["2g.20gb"] * 3 and node.instances(0) == []
    bad = run_mig(mig_parted_config=dict(config, version="v2"), mig_parted_name="two")
    assert bad["failed"] and "unknown version 'v2'" in bad["msg"]


def test_an_unknown_gpu_fails(mig_node):
    mig_node()
    result = run_mig(layouts=mig_layouts(g9=LAYOUT))
    assert result["failed"] and "GPU 9 is not on this host" in result["msg"]


# Like every bad input, a layout the host cannot take names the variable (the role's, passed as
# layouts_variable; the validate role runs this task in check mode) or else the module's option.
@pytest.mark.parametrize("naming, label", [({"layouts_variable": "mig_layouts"}, "mig_layouts"), ({}, "layouts")])
def test_a_layout_the_host_cannot_take_names_the_variable(mig_node, naming, label):
    mig_node()
    unknown_gpu = run_mig(check_mode=True, layouts=mig_layouts(g9=LAYOUT), **naming)
    assert unknown_gpu["failed"]
    assert unknown_gpu["msg"].startswith("%s: GPU 9 is not on this host (GPUs: 0, 1, 2, 3, 4, 5, 6, 7)" % label)
    unknown_profile = run_mig(check_mode=True, layouts=mig_layouts(g0={"5g.99gb": 1}), **naming)
    assert unknown_profile["failed"]
    assert unknown_profile["msg"].startswith("%s.0: GPU 0 (" % label), unknown_profile["msg"]
    assert "unknown MIG profile 5g.99gb; allowed: " in unknown_profile["msg"]
    assert "3g.40gb (ID 9)" in unknown_profile["msg"] and unknown_profile["msg"].endswith("; nothing was changed")


def test_the_mig_role_names_its_variable_to_the_module():
    inputs = {"mig_state": "present", "mig_parted_file": "", "mig_parted_config": "", "mig_layouts": {"0": LAYOUT},
              "mig_force": False, "mig_reset": False, "mig_timeout": 600, "mig_gpu_clients": None,
              "mig_boot_service": False}
    variables = {"__mig_unit": "u", "__mig_script": "/s", "__mig_record": "/r", "__mig_library": "/l"}
    layout = node_plan.mig_features(inputs, variables, None)[0]
    assert layout["engine"] == "nvidia_mig" and layout["args"]["layouts_variable"] == "mig_layouts"


def test_running_gpu_clients_stop_around_a_mode_change_and_exactly_those_start_again(mig_node):
    node = mig_node(apply="immediate", mig_gpus=(1,))
    clients = ["nvidia-dcgm.service", "dcgm-exporter.service", "kubelet.service", "nvidia-persistenced.service"]
    result = run_mig(layouts=mig_layouts(g0=LAYOUT), gpu_clients=clients)
    assert not result["failed"], result["msg"]
    # kubelet is not installed, dcgm-exporter was stopped before, persistenced always keeps running.
    assert result["clients_stopped"] == ["nvidia-dcgm.service"]
    assert node.unit_calls == ["stop nvidia-dcgm.service", "start nvidia-dcgm.service"]
    assert node.units == {"nvidia-dcgm.service": True, "dcgm-exporter.service": False, "nvidia-persistenced.service": True}


def test_creating_instances_alone_leaves_the_clients_running(mig_node):
    node = mig_node()
    assert not run_mig(layouts=mig_layouts(g0=LAYOUT))["failed"]
    assert node.unit_calls == []


def test_clients_start_again_when_the_change_fails(mig_node):
    node = mig_node(mig_gpus=(1,))
    state = api.read_state(node.path)
    refusal = "Unable to enable MIG Mode for GPU 00000000:07:00.0: Insufficient Permissions\n"
    state["faults"]["exit"] = {"nvidia-smi": {"rc": 3, "stderr": refusal, "match": ["-mig"]}}
    api.write_state(state, node.path)
    result = run_mig(layouts=mig_layouts(g0=LAYOUT))
    assert result["failed"] and "Insufficient Permissions" in result["msg"]
    assert node.unit_calls == ["stop nvidia-dcgm.service", "start nvidia-dcgm.service"]
    assert node.units["nvidia-dcgm.service"]


def test_a_client_that_does_not_start_again_is_named(mig_node):
    node = mig_node(apply="immediate", mig_gpus=(1,))
    node.failing_start.add("nvidia-dcgm.service")
    result = run_mig(layouts=mig_layouts(g0=LAYOUT))
    assert result["failed"] and "did not start again: nvidia-dcgm.service (Job for" in result["msg"]
