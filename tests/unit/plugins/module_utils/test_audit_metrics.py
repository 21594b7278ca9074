# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's node document as textfile metrics: series, labels, enumerations and the baseline's figures."""

from __future__ import annotations

import re

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import gpu_baseline
from ansible_collections.gpuops.hardening.plugins.module_utils.audit_metrics import (
    CHECK_VERDICTS,
    READINESS_VERDICTS,
    render,
    without_audit_time,
)
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_checks import VERDICTS
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_hardware_checks import READINESS

CHECKS = [
    {"id": "sysctl.live.vm.swappiness", "area": "sysctl", "title": "vm.swappiness, live", "verdict": "PASS",
     "expected": "0", "actual": "0", "reason": "the running kernel has the tuned value"},
    {"id": "swap.live", "area": "swap", "title": "swap, live", "verdict": "FAIL", "expected": "off",
     "actual": "/swapfile", "reason": 'a "quoted" reason\\ with a backslash\nand a new line'},
]
DOCUMENT = {"schema_version": 1, "node": "gpu-a", "profile": "training", "error": None,
            "readiness": {"verdict": "degraded", "reasons": ["hardware.gpu0.pcie_width: x8 of x16 (WARN)"]},
            "summary": {"PASS": 1, "FAIL": 1, "WARN": 0, "SKIP": 0}, "checks": CHECKS}
SAMPLE = re.compile(r'^([a-z_:][a-z0-9_:]*)(\{.*\})? (\S+)$')


def samples(text):
    """{(name, labels text): value} of every sample line."""
    found = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        name, labels, value = SAMPLE.match(line).groups()
        found[(name, labels or "")] = float(value)
    return found


def test_the_verdict_lists_are_the_audits():
    assert set(CHECK_VERDICTS) == set(VERDICTS)
    assert READINESS_VERDICTS == READINESS


def test_each_check_has_one_series_per_verdict_and_only_its_own_is_1():
    found = samples(render(DOCUMENT, "2.1.0", 1700000000))
    for verdict in CHECK_VERDICTS:
        key = ("gpuops_check_status", '{check="swap.live",area="swap",verdict="%s"}' % verdict)
        assert found[key] == (1 if verdict == "FAIL" else 0)
    assert found[("gpuops_audit_checks", '{verdict="FAIL"}')] == 1
    assert found[("gpuops_build_info", '{version="2.1.0"}')] == 1
    assert found[("gpuops_audit_last_run_timestamp_seconds", "")] == 1700000000
    assert found[("gpuops_audit_info", '{profile="training"}')] == 1
    assert found[("gpuops_audit_error", "")] == 0


def test_no_label_carries_the_reason_or_any_other_free_text():
    text = render(DOCUMENT, "2.1.0", 1700000000)
    for item in CHECKS:
        for key in ("title", "reason", "expected", "actual"):
            if item[key] not in ("0",):
                assert item[key] not in text
    labels = set(re.findall(r'(\w+)="', text))
    assert labels == {"version", "profile", "verdict", "check", "area"}


@pytest.mark.parametrize("verdict", READINESS_VERDICTS + (None,))
def test_readiness_is_one_series_per_verdict_all_0_when_unknown(verdict):
    document = dict(DOCUMENT, readiness={"verdict": verdict, "reasons": []})
    found = samples(render(document, "2.1.0", 1))
    assert [found[("gpuops_node_readiness", '{verdict="%s"}' % name)] for name in READINESS_VERDICTS] == [
        1 if name == verdict else 0 for name in READINESS_VERDICTS]


def test_the_converge_time_is_there_only_when_known():
    assert "gpuops_converge_last_run_timestamp_seconds" not in render(DOCUMENT, "2.1.0", 1)
    found = samples(render(DOCUMENT, "2.1.0", 1, converged_at=1699990000))
    assert found[("gpuops_converge_last_run_timestamp_seconds", "")] == 1699990000


def test_a_node_that_could_not_be_audited_says_so():
    document = {"node": "gpu-b", "profile": None, "error": "unreachable", "readiness": {"verdict": None},
                "summary": {"PASS": 0, "FAIL": 0, "WARN": 0, "SKIP": 0}, "checks": []}
    text = render(document, "2.1.0", 1)
    assert samples(text)[("gpuops_audit_error", "")] == 1
    assert "gpuops_check_status" not in text and "gpuops_audit_info" not in text


def test_each_family_has_help_and_type_gauge_before_its_samples():
    lines = render(DOCUMENT, "2.1.0", 1, converged_at=2).splitlines()
    names = [line.split()[2] for line in lines if line.startswith("# TYPE")]
    assert all(line.endswith(" gauge") for line in lines if line.startswith("# TYPE"))
    for name in names:
        first = next(i for i, line in enumerate(lines) if line.split("{")[0].split(" ")[0] == name)
        assert lines[first - 2] == "# HELP %s %s" % (name, lines[first - 2].split(" ", 3)[3])
    assert all(name.startswith("gpuops_") for name in names)


def test_baseline_figures_in_base_units_from_the_baseline_document():
    gpu = {"index": 0, "pci_bus_id": "00000000:17:00.0", "persistence_mode": "Enabled"}
    seconds = {"h2d/pinned/%d" % (64 << 20): [0.0025, 0.0026, 0.0027], "d2h/pinned/%d" % (64 << 20): [0.003] * 3}
    checks = gpu_baseline.copy_checks(gpu, [64], {}, seconds)
    checks.append(gpu_baseline.startup_check(gpu, [0.25, 0.3, 0.35]))
    checks.append(gpu_baseline.startup_check(dict(gpu, index=1), None, skip_reason="MIG is on"))
    baseline = gpu_baseline.document("gpu-a", "training", checks, {})
    found = samples(render(DOCUMENT, "2.1.0", 1, baseline=baseline))
    h2d = found[("gpuops_baseline_copy_bytes_per_second",
                 '{gpu="0",direction="h2d",memory="pinned",size_bytes="67108864"}')]
    assert h2d == pytest.approx((64 << 20) / 0.0026, rel=0.01)
    assert found[("gpuops_baseline_context_startup_seconds", '{gpu="0"}')] == pytest.approx(0.3)
    # Skipped and unmeasured figures (pageable copies here, GPU 1's start-up) have no sample.
    assert not [key for key in found if 'memory="pageable"' in key[1] or key[1] == '{gpu="1"}']


def test_without_audit_time_leaves_out_only_the_audit_time():
    first, second = render(DOCUMENT, "2.1.0", 1), render(DOCUMENT, "2.1.0", 2)
    assert first != second and without_audit_time(first) == without_audit_time(second)
    assert without_audit_time(first) != without_audit_time(render(DOCUMENT, "2.1.1", 1))
