# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A job's per-host counts, read three ways from ansible-runner's artifacts, so that they can be held equal.

ansible-runner writes one JSON file per event under artifacts/<ident>/job_events/
(`<counter>-<uuid>.json`: event, event_data, stdout, counter), the events AWX
stores as the job's events and whose stdout it shows as the job's output.

- from the host events (runner_on_ok, runner_on_failed, runner_on_unreachable,
  runner_on_skipped), by the rules ansible-core's StrategyBase applies to its
  own stats (lib/ansible/plugins/strategy/__init__.py, `_process_pending_results`
  and `_load_included_file`);
- from the playbook_on_stats event, which AWX turns into each host's
  JobHostSummary (awx/main/models/events.py, `_update_host_summary_from_stats`);
- from the PLAY RECAP in the events' stdout, the text a person reads in AWX.

An event's `changed` is its res.changed, and a failed event whose ignore_errors
is false counts as failed, as AWX marks the event itself
(BasePlaybookEvent._update_from_event_data). A failure a rescue section then
took on is such an event too: the recap counts it as rescued, so the events'
`failed` stands for the recap's failed plus rescued.
"""

from __future__ import annotations

import glob
import json
import os
import re

# The names the recap prints, in its order.
RECAP_KEYS = ("ok", "changed", "unreachable", "failed", "skipped", "rescued", "ignored")
# What the host events can tell apart: the recap's keys, rescued within failed.
COUNT_KEYS = ("ok", "changed", "unreachable", "failed", "skipped", "ignored")
# playbook_on_stats event_data key -> recap name (ansible-runner's awx_display callback).
STATS_KEYS = {"ok": "ok", "changed": "changed", "dark": "unreachable", "failures": "failed",
              "skipped": "skipped", "rescued": "rescued", "ignored": "ignored"}
# An include's own result is not counted; each file it includes is (StrategyBase._load_included_file).
INCLUDE_ACTIONS = {"include_tasks", "include_role", "ansible.builtin.include_tasks", "ansible.builtin.include_role"}
# A meta task answers without touching the stats; only its skip is sent as an event (StrategyBase._execute_meta).
META_ACTIONS = {"meta", "ansible.builtin.meta"}
ANSI = re.compile(r"\x1b\[[0-9;]*m")
RECAP_LINE = re.compile(r"^(\S+)\s+:\s+((?:\w+=\d+\s*)+)$")


def load_events(artifact_dir):
    """The job's events from ARTIFACT_DIR/job_events, in their counter order."""
    events = []
    for path in glob.glob(os.path.join(artifact_dir, "job_events", "*.json")):
        with open(path, encoding="utf-8") as handle:
            events.append(json.load(handle))
    return sorted(events, key=lambda event: event["counter"])


def _zero():
    return dict.fromkeys(COUNT_KEYS, 0)


def _action(data):
    return data.get("resolved_action") or data.get("task_action") or ""


def _included_files(data):
    """How many files an include's result loads: one, or one per item of a loop."""
    res = data.get("res") or {}
    if "results" in res:
        return sum(1 for item in res["results"] if not item.get("skipped") and not item.get("failed"))
    return 1


def counts_from_host_events(events):
    """{host: {ok, changed, unreachable, failed, skipped, ignored}} from the runner_on_* events."""
    counts = {}
    for event in events:
        kind, data = event["event"], event.get("event_data") or {}
        if kind not in ("runner_on_ok", "runner_on_failed", "runner_on_unreachable", "runner_on_skipped"):
            continue
        host = counts.setdefault(data["host"], _zero())
        changed = bool((data.get("res") or {}).get("changed"))
        if kind == "runner_on_ok":
            if _action(data) in INCLUDE_ACTIONS:
                host["ok"] += _included_files(data)
            else:
                host["ok"] += 1
                host["changed"] += changed
        elif kind == "runner_on_failed" and data.get("ignore_errors"):
            host["ok"] += 1
            host["ignored"] += 1
            host["changed"] += changed
        elif kind == "runner_on_failed":
            host["failed"] += 1
        elif kind == "runner_on_unreachable":
            host["unreachable"] += 1
        elif _action(data) not in META_ACTIONS:
            host["skipped"] += 1
    return counts


def _stats_event(events):
    found = [event for event in events if event["event"] == "playbook_on_stats"]
    if len(found) != 1:
        raise ValueError("expected one playbook_on_stats event, found %d" % len(found))
    return found[0]


def recap_from_stats(events):
    """{host: {recap key: n}} from the playbook_on_stats event, every host the stats name."""
    data = _stats_event(events)["event_data"]
    hosts = set()
    for key in STATS_KEYS:
        hosts.update(data.get(key) or {})
    return dict((host, dict((name, (data.get(key) or {}).get(host, 0)) for key, name in STATS_KEYS.items()))
                for host in hosts)


def job_stdout(events):
    """The job's output as AWX shows it: every event's stdout, in order, without colour."""
    return ANSI.sub("", "\n".join(event["stdout"] for event in events if event.get("stdout")).replace("\r\n", "\n"))


def recap_from_stdout(text):
    """{host: {recap key: n}} from the last PLAY RECAP in TEXT; ValueError where it has none."""
    text = ANSI.sub("", text.replace("\r\n", "\n"))
    start = text.rfind("PLAY RECAP ")
    if start < 0:
        raise ValueError("no PLAY RECAP in the output")
    recap = {}
    for line in text[start:].splitlines()[1:]:
        match = RECAP_LINE.match(line.strip())
        if not match:
            break
        values = dict((key, int(value)) for key, value in re.findall(r"(\w+)=(\d+)", match.group(2)))
        recap[match.group(1)] = dict((key, values.get(key, 0)) for key in RECAP_KEYS)
    return recap


def as_counts(recap):
    """A recap in the host events' terms: rescued failures back within failed."""
    return dict((host, dict((key, values[key] + (values["rescued"] if key == "failed" else 0)) for key in COUNT_KEYS))
                for host, values in recap.items())


def disagreements(events):
    """What differs between the host events' counts, the stats event and the stdout recap: [] when they agree."""
    from_events = counts_from_host_events(events)
    from_stats = recap_from_stats(events)
    from_stdout = recap_from_stdout(job_stdout(events))
    found = []
    if from_stats != from_stdout:
        found.append("playbook_on_stats %r != the stdout recap %r" % (from_stats, from_stdout))
    expected = as_counts(from_stdout)
    # A host the play never reached has a recap line of zeros and no events.
    for host in sorted(set(expected) | set(from_events)):
        if from_events.get(host, _zero()) != expected.get(host, _zero()):
            found.append("%s: the host events count %r, the recap %r" % (host, from_events.get(host), expected.get(host)))
    return found
