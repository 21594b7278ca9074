# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""When a feature call is answered from the play's precheck, and when it goes to the node."""

from __future__ import annotations

from ansible_collections.gpuops.hardening.plugins.plugin_utils.prechecked_action import ANSWERED_BY, precheck_answer

ARGS = {"enabled": "always", "defrag": "defer+madvise", "khugepaged_defrag": True}


def _precheck(result=None, args=None, module="thp", token="t1"):
    entry = {"module": module, "args": ARGS if args is None else args, "use": module,
             "result": {"changed": False, "failed": False, "before": {"enabled": "always"}, "warnings": []}
             if result is None else result}
    return {"changed": False, "token": token, "features": [entry], "in_sync": [module]}


def test_a_call_in_sync_is_answered_with_its_check():
    answer = precheck_answer(_precheck(), None, "thp", dict(ARGS))
    assert answer == {"changed": False, "before": {"enabled": "always"}, "warnings": [], "precheck": ANSWERED_BY}


def test_other_arguments_go_to_the_node():
    assert precheck_answer(_precheck(), None, "thp", dict(ARGS, enabled="madvise")) is None
    assert precheck_answer(_precheck(), None, "thp", dict(ARGS, persist=True)) is None


def test_another_module_with_the_same_arguments_goes_to_the_node():
    assert precheck_answer(_precheck(), None, "memlock", dict(ARGS)) is None


def test_a_call_that_would_change_or_fail_goes_to_the_node():
    assert precheck_answer(_precheck({"changed": True, "failed": False}), None, "thp", dict(ARGS)) is None
    assert precheck_answer(_precheck({"changed": False, "failed": True, "msg": "x"}), None, "thp", dict(ARGS)) is None


def test_after_a_change_in_this_play_every_call_goes_to_the_node():
    assert precheck_answer(_precheck(), "t1", "thp", dict(ARGS)) is None
    # A mark left by another precheck (an earlier run's cached fact) does not count.
    assert precheck_answer(_precheck(), "t0", "thp", dict(ARGS)) is not None


def test_no_usable_precheck_means_the_node():
    for precheck in (None, "text", {}, {"failed": True, "token": "t1"}, {"skipped": True}):
        assert precheck_answer(precheck, None, "thp", dict(ARGS)) is None
