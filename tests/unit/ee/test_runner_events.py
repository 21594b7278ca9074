# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ee gate's reading of ansible-runner's job events, on an event set written here.

The events have the shape ansible-runner 2.4's awx_display callback gives them
(event, counter, stdout, event_data with host, task_action, resolved_action, res,
ignore_errors); the counts are what ansible-core's stats make of the same play:
a task that changes, a skip, a loop, an include with and without a loop, an
ignored failure, a rescued one, a skipped meta task, a failure and a handler, on
two hosts, and a third host that is unreachable.
"""

from __future__ import annotations

import json

import pytest

from ansible_collections.gpuops.hardening.tests.ee import runner_events

COLOUR = {"ok": "0;32", "changed": "0;33", "failed": "0;31", "skipped": "0;36", "rescued": "0;32",
          "ignored": "1;35", "unreachable": "1;31"}


def host_event(kind, host, action="ansible.builtin.command", res=None, **data):
    data.update(host=host, task_action=action.rsplit(".", 1)[-1], resolved_action=action)
    if res is not None:
        data["res"] = res
    return {"event": kind, "event_data": data}


def coloured_recap(recap):
    """A PLAY RECAP as ansible-core prints it with ANSIBLE_FORCE_COLOR, as AWX's jobs run."""
    lines = ["", "PLAY RECAP " + "*" * 69]
    for host, values in recap.items():
        fields = []
        for key in runner_events.RECAP_KEYS:
            text = "%s=%-4d" % (key, values[key])
            fields.append("\x1b[%sm%s\x1b[0m" % (COLOUR[key], text) if values[key] else text)
        lines.append("\x1b[0;33m%s\x1b[0m%s : %s" % (host, " " * (26 - len(host)), " ".join(fields)))
    return "\r\n".join(lines)


def recap_line(ok, changed, unreachable, failed, skipped, rescued, ignored):
    return dict(zip(runner_events.RECAP_KEYS, (ok, changed, unreachable, failed, skipped, rescued, ignored)))


RECAP = {
    "h1": recap_line(12, 3, 0, 0, 2, 1, 1),
    "h2": recap_line(11, 3, 0, 1, 1, 1, 1),
    "h3": recap_line(0, 0, 1, 0, 0, 0, 0),
}


def play_events():
    """The play's host events for h1 and h2, then h3 unreachable, then the stats, numbered in order."""
    events = []
    for host in ("h1", "h2"):
        events += [
            {"event": "runner_on_start", "event_data": {"host": host}},
            host_event("runner_on_ok", host, "ansible.builtin.debug", {"changed": False}),
            host_event("runner_on_ok", host, res={"changed": True}),
            host_event("runner_on_skipped", host, "ansible.builtin.debug"),
            # A loop: the items are not counted, the loop's own result is.
            host_event("runner_item_on_ok", host, res={"changed": True}),
            host_event("runner_item_on_ok", host, res={"changed": False}),
            host_event("runner_on_ok", host, res={"changed": True, "results": [{}, {}]}),
            # An include counts once per file it includes, never as a change.
            host_event("runner_on_ok", host, "ansible.builtin.include_tasks", {"include": "inc.yml", "changed": False}),
            host_event("runner_on_ok", host, "ansible.builtin.debug", {"changed": False}),
            host_event("runner_on_ok", host, "ansible.builtin.include_tasks",
                       {"changed": False, "results": [{"include": "inc.yml"}, {"include": "inc.yml"},
                                                      {"skipped": True}]}),
            host_event("runner_on_ok", host, "ansible.builtin.debug", {"changed": False}),
            host_event("runner_on_ok", host, "ansible.builtin.debug", {"changed": False}),
            # An ignored failure is ok, ignored and, here, changed.
            host_event("runner_on_failed", host, res={"changed": True, "failed": True}, ignore_errors=True),
            # A rescued failure: failed as an event, rescued in the recap.
            host_event("runner_on_failed", host, res={"changed": True, "failed": True}, ignore_errors=False),
            host_event("runner_on_ok", host, "ansible.builtin.debug", {"changed": False}),
            # A skipped meta task is an event only.
            host_event("runner_on_skipped", host, "ansible.builtin.meta"),
        ]
    events += [
        host_event("runner_on_skipped", "h1", "ansible.builtin.fail"),
        host_event("runner_on_failed", "h2", "ansible.builtin.fail", {"failed": True, "msg": "boom"},
                   ignore_errors=False),
        host_event("runner_on_ok", "h1", "ansible.builtin.debug", {"changed": False}),
        host_event("runner_on_unreachable", "h3", "ansible.builtin.debug", {"unreachable": True}),
    ]
    stats = {"ok": {"h1": 12, "h2": 11}, "changed": {"h1": 3, "h2": 3}, "dark": {"h3": 1}, "failures": {"h2": 1},
             "skipped": {"h1": 2, "h2": 1}, "rescued": {"h1": 1, "h2": 1}, "ignored": {"h1": 1, "h2": 1},
             "processed": {"h1": 1, "h2": 1, "h3": 1}}
    events.append({"event": "playbook_on_stats", "event_data": stats, "stdout": coloured_recap(RECAP)})
    for counter, event in enumerate(events, start=1):
        event["counter"] = counter
        event.setdefault("stdout", "")
    return events


def test_the_host_events_count_as_ansible_cores_stats_do():
    assert runner_events.counts_from_host_events(play_events()) == {
        "h1": {"ok": 12, "changed": 3, "unreachable": 0, "failed": 1, "skipped": 2, "ignored": 1},
        "h2": {"ok": 11, "changed": 3, "unreachable": 0, "failed": 2, "skipped": 1, "ignored": 1},
        "h3": {"ok": 0, "changed": 0, "unreachable": 1, "failed": 0, "skipped": 0, "ignored": 0},
    }


def test_the_stats_event_and_the_coloured_recap_read_alike():
    events = play_events()
    assert runner_events.recap_from_stats(events) == RECAP
    assert runner_events.recap_from_stdout(runner_events.job_stdout(events)) == RECAP


def test_the_three_agree_on_the_written_play():
    assert runner_events.disagreements(play_events()) == []


def test_a_lost_event_is_a_disagreement_naming_its_host():
    events = [event for event in play_events()
              if not (event["event"] == "runner_on_skipped" and event["event_data"]["host"] == "h2"
                      and event["event_data"]["resolved_action"] == "ansible.builtin.debug")]
    found = runner_events.disagreements(events)
    assert len(found) == 1 and found[0].startswith("h2: ")


def test_a_change_the_events_do_not_show_is_a_disagreement():
    events = play_events()
    events[2]["event_data"]["res"]["changed"] = False
    assert [line.split(":")[0] for line in runner_events.disagreements(events)] == ["h1"]


def test_a_stats_event_that_differs_from_the_printed_recap_is_a_disagreement():
    events = play_events()
    events[-1]["event_data"]["ok"]["h2"] = 10
    found = runner_events.disagreements(events)
    assert found and found[0].startswith("playbook_on_stats ")


def test_the_last_recap_of_the_output_is_read():
    text = coloured_recap({"h1": recap_line(1, 0, 0, 0, 0, 0, 0)}) + "\nmore\n" + coloured_recap(RECAP)
    assert runner_events.recap_from_stdout(text) == RECAP


def test_an_output_without_a_recap_or_a_job_without_stats_is_refused():
    with pytest.raises(ValueError, match="no PLAY RECAP"):
        runner_events.recap_from_stdout("PLAY [all] ***\n")
    with pytest.raises(ValueError, match="one playbook_on_stats event, found 0"):
        runner_events.recap_from_stats(play_events()[:-1])


def test_the_events_are_read_in_counter_order(tmp_path):
    (tmp_path / "job_events").mkdir()
    for event in play_events():
        name = "%d-%08d.json" % (event["counter"], 99 - event["counter"])
        (tmp_path / "job_events" / name).write_text(json.dumps(event), encoding="utf-8")
    loaded = runner_events.load_events(str(tmp_path))
    assert [event["counter"] for event in loaded] == list(range(1, len(play_events()) + 1))
