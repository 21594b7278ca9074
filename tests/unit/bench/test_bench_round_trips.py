# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bench's round-trip counter: what counts as a task run on the node, and the JSON it writes."""

from __future__ import annotations

import importlib.util
import json
import os

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")
PLUGIN = os.path.join(ROOT, "bench", "callback_plugins", "bench_round_trips.py")


def load_plugin():
    spec = importlib.util.spec_from_file_location("bench_round_trips", PLUGIN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FakeRole:
    def __init__(self, name):
        self.name = name

    def get_name(self, include_role_fqcn=True):
        return ("gpuops.hardening." if include_role_fqcn else "") + self.name


class FakeTask:
    def __init__(self, action, role=None, name="task"):
        self.action = action
        self._role = FakeRole(role) if role else None
        self.name = name

    def get_name(self):
        return self.name


class FakeHost:
    def __init__(self, name):
        self.name = name

    def get_name(self):
        return self.name


class FakeResult:
    def __init__(self, host, task, result):
        self._host = FakeHost(host)
        self._task = task
        self._result = result


@pytest.fixture(name="written")
def written_fixture(tmp_path, monkeypatch):
    """Runs a no-op-like play through the callback; the JSON it writes."""
    path = tmp_path / "round-trips.json"
    monkeypatch.setenv("BENCH_ROUND_TRIPS_FILE", str(path))
    callback = load_plugin().CallbackModule()
    plays = [
        (FakeTask("ansible.builtin.gather_facts", name="Gathering Facts"), {"changed": False}),
        (FakeTask("ansible.builtin.validate_argument_spec", "numa_binding"), {"changed": False}),
        (FakeTask("gpuops.hardening.validate_inputs", "numa_binding"), {"changed": False}),
        (FakeTask("ansible.builtin.set_fact", "numa_binding"), {"ansible_facts": {}}),
        (FakeTask("gpuops.hardening.gpu_numa_facts", "numa_binding"), {"changed": False}),
        (FakeTask("ansible.builtin.copy", "numa_binding", "helpers"),
         {"results": [{"changed": False}, {"skipped": True}, {"changed": False}]}),
    ]
    for task, result in plays:
        callback.v2_playbook_on_task_start(task, False)
        callback.v2_runner_on_ok(FakeResult("node-1", task, result))
    callback.v2_playbook_on_task_start(FakeTask("ansible.builtin.file", "numa_binding"), False)
    callback.v2_playbook_on_stats(None)
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def test_counts_only_tasks_run_on_the_node(written):
    assert written["hosts"] == {"node-1": {
        "(play)": {"tasks": 1, "calls": 1},
        "numa_binding": {"tasks": 2, "calls": 3},
    }}


def test_times_every_task_in_order(written):
    assert [task["action"] for task in written["tasks"]] == [
        "gather_facts", "validate_argument_spec", "validate_inputs", "set_fact", "gpu_numa_facts", "copy", "file"]
    assert [task["remote_hosts"] for task in written["tasks"]] == [1, 0, 0, 0, 1, 1, 0]
    assert all(task["seconds"] >= 0 for task in written["tasks"])
