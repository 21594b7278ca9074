# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia_mig killed while the GPU clients are stopped: the next call starts them again."""

from __future__ import annotations

import json
import os
from unittest import mock

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import mig_converge
from ansible_collections.gpuops.hardening.plugins.module_utils.unit_record import MIG_CLIENTS_STOPPED
from ansible_collections.gpuops.hardening.plugins.module_utils.engines import nvidia_mig
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.mig_node import LAYOUT, mig_layouts, run_mig

DCGM = "nvidia-dcgm.service"


class Killed(BaseException):
    """The module's process dying (SIGKILL), where nothing of it runs any more."""


def record_path(node):
    return node.root + MIG_CLIENTS_STOPPED


def killed_before_the_clients_start(node):
    """A mode change on GPU 0 whose process dies after the apply, before the clients start again."""
    def stop_then_die(clients, stopped):
        raise Killed()
    with mock.patch.object(mig_converge, "_start_clients", stop_then_die), pytest.raises(Killed):
        run_mig(layouts=mig_layouts(g0=LAYOUT))


def test_the_units_are_recorded_before_the_first_stop(mig_node):
    node = mig_node(apply="immediate", mig_gpus=(1,))
    records_at_stop = []
    fake_systemctl = nvidia_mig.Systemctl
    try_verb = fake_systemctl.try_verb

    def reading_the_record(systemctl, verb, unit):
        if verb == "stop":
            with open(record_path(node), encoding="utf-8") as handle:
                records_at_stop.append(json.load(handle))
        return try_verb(systemctl, verb, unit)
    with mock.patch.object(fake_systemctl, "try_verb", reading_the_record):
        assert not run_mig(layouts=mig_layouts(g0=LAYOUT))["failed"]
    assert records_at_stop == [{"units": [DCGM]}]
    # Once nvidia-dcgm ran again the record went.
    assert node.units[DCGM] and not os.path.exists(record_path(node))


def test_the_next_call_starts_the_clients_a_killed_call_left_stopped(mig_node):
    node = mig_node(apply="immediate", mig_gpus=(1,))
    killed_before_the_clients_start(node)
    assert not node.units[DCGM]
    assert json.load(open(record_path(node), encoding="utf-8")) == {"units": [DCGM]}
    node.unit_calls[:] = []

    # The layout is in place by now: a no-op call all the same starts the client, and says so.
    result = run_mig(layouts=mig_layouts(g0=LAYOUT))
    assert not result["failed"], result["msg"]
    assert result["changed"] and result["clients_restarted"] == [DCGM] and result["clients_stopped"] == []
    assert any(DCGM in warning and MIG_CLIENTS_STOPPED in warning for warning in result["warnings"])
    assert node.unit_calls == ["start %s" % DCGM] and node.units[DCGM]
    assert not os.path.exists(record_path(node))

    again = run_mig(layouts=mig_layouts(g0=LAYOUT))
    assert not again["changed"] and again["clients_restarted"] == []


def test_check_mode_reports_the_clients_it_would_start_and_changes_nothing(mig_node):
    node = mig_node(apply="immediate", mig_gpus=(1,))
    killed_before_the_clients_start(node)
    node.unit_calls[:] = []
    result = run_mig(check_mode=True, layouts=mig_layouts(g0=LAYOUT))
    assert result["changed"] and result["clients_restarted"] == [DCGM]
    assert any("would start %s" % DCGM in warning for warning in result["warnings"])
    assert node.unit_calls == [] and not node.units[DCGM] and os.path.exists(record_path(node))


def test_a_recorded_client_that_does_not_start_keeps_its_record_for_the_next_call(mig_node):
    node = mig_node(apply="immediate", mig_gpus=(1,))
    killed_before_the_clients_start(node)
    node.failing_start.add(DCGM)
    result = run_mig(layouts=mig_layouts(g0=LAYOUT))
    assert result["failed"] and MIG_CLIENTS_STOPPED in result["msg"] and "%s (Job for" % DCGM in result["msg"]
    assert os.path.exists(record_path(node))
    node.failing_start.clear()
    assert run_mig(layouts=mig_layouts(g0=LAYOUT))["clients_restarted"] == [DCGM] and node.units[DCGM]


def test_a_record_this_collection_did_not_write_stops_the_call_before_any_change(mig_node):
    node = mig_node(apply="immediate", mig_gpus=(1,))
    os.makedirs(os.path.dirname(record_path(node)))
    with open(record_path(node), "w", encoding="utf-8") as handle:
        handle.write("nvidia-dcgm.service\n")
    result = run_mig(layouts=mig_layouts(g0=LAYOUT))
    assert result["failed"] and MIG_CLIENTS_STOPPED in result["msg"] and "nothing was changed" in result["msg"]
    assert node.calls == [] and node.unit_calls == []
