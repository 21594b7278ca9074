# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU baseline's figures in the audit's formats: its document, its named baseline, the diff and the report."""

from __future__ import annotations

from ansible_collections.gpuops.hardening.plugins.module_utils import gpu_baseline as plan
from ansible_collections.gpuops.hardening.plugins.module_utils.baseline_stats import MIB
from ansible_collections.gpuops.hardening.plugins.plugin_utils import audit_baseline, audit_checks, audit_document
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_files import dumps
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_html import render_fleet_report

GPU = {"index": 0, "pci_bus_id": "0000:3b:00.0", "numa_node": 0, "mig_mode": "Disabled", "persistence_mode": "Disabled"}


def figures(pinned_seconds, startup_seconds):
    seconds = {"h2d/pinned/%d" % (64 * MIB): [pinned_seconds] * 3, "h2d/pageable/%d" % (64 * MIB): [0.01] * 3,
               "d2h/pinned/%d" % (64 * MIB): [0.003] * 3, "d2h/pageable/%d" % (64 * MIB): [0.01] * 3}
    checks = [plan.driver_check(12040, None)]
    checks.extend(plan.copy_checks(GPU, [64], {}, seconds))
    checks.extend(plan.numa_checks(GPU, 64, (None,) * 4 + ("one NUMA node with CPUs only",), None, None))
    checks.append(plan.startup_check(GPU, startup_seconds))
    return checks


def test_checks_and_document_have_the_audits_keys():
    checks = figures(0.003, [1.2])
    assert all(tuple(item) == audit_checks.CHECK_KEYS for item in checks)
    assert all(item["verdict"] in audit_checks.VERDICTS for item in checks)
    ours = plan.document("gpu-a", "training", checks, {})
    theirs = audit_document.node_document("gpu-a", "training", checks, {})
    assert ours == theirs


def test_the_baseline_file_keeps_every_figure_and_is_stable():
    document = plan.document("gpu-a", "training", figures(0.003, [1.2]), {})
    saved = audit_baseline.baseline("before-persistence", "2026-12-02T07:00:00Z", [document])
    checks = saved["nodes"]["gpu-a"]["checks"]
    assert checks["baseline.gpu0.startup"] == {"title": "GPU 0 time to first CUDA context", "verdict": "PASS",
                                               "actual": "1200.0 ms (min 1200.0, max 1200.0, 1 runs)"}
    assert checks["baseline.gpu0.numa.local"]["verdict"] == "SKIP"
    assert audit_baseline.check_baseline(saved) is None
    assert dumps(saved) == dumps(audit_baseline.baseline("before-persistence", "2026-12-02T07:00:00Z", [document]))


def test_what_changed_since_the_baseline():
    before = plan.document("gpu-a", "training", figures(0.003, [1.2]), {})
    after = plan.document("gpu-a", "training", figures(0.003, [0.08]), {})
    saved = audit_baseline.baseline("before-persistence", "2026-12-02T07:00:00Z", [before])
    comparison = audit_baseline.compare(saved, [after])
    node = comparison["nodes"]["gpu-a"]
    assert node["status"] == "changed"
    assert [change["id"] for change in node["checks"]] == ["baseline.gpu0.startup"]
    change = node["checks"][0]
    assert change["before"]["actual"].startswith("1200.0 ms") and change["after"]["actual"].startswith("80.0 ms")
    assert audit_baseline.compare(saved, [before])["nodes"]["gpu-a"]["status"] == "unchanged"


def test_the_report_shows_the_figures_and_the_skips():
    before = plan.document("gpu-a", "training", figures(0.003, [1.2]), {})
    after = plan.document("gpu-a", "training", figures(0.003, [0.08]), {})
    comparison = audit_baseline.compare(audit_baseline.baseline("b", None, [before]), [after])
    page = render_fleet_report([after], comparison=comparison, generated_at="2026-12-02T07:00:00Z", title="GPU baseline")
    assert 'data-check="baseline.gpu0.h2d.pinned.64MiB"' in page
    assert "22.37 GB/s" in page
    assert "one NUMA node with CPUs only" in page
    assert "80.0 ms" in page and "1200.0 ms" in page
