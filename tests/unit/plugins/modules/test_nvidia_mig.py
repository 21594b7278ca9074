# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvidia_mig module against the emulated nvidia-smi of an 8x A100 80GB node."""

from __future__ import annotations

from unittest import mock

import pytest
from ansible.module_utils import basic

from ansible_collections.gpuops.hardening.plugins.module_utils import nvidia_smi
from ansible_collections.gpuops.hardening.plugins.modules import nvidia_mig
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import enable_mig
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module

NVIDIA_SMI = "/usr/bin/nvidia-smi"
LAYOUT = {"3g.40gb": 1, "1g.10gb": 2}


class Node:
    def __init__(self, path):
        self.path = path
        self.calls = []
        # unit: running? (a unit not listed is not installed)
        self.units = {"nvidia-dcgm.service": True, "dcgm-exporter.service": False, "nvidia-persistenced.service": True}
        self.unit_calls = []
        self.failing_start = set()

    def smi(self, *argv):
        rc, out, err = api.run("nvidia-smi", list(argv), self.path)
        assert rc == 0, err
        return out

    def instances(self, gpu):
        """(id, profile, start) of each GPU instance on gpu."""
        listed = nvidia_smi.parse_gpu_instances(api.run("nvidia-smi", ["mig", "-lgi"], self.path)[1])
        return sorted((i["id"], i["profile"], i["start"]) for i in listed if i["gpu"] == gpu)

    def mig_uuids(self):
        return sorted(line.split("UUID: ")[1].rstrip(")") for line in self.smi("-L").splitlines() if "MIG " in line)

    def modes(self, gpu):
        row = nvidia_smi.parse_query_csv(self.smi("-i", str(gpu), "--query-gpu=mig.mode.current,mig.mode.pending",
                                                  "--format=csv"))[0]
        return row["mig.mode.current"], row["mig.mode.pending"]


@pytest.fixture
def make_node(tmp_path):
    def _make(apply="reset", mig_gpus=(0, 1)):
        state = api.new_state("a100_8x_mig")
        state["settings"]["mig_mode_apply"] = apply
        for index in mig_gpus:
            enable_mig(state, index)
        path = str(tmp_path / "state.json")
        api.write_state(state, path)
        return Node(path)

    current = {}

    def fake_run(module, argv, timeout=30, check_rc=False, data=None, environ=None):
        assert argv[0] == NVIDIA_SMI and timeout == module.params["timeout"]
        current["node"].calls.append(argv[1:])
        return api.run("nvidia-smi", argv[1:], current["node"].path)

    def make(*args, **kwargs):
        current["node"] = _make(*args, **kwargs)
        return current["node"]

    class FakeSystemctl:
        def __init__(self, module, timeout=60):
            self.module = module

        def show(self, units, properties):
            node = current["node"]
            return [{"LoadState": "loaded" if unit in node.units else "not-found",
                     "ActiveState": "active" if node.units.get(unit) else "inactive"} for unit in units]

        def try_verb(self, verb, unit):
            node = current["node"]
            node.unit_calls.append("%s %s" % (verb, unit))
            if verb == "start" and unit in node.failing_start:
                return "Job for %s failed." % unit
            node.units[unit] = verb == "start"
            return None

    with mock.patch.object(nvidia_mig, "run", fake_run), \
            mock.patch.object(nvidia_mig, "Systemctl", FakeSystemctl), \
            mock.patch.object(basic.AnsibleModule, "get_bin_path", lambda module, name, *a, **k: NVIDIA_SMI):
        yield make


def _run(check_mode=False, **args):
    return run_module(nvidia_mig.main, args, check_mode=check_mode, diff=True)


def _layouts(**gpus):
    return dict((index.lstrip("g"), {"mig_enabled": True, "mig_devices": devices}) for index, devices in gpus.items())


def test_a_layout_is_created_then_left_alone(make_node):
    node = make_node()
    result = _run(layouts=_layouts(g0=LAYOUT))
    assert not result["failed"], result["msg"]
    assert result["changed"] and result["applied"]
    assert sorted(i[1] for i in node.instances(0)) == ["1g.10gb", "1g.10gb", "3g.40gb"]
    assert node.instances(1) == []
    calls_before = len(node.calls)
    again = _run(layouts=_layouts(g0=LAYOUT))
    assert not again["changed"] and again["applied"] and again["gpus"][0]["create"] == []
    assert not [call for call in node.calls[calls_before:] if "-cgi" in call or "-dgi" in call or "-mig" in call]


def test_a_changed_layout_keeps_what_stays_and_other_gpus_are_not_touched(make_node):
    node = make_node()
    assert not _run(layouts=_layouts(g0=LAYOUT, g1={"7g.80gb": 1}))["failed"]
    before_gpu0, before_uuids = node.instances(0), node.mig_uuids()
    gpu1, calls_before = node.instances(1), len(node.calls)
    result = _run(layouts=_layouts(g0={"3g.40gb": 1, "1g.10gb": 3}, g1={"7g.80gb": 1}))
    assert not result["failed"], result["msg"]
    entry = result["gpus"][0]
    assert entry["destroy"] == [] and len(entry["keep"]) == 3 and len(entry["create"]) == 1
    assert set(before_gpu0) < set(node.instances(0))
    assert set(before_uuids) < set(node.mig_uuids())
    assert node.instances(1) == gpu1 and not result["gpus"][1]["changed"]
    assert not [call for call in node.calls[calls_before:] if call[:3] == ["mig", "-i", "1"] and "-lgi" not in call]


def test_an_instance_with_work_on_it_is_not_destroyed_unless_forced(make_node):
    node = make_node()
    assert not _run(layouts=_layouts(g0=LAYOUT))["failed"]
    three_g = next(i for i in node.instances(0) if i[1] == "3g.40gb")
    state = api.read_state(node.path)
    api.add_process(state, gpu=0, pid=4242, name="python3", used_memory_mib=512,
                    gpu_instance_id=three_g[0], compute_instance_id=0)
    api.write_state(state, node.path)
    before = node.instances(0)
    refused = _run(layouts=_layouts(g0={"1g.10gb": 7}))
    assert refused["failed"] and "pid 4242 (python3, GPU instance %d)" % three_g[0] in refused["msg"]
    assert "nothing was changed" in refused["msg"] and node.instances(0) == before
    state = api.read_state(node.path)
    state["processes"] = []
    api.write_state(state, node.path)
    forced = _run(layouts=_layouts(g0={"1g.10gb": 7}), force=True)
    assert not forced["failed"], forced["msg"]
    assert [i[1] for i in node.instances(0)] == ["1g.10gb"] * 7


@pytest.mark.parametrize("devices, fragments", [
    ({"3g.20gb": 1}, ["GPU 0 (", "unknown MIG profile 3g.20gb", "3g.40gb (ID 9)"]),
    ({"3g.40gb": 2, "2g.20gb": 1}, ["GPU 0 (", "does not fit", "2g.20gb x1, 3g.40gb x2"]),
])
def test_bad_layouts_fail_before_any_change(make_node, devices, fragments):
    node = make_node()
    calls_before = len(node.calls)
    result = _run(layouts=_layouts(g0=devices))
    assert result["failed"]
    for fragment in fragments:
        assert fragment in result["msg"]
    assert node.instances(0) == []
    assert not [call for call in node.calls[calls_before:] if "-cgi" in call or "-dgi" in call or "-mig" in call]


def test_a_pending_mode_change_is_reported_not_applied(make_node):
    node = make_node(mig_gpus=(0,))
    result = _run(layouts=_layouts(g2=LAYOUT))
    assert not result["failed"], result["msg"]
    entry = result["gpus"][0]
    assert entry["mode_change"] == "Enabled" and entry["pending"] and entry["reset_required"]
    assert not result["applied"] and any("waits for a GPU reset" in w for w in result["warnings"])
    assert node.modes(2) == ("Disabled", "Enabled")
    # The mode stays pending: the next run changes nothing and still says so.
    again = _run(layouts=_layouts(g2=LAYOUT))
    assert not again["changed"] and again["gpus"][0]["pending"] and not again["applied"]


def test_a_mode_change_that_applies_at_once_gets_its_instances_in_the_same_run(make_node):
    node = make_node(apply="immediate", mig_gpus=(0,))
    result = _run(layouts=_layouts(g3=LAYOUT))
    assert not result["failed"], result["msg"]
    assert result["applied"] and node.modes(3) == ("Enabled", "Enabled")
    assert sorted(i[1] for i in node.instances(3)) == ["1g.10gb", "1g.10gb", "3g.40gb"]


def test_mig_off_destroys_the_instances_first(make_node):
    node = make_node(apply="immediate")
    assert not _run(layouts=_layouts(g1=LAYOUT))["failed"]
    result = _run(layouts={"1": {"mig_enabled": False}})
    assert not result["failed"], result["msg"]
    assert len(result["gpus"][0]["destroy"]) == 3 and node.modes(1) == ("Disabled", "Disabled")


def test_check_mode_shows_the_plan_and_changes_nothing(make_node):
    node = make_node()
    result = _run(check_mode=True, layouts=_layouts(g0=LAYOUT))
    assert result["changed"] and not result["applied"]
    assert "create 3g.40gb at" in result["diff"][0]["after"]
    assert node.instances(0) == []


def test_a_mig_parted_config_applies_to_the_gpus_it_names(make_node):
    node = make_node()
    config = {"version": "v1", "mig-configs": {"two": [
        {"device-filter": "0x20B210DE", "devices": [1], "mig-enabled": True, "mig-devices": {"2g.20gb": 3}}]}}
    result = _run(mig_parted_config=config, mig_parted_name="two")
    assert not result["failed"], result["msg"]
    assert [entry["index"] for entry in result["gpus"]] == [1]
    assert [i[1] for i in node.instances(1)] == ["2g.20gb"] * 3 and node.instances(0) == []
    bad = _run(mig_parted_config=dict(config, version="v2"), mig_parted_name="two")
    assert bad["failed"] and "unknown version 'v2'" in bad["msg"]


def test_an_unknown_gpu_fails(make_node):
    make_node()
    result = _run(layouts=_layouts(g9=LAYOUT))
    assert result["failed"] and "GPU 9 is not on this host" in result["msg"]


def test_running_gpu_clients_stop_around_a_mode_change_and_exactly_those_start_again(make_node):
    node = make_node(apply="immediate", mig_gpus=(1,))
    clients = ["nvidia-dcgm.service", "dcgm-exporter.service", "kubelet.service", "nvidia-persistenced.service"]
    result = _run(layouts=_layouts(g0=LAYOUT), gpu_clients=clients)
    assert not result["failed"], result["msg"]
    # kubelet is not installed, dcgm-exporter was stopped before, persistenced always keeps running.
    assert result["clients_stopped"] == ["nvidia-dcgm.service"]
    assert node.unit_calls == ["stop nvidia-dcgm.service", "start nvidia-dcgm.service"]
    assert node.units == {"nvidia-dcgm.service": True, "dcgm-exporter.service": False, "nvidia-persistenced.service": True}


def test_creating_instances_alone_leaves_the_clients_running(make_node):
    node = make_node()
    assert not _run(layouts=_layouts(g0=LAYOUT))["failed"]
    assert node.unit_calls == []


def test_clients_start_again_when_the_change_fails(make_node):
    node = make_node(mig_gpus=(1,))
    state = api.read_state(node.path)
    refusal = "Unable to enable MIG Mode for GPU 00000000:07:00.0: Insufficient Permissions\n"
    state["faults"]["exit"] = {"nvidia-smi": {"rc": 3, "stderr": refusal, "match": ["-mig"]}}
    api.write_state(state, node.path)
    result = _run(layouts=_layouts(g0=LAYOUT))
    assert result["failed"] and "Insufficient Permissions" in result["msg"]
    assert node.unit_calls == ["stop nvidia-dcgm.service", "start nvidia-dcgm.service"]
    assert node.units["nvidia-dcgm.service"]


def test_a_client_that_does_not_start_again_is_named(make_node):
    node = make_node(apply="immediate", mig_gpus=(1,))
    node.failing_start.add("nvidia-dcgm.service")
    result = _run(layouts=_layouts(g0=LAYOUT))
    assert result["failed"] and "did not start again: nvidia-dcgm.service (Job for" in result["msg"]
