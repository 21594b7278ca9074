# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Baselines: their names, their stable content and what changed since one."""

from __future__ import annotations

import json

import pytest

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_baseline import (
    baseline,
    check_baseline,
    check_name,
    compare,
)
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_files import dumps, file_name, read_json, write_json


def document(node, **verdicts):
    checks = [{"id": check_id, "area": "sysctl", "title": check_id, "verdict": verdict, "expected": "0", "actual": actual,
               "reason": "r"} for check_id, (verdict, actual) in sorted(verdicts.items())]
    return {"node": node, "profile": "training", "error": None, "checks": checks}


@pytest.mark.parametrize("name", ["before-thp", "2026.12.01", "a", "run_1"])
def test_good_names(name):
    assert check_name(name) is None


@pytest.mark.parametrize("name", ["", "../etc", "a/b", ".hidden", "x.json", "with space", "a" * 101, None])
def test_bad_names(name):
    assert check_name(name) is not None


def test_a_baseline_is_stable_and_sorted():
    docs = [document("b", **{"swap.live": ("FAIL", "on")}), document("a", **{"swap.live": ("PASS", "off")})]
    first = dumps(baseline("x", "2026-12-01T00:00:00Z", docs))
    assert first == dumps(baseline("x", "2026-12-01T00:00:00Z", list(reversed(docs))))
    content = json.loads(first)
    assert list(content["nodes"]) == ["a", "b"]
    assert content["nodes"]["b"]["checks"]["swap.live"] == {"title": "swap.live", "verdict": "FAIL", "actual": "on"}
    assert check_baseline(content) is None
    assert check_baseline({"nodes": {}, "schema_version": 99}).startswith("its schema_version is 99")
    assert check_baseline([]) is not None


def test_compare_shows_per_node_and_per_check_what_changed():
    saved = baseline("before", "2026-12-01T00:00:00Z", [
        document("n1", **{"swap.live": ("FAIL", "on"), "thp.boot": ("PASS", "ok"), "old.check": ("PASS", "x")}),
        document("n2", **{"swap.live": ("PASS", "off")}),
        document("gone", **{"swap.live": ("PASS", "off")}),
    ])
    now = [document("n1", **{"swap.live": ("PASS", "off"), "thp.boot": ("PASS", "ok"), "new.check": ("WARN", "y")}),
           document("n2", **{"swap.live": ("PASS", "off")}),
           document("fresh", **{"swap.live": ("PASS", "off")})]
    result = compare(saved, now)
    assert result["baseline"] == "before" and result["saved_at"] == "2026-12-01T00:00:00Z"
    assert result["nodes"]["n2"] == {"status": "unchanged", "checks": []}
    assert result["nodes"]["gone"]["status"] == "gone"
    assert result["nodes"]["fresh"]["status"] == "new"
    changes = dict((item["id"], item) for item in result["nodes"]["n1"]["checks"])
    assert result["nodes"]["n1"]["status"] == "changed"
    assert changes["swap.live"]["before"] == {"verdict": "FAIL", "actual": "on"}
    assert changes["swap.live"]["after"] == {"verdict": "PASS", "actual": "off"}
    assert changes["old.check"]["after"] is None and changes["new.check"]["before"] is None
    assert "thp.boot" not in changes


def test_files_are_written_whole_and_read_back(tmp_path):
    path = write_json(str(tmp_path / "deep" / "x.json"), {"b": 1, "a": [1, 2]})
    assert read_json(path) == ({"a": [1, 2], "b": 1}, None)
    assert [p.name for p in (tmp_path / "deep").iterdir()] == ["x.json"]  # no temporary file left
    assert read_json(str(tmp_path / "missing.json"))[1]
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    assert read_json(str(tmp_path / "bad.json"))[1].startswith("not valid JSON")
    assert file_name("rack1/gpu 7") == "rack1_gpu_7"
    assert file_name("..") == "_"
