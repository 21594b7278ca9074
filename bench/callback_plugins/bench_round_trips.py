# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Counts, per host and role, the tasks that ran on the node, and times every task (for `make bench`).

A task counts as a round trip on a host when it ran there: not skipped, not an
action that the controller does alone. A loop counts once as a task, and once per
item that ran as a module call. Each task's wall time is from its start to the next
task's start (all hosts). Written as JSON to $BENCH_ROUND_TRIPS_FILE at the end.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: bench_round_trips
type: aggregate
short_description: Round trips per host and role, and per-task wall time, for the benchmark
description:
  - Writes the counts and timings as JSON to the file named by E(BENCH_ROUND_TRIPS_FILE).
requirements:
  - E(BENCH_ROUND_TRIPS_FILE) set
"""

import json
import os
import time

from ansible.plugins.callback import CallbackBase

# Actions that never reach the node: their work happens in the controller's action plugin.
CONTROLLER_ACTIONS = frozenset((
    "set_fact", "assert", "debug", "fail", "meta", "include_tasks", "import_tasks", "include_role",
    "import_role", "include_vars", "add_host", "group_by", "set_stats", "pause", "validate_inputs",
    "validate_argument_spec",
))
NO_ROLE = "(play)"


def short_action(action):
    """ansible.builtin.copy -> copy; gpuops.hardening.validate_inputs -> validate_inputs."""
    return action.rsplit(".", 1)[-1]


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "bench_round_trips"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super(CallbackModule, self).__init__()
        self._hosts = {}
        self._tasks = []
        self._current = None

    def _close_current(self):
        if self._current is not None:
            self._current["seconds"] = time.monotonic() - self._current.pop("started")
            self._tasks.append(self._current)
            self._current = None

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._close_current()
        role = task._role.get_name(include_role_fqcn=False) if task._role else NO_ROLE
        self._current = {"role": role, "name": task.get_name(), "action": short_action(task.action),
                         "remote_hosts": 0, "started": time.monotonic()}

    def v2_playbook_on_handler_task_start(self, task):
        self.v2_playbook_on_task_start(task, False)

    def _count(self, result):
        task = result._task
        if short_action(task.action) in CONTROLLER_ACTIONS:
            return
        role = task._role.get_name(include_role_fqcn=False) if task._role else NO_ROLE
        items = result._result.get("results")
        calls = len([item for item in items if not item.get("skipped")]) if isinstance(items, list) else 1
        if not calls:
            return
        counts = self._hosts.setdefault(result._host.get_name(), {}).setdefault(role, {"tasks": 0, "calls": 0})
        counts["tasks"] += 1
        counts["calls"] += calls
        if self._current is not None:
            self._current["remote_hosts"] += 1

    def v2_runner_on_ok(self, result):
        self._count(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._count(result)

    def v2_playbook_on_stats(self, stats):
        self._close_current()
        path = os.environ.get("BENCH_ROUND_TRIPS_FILE")
        if path:
            with open(path, "w", encoding="utf-8") as handle:
                json.dump({"hosts": self._hosts, "tasks": self._tasks}, handle, indent=1, sort_keys=True)
