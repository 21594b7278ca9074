# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.hardening.audit_metrics: the textfile written whole, mode 0644; check mode writes nothing; changed
only when the results change."""

from __future__ import annotations

import os
import re
import stat

from ansible_collections.gpuops.hardening.plugins.module_utils import converge_stamp
from ansible_collections.gpuops.hardening.plugins.modules.audit_metrics import FILE_NAME
from ansible_collections.gpuops.hardening.plugins.modules.audit_metrics import main as audit_metrics_main
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module

TEXTFILE_DIR = "/var/lib/prometheus/node-exporter"
DOCUMENT = {"node": "gpu-a", "profile": "inference", "error": None, "readiness": {"verdict": "ready", "reasons": []},
            "summary": {"PASS": 1, "FAIL": 0, "WARN": 0, "SKIP": 0},
            "checks": [{"id": "thp.boot", "area": "thp", "title": "THP at boot", "verdict": "PASS", "expected": "x",
                        "actual": "x", "reason": "in place"}]}


def write(root, document=None, check_mode=False, directory=TEXTFILE_DIR):
    return run_module(audit_metrics_main, {"root": str(root), "document": document or DOCUMENT, "version": "2.1.0",
                                           "directory": directory}, check_mode=check_mode, diff=True)


def textfile_dir(tmp_path):
    folder = tmp_path / TEXTFILE_DIR.lstrip("/")
    folder.mkdir(parents=True)
    return folder


def test_check_mode_writes_nothing_and_says_it_would(tmp_path):
    folder = textfile_dir(tmp_path)
    result = write(tmp_path, check_mode=True)
    assert result["changed"] and not result["failed"], result
    assert os.listdir(str(folder)) == []
    assert 'gpuops_check_status{check="thp.boot",area="thp",verdict="PASS"} 1' in result["diff"]["after"]


def test_the_file_is_whole_mode_0644_and_alone_in_its_folder(tmp_path):
    folder = textfile_dir(tmp_path)
    result = write(tmp_path)
    assert result["changed"] and result["path"] == str(folder / FILE_NAME)
    assert os.listdir(str(folder)) == [FILE_NAME], "a temporary file was left behind"
    assert stat.S_IMODE(os.stat(str(folder / FILE_NAME)).st_mode) == 0o644
    text = (folder / FILE_NAME).read_text()
    assert text.endswith("\n") and 'gpuops_node_readiness{verdict="ready"} 1' in text
    assert result["series"] == sum(1 for line in text.splitlines() if not line.startswith("#"))


def test_the_same_results_again_are_no_change_but_the_audit_time_moves(tmp_path):
    folder = textfile_dir(tmp_path)
    write(tmp_path)
    path = folder / FILE_NAME
    path.write_text(re.sub(r"^(gpuops_audit_last_run_timestamp_seconds) \d+$", r"\1 1", path.read_text(), flags=re.M))
    old = path.read_text()
    again = write(tmp_path)
    assert not again["changed"] and "diff" not in again, again
    assert path.read_text() != old, "the audit's time did not move"
    assert not write(tmp_path, check_mode=True)["changed"]


def test_a_new_verdict_or_a_converge_is_a_change_with_its_diff(tmp_path):
    textfile_dir(tmp_path)
    write(tmp_path)
    failing = dict(DOCUMENT, checks=[dict(DOCUMENT["checks"][0], verdict="FAIL")])
    result = write(tmp_path, failing)
    assert result["changed"]
    assert 'verdict="FAIL"} 0' in result["diff"]["before"] and 'verdict="FAIL"} 1' in result["diff"]["after"]
    converge_stamp.record(str(tmp_path), now=1699990000)
    result = write(tmp_path, failing)
    assert result["changed"] and "gpuops_converge_last_run_timestamp_seconds 1699990000" in result["diff"]["after"]


def test_a_wrong_mode_is_put_right_and_is_a_change(tmp_path):
    folder = textfile_dir(tmp_path)
    write(tmp_path)
    os.chmod(str(folder / FILE_NAME), 0o600)
    assert write(tmp_path)["changed"]
    assert stat.S_IMODE(os.stat(str(folder / FILE_NAME)).st_mode) == 0o644


def test_a_missing_folder_warns_naming_it_and_the_input_and_writes_nothing(tmp_path):
    # A warning, not a failure: the host stays in the run (readiness.yml's gate comes after the audit).
    result = write(tmp_path, directory="/srv/textfiles")
    assert not result.get("failed") and not result["changed"] and result["series"] == 0
    warning = " ".join(result["warnings"])
    assert "/srv/textfiles does not exist" in warning and "audit_metrics_dir" in warning
    assert not (tmp_path / "srv").exists()
