# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""extras/monitoring: the alerting rules and the Grafana dashboard ask only for series the audit writes,
with the labels it gives them. promtool checks the rules themselves (tests/monitoring)."""

from __future__ import annotations

import json
import os
import re

import yaml

from ansible_collections.gpuops.hardening.plugins.module_utils import gpu_baseline
from ansible_collections.gpuops.hardening.plugins.module_utils.audit_metrics import render

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MONITORING = os.path.join(ROOT, "extras", "monitoring")
# Labels Prometheus adds at scrape time, and the alerts' own.
SCRAPE_LABELS = {"instance", "job"}
METRIC = re.compile(r"\b(gpuops_[a-z_]+)")
LABEL_MATCHER = re.compile(r"(\w+)\s*(?:=~|!~|!=|=)\s*\"")
GROUPING = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")


def written_series():
    """{metric name: its label names} of a file with every family the renderer has."""
    gpu = {"index": 0, "pci_bus_id": "00000000:18:00.0"}
    checks = gpu_baseline.copy_checks(gpu, [1], {}, {"h2d/pinned/1048576": [0.001]})
    checks.append(gpu_baseline.startup_check(gpu, [0.2]))
    document = {"profile": "training", "error": None, "readiness": {"verdict": "ready"},
                "summary": {"PASS": 1, "FAIL": 0, "WARN": 0, "SKIP": 0},
                "checks": [{"id": "swap.live", "area": "swap", "verdict": "PASS"}]}
    text = render(document, "2.1.0", 1, converged_at=1, baseline=gpu_baseline.document("n", "training", checks, {}))
    found = {}
    for line in text.splitlines():
        if not line.startswith("#"):
            name = line.split("{")[0].split(" ")[0]
            found.setdefault(name, set()).update(re.findall(r'(\w+)="', line))
    return found


def expressions():
    """Every PromQL expression of the rules and the dashboard, with where it is."""
    with open(os.path.join(MONITORING, "gpuops-alerts.yml"), encoding="utf-8") as handle:
        rules = yaml.safe_load(handle)
    found = [("rule " + rule["alert"], rule["expr"]) for group in rules["groups"] for rule in group["rules"]]
    with open(os.path.join(MONITORING, "gpuops-dashboard.json"), encoding="utf-8") as handle:
        dashboard = json.load(handle)
    found += [("panel " + panel["title"], target["expr"]) for panel in dashboard["panels"] for target in panel["targets"]]
    return found


def test_every_expression_names_written_series_and_their_labels():
    series = written_series()
    labels = set().union(*series.values()) | SCRAPE_LABELS
    for where, expr in expressions():
        names = METRIC.findall(expr)
        assert names and set(names) <= set(series), (where, expr)
        used = set(LABEL_MATCHER.findall(expr))
        for group in GROUPING.findall(expr):
            used.update(word.strip() for word in group.split(",") if word.strip())
        assert used <= labels, (where, used - labels)


def test_every_alert_the_issue_asks_for_is_there():
    alerts = dict(expressions())
    assert 'verdict="FAIL"' in alerts["rule GpuopsCheckFailed"]
    assert "86400" in alerts["rule GpuopsNodeNotAudited"]
    assert 'verdict!="ready"' in alerts["rule GpuopsNodeNotReady"]


def test_the_dashboard_is_importable_and_filtered_by_node():
    with open(os.path.join(MONITORING, "gpuops-dashboard.json"), encoding="utf-8") as handle:
        dashboard = json.load(handle)
    assert dashboard["uid"] and dashboard["title"] and "id" not in dashboard
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    assert [variable["name"] for variable in dashboard["templating"]["list"]] == ["datasource", "instance"]
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            assert 'instance=~"$instance"' in target["expr"], panel["title"]
            assert target["datasource"]["uid"] == "${datasource}"
