# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's metrics and the alerting rules through Debian's promtool (package prometheus).

promtool check metrics lints a written textfile (names, units, HELP and TYPE, the
format); check rules parses the rules; test rules runs alerts_test.yml, where each
alert fires when it should and not otherwise. The nodes are the browser test's sample
fleet (one per readiness verdict, one unreachable), the first with baseline figures.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
RULES = os.path.join(REPO_ROOT, "extras", "monitoring", "gpuops-alerts.yml")
if os.path.join(REPO_ROOT, "playbooks", "collections") not in sys.path:
    sys.path.insert(0, os.path.join(REPO_ROOT, "playbooks", "collections"))
# pylint: disable=wrong-import-position
from ansible_collections.gpuops.hardening.plugins.module_utils import gpu_baseline  # noqa: E402
from ansible_collections.gpuops.hardening.plugins.module_utils.audit_metrics import render  # noqa: E402
from ansible_collections.gpuops.hardening.plugins.plugin_utils.collection_version import collection_version  # noqa: E402
from ansible_collections.gpuops.hardening.tests.browser import sample_fleet  # noqa: E402


def promtool(*args, stdin=None):
    path = shutil.which("promtool")
    if not path:
        pytest.fail("promtool not found: apt-get install prometheus (or run: make deps)")
    return subprocess.run([path] + list(args), input=stdin, capture_output=True, text=True, timeout=120, check=False)


def baseline_document(node):
    gpu = {"index": 0, "pci_bus_id": "00000000:18:00.0", "persistence_mode": "Enabled"}
    size = 64 * 1024 * 1024
    seconds = dict(("%s/%s/%d" % (direction, memory, size), [0.0026, 0.0025, 0.0027])
                   for direction in ("h2d", "d2h") for memory in ("pinned", "pageable"))
    checks = gpu_baseline.copy_checks(gpu, [64, 1024], {1024: "above the memory bound"}, seconds)
    checks.append(gpu_baseline.startup_check(gpu, [0.21, 0.2, 0.22]))
    return gpu_baseline.document(node, "training", checks, {})


@pytest.fixture(scope="module")
def textfiles(tmp_path_factory):
    """{node: path of its written metrics}."""
    work = tmp_path_factory.mktemp("fleet")
    documents = sample_fleet.build(str(work / "report"), work / "hosts")
    written = {}
    for position, document in enumerate(documents):
        baseline = baseline_document(document["node"]) if position == 0 else None
        path = work / ("%s.prom" % document["node"])
        path.write_text(render(document, collection_version(), 1764840000, converged_at=1764830000, baseline=baseline))
        written[document["node"]] = path
    return written


def test_every_node_s_textfile_passes_promtool_check_metrics(textfiles):
    assert len(textfiles) == 5
    for node, path in textfiles.items():
        checked = promtool("check", "metrics", stdin=path.read_text())
        assert checked.returncode == 0 and not checked.stdout.strip() and not checked.stderr.strip(), (
            node, checked.stdout, checked.stderr)


def test_the_textfiles_carry_readiness_checks_and_the_baseline(textfiles):
    first = textfiles["gpu-train-01"].read_text()
    assert 'gpuops_node_readiness{verdict="reset"} 1' in first
    assert 'gpuops_baseline_copy_bytes_per_second{gpu="0",direction="h2d",memory="pinned",size_bytes="67108864"}' in first
    assert "gpuops_audit_error 1" in textfiles["gpu-old-03"].read_text()


def test_promtool_check_metrics_catches_a_bad_name():
    # The linter this suite relies on does speak up: a counter without _total.
    checked = promtool("check", "metrics", stdin="# HELP gpuops_bad A counter.\n# TYPE gpuops_bad counter\ngpuops_bad 1\n")
    assert "_total" in checked.stdout + checked.stderr


def test_the_rules_pass_promtool_check_rules():
    checked = promtool("check", "rules", RULES)
    assert checked.returncode == 0 and "SUCCESS: 4 rules found" in checked.stdout, checked.stdout + checked.stderr


def test_each_alert_fires_when_it_should_and_not_otherwise():
    tested = subprocess.run([shutil.which("promtool") or "promtool", "test", "rules", "alerts_test.yml"], cwd=HERE,
                            capture_output=True, text=True, timeout=120, check=False)
    assert tested.returncode == 0 and "SUCCESS" in tested.stdout, tested.stdout + tested.stderr
