# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Named audit baselines: plain JSON files a user keeps in git, and what changed since one.

A baseline keeps, per node and per check, the verdict, the actual value and the
title, in sorted order, so two saves of the same fleet state are identical files
apart from ``saved_at`` and a diff in git shows exactly what changed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

BASELINE_SCHEMA_VERSION = 1
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
NAME_RULE = "1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit"


def check_name(name):
    """None when name can be a baseline's file name, else what is allowed."""
    if isinstance(name, str) and NAME_PATTERN.match(name) and not name.endswith((".", ".json")):
        return None
    return NAME_RULE


def baseline(name, saved_at, documents):
    """The baseline file's content for these node documents."""
    nodes = {}
    for document in documents:
        nodes[document["node"]] = {
            "profile": document.get("profile"),
            "error": document.get("error"),
            "checks": dict((item["id"], {"title": item["title"], "verdict": item["verdict"], "actual": item["actual"]})
                           for item in document.get("checks") or []),
        }
    return {"schema_version": BASELINE_SCHEMA_VERSION, "name": name, "saved_at": saved_at, "nodes": nodes}


def check_baseline(content):
    """None when content reads as a baseline this version understands, else why not."""
    if not isinstance(content, dict) or not isinstance(content.get("nodes"), dict):
        return "it is not an audit baseline (no nodes)"
    if content.get("schema_version") != BASELINE_SCHEMA_VERSION:
        return "its schema_version is %r; this collection reads %d" % (content.get("schema_version"), BASELINE_SCHEMA_VERSION)
    return None


def _state(entry):
    return {"verdict": entry["verdict"], "actual": entry["actual"]} if entry else None


def _node_changes(before_checks, after_checks):
    changes = []
    for check_id in sorted(set(before_checks) | set(after_checks)):
        before, after = before_checks.get(check_id), after_checks.get(check_id)
        if _state(before) == _state(after):
            continue
        changes.append({"id": check_id, "title": (after or before)["title"], "before": _state(before), "after": _state(after)})
    return changes


def compare(saved, documents):
    """What changed since the saved baseline, per node and per check (the fleet report's comparison)."""
    current = baseline(saved.get("name"), None, documents)["nodes"]
    nodes = {}
    for node in sorted(set(saved["nodes"]) | set(current)):
        if node not in current:
            nodes[node] = {"status": "gone", "checks": []}
            continue
        if node not in saved["nodes"]:
            nodes[node] = {"status": "new", "checks": _node_changes({}, current[node]["checks"])}
            continue
        changes = _node_changes(saved["nodes"][node].get("checks") or {}, current[node]["checks"])
        nodes[node] = {"status": "changed" if changes else "unchanged", "checks": changes}
    return {"baseline": saved.get("name"), "saved_at": saved.get("saved_at"), "nodes": nodes}
