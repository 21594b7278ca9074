# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The record of converged calls (module_utils/receipts.py) and the precheck module that checks them."""

from __future__ import annotations

import json
from unittest import mock

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import precheck, receipts, run_lock
from ansible_collections.gpuops.hardening.plugins.module_utils import thp_main
from ansible_collections.gpuops.hardening.plugins.modules import precheck as precheck_module
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.recorded_systemctl import recorded_systemctl
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.thp_host import thp_host_tree

TRAINING = {"enabled": "always", "defrag": "defer+madvise", "khugepaged_defrag": True}


@pytest.fixture
def host(tmp_path):
    """A host tree with THP at kernel defaults; systemctl stubbed."""
    thp_host_tree(tmp_path)
    with recorded_systemctl(thp_main):
        yield tmp_path


def _thp(host, check_mode=False, **extra):
    args = dict(TRAINING, root=str(host))
    args.update(extra)
    return run_module(thp_main.main, args, check_mode=check_mode)


def _recorded(host):
    path = host / receipts.RECEIPTS_PATH.lstrip("/")
    return json.loads(path.read_text())["calls"] if path.exists() else None


def _precheck(host, **extra):
    result = run_module(precheck_module.main, dict(root=str(host), **extra))
    assert not result["failed"], result
    return result


def test_a_converged_call_is_recorded_as_the_task_gave_it(host):
    assert _thp(host)["changed"]
    assert _recorded(host) == {"thp": {"module": "thp", "args": dict(TRAINING, root=str(host))}}


def test_the_precheck_finds_a_converged_call_in_sync(host):
    _thp(host)
    result = _precheck(host)
    assert result["changed"] is False and result["token"]
    assert result["in_sync"] == ["thp"]
    [entry] = result["features"]
    assert entry["module"] == "thp" and entry["use"] == "thp"
    assert entry["args"] == dict(TRAINING, root=str(host))
    assert entry["result"]["changed"] is False and entry["result"]["failed"] is False


def test_drift_since_the_converge_is_a_change_and_nothing_is_touched(host):
    _thp(host)
    enabled = host / "sys/kernel/mm/transparent_hugepage/enabled"
    enabled.write_text("always [madvise] never\n")
    before = _recorded(host)
    result = _precheck(host)
    assert result["in_sync"] == []
    assert result["features"][0]["result"]["changed"] is True
    # Check mode: the live value and the record stay as they were.
    assert enabled.read_text() == "always [madvise] never\n"
    assert _recorded(host) == before


def test_check_mode_and_failures_record_nothing(host):
    assert _thp(host, check_mode=True)["changed"]
    assert _recorded(host) is None
    (host / "proc" / "cmdline").write_text("ro transparent_hugepage=never\n")
    assert _thp(host, persist=False, cmdline_conflict_action="fail")["failed"]
    assert _recorded(host) is None


def test_the_next_call_of_the_same_use_replaces_the_record(host):
    _thp(host)
    _thp(host, enabled="madvise", defrag="defer", khugepaged_defrag=False)
    calls = _recorded(host)
    assert list(calls) == ["thp"]
    assert calls["thp"]["args"]["enabled"] == "madvise"


def test_an_unchanged_record_is_not_written_again(host):
    _thp(host)
    path = host / receipts.RECEIPTS_PATH.lstrip("/")
    path.chmod(0o444)
    stamp = path.stat().st_mtime_ns
    result = _thp(host)
    assert not result["failed"] and not result["warnings"], result
    assert path.stat().st_mtime_ns == stamp


def test_a_record_that_cannot_be_written_is_a_warning(host):
    (host / "var" / "lib").mkdir(parents=True)
    (host / "var" / "lib" / "gpuops-hardening").write_text("not a folder\n")
    result = _thp(host)
    assert not result["failed"] and result["changed"]
    assert any("could not record this call for gpuops.hardening.precheck" in warning for warning in result["warnings"])


def test_a_recorded_call_that_breaks_is_reported_failed_and_not_in_sync(host):
    _thp(host)
    path = host / receipts.RECEIPTS_PATH.lstrip("/")
    calls = _recorded(host)
    calls["thp"]["args"]["enabled"] = "sometimes"
    path.write_text(receipts.render(calls))
    result = _precheck(host)
    assert result["in_sync"] == []
    assert result["features"][0]["result"]["failed"] is True
    assert "enabled" in result["features"][0]["result"]["msg"]


def test_modules_leaves_the_other_calls_out(host):
    _thp(host)
    assert _precheck(host, modules=["memlock"])["features"] == []


def test_no_record_checks_nothing(host):
    result = _precheck(host)
    assert result["features"] == [] and result["in_sync"] == []


@pytest.mark.parametrize("text", [None, "", "{", "[]", '{"calls": []}', '{"calls": {"x": {"module": 1, "args": {}}}}'])
def test_a_record_that_is_not_ours_reads_as_none(text):
    assert receipts.parse(text) == {}


def test_uses_of_one_module_are_told_apart_by_their_paths():
    launcher = {"folders": [{"path": "/usr/local/lib/gpuops-hardening"}], "files": [{"path": "/usr/local/bin/gpu-numa-exec"}]}
    boot = {"files": [{"path": "/etc/systemd/system/gpuops-mig.service"}]}
    assert receipts.use_key("installed_files", launcher) != receipts.use_key("installed_files", boot)
    assert receipts.use_key("installed_files", dict(launcher, owner="root")) == receipts.use_key("installed_files", launcher)
    # A call that only removes paths is a use of its own; calls that remove nothing keep their key.
    boot_off = {"absent": ["/etc/systemd/system/gpuops-mig.service"], "units": [{"name": "gpuops-mig.service", "enabled": False}]}
    assert receipts.use_key("installed_files", boot_off) not in (receipts.use_key("installed_files", {}),
                                                                 receipts.use_key("installed_files", boot))
    assert receipts.use_key("installed_files", dict(launcher, absent=[])) == receipts.use_key("installed_files", launcher)
    assert receipts.use_key("gpu_numa_facts", {"fact_path": "/etc/ansible/facts.d/gpu_topology.fact"}) != "gpu_numa_facts"
    assert receipts.use_key("thp", TRAINING) == "thp"


def test_the_precheck_holds_the_node_lock_through_every_check(host):
    _thp(host)
    seen = []

    def thp_seeing_the_lock():
        seen.append(run_lock.locks_held())
        thp_main.main()

    with mock.patch.dict(precheck.FEATURES, thp=thp_seeing_the_lock):
        assert _precheck(host)["in_sync"] == ["thp"]
    # Held by the precheck while the call ran, and let go when the precheck ended.
    assert seen == [1] and run_lock.locks_held() == 0


def test_gather_subset_min_returns_the_minimal_facts_named_as_setup_names_them(host):
    """molecule/default/tests/test_precheck.py compares them with setup's own on a lab node, key for key."""
    facts = _precheck(host, gather_subset=["min"])["ansible_facts"]
    for name in ("ansible_os_family", "ansible_distribution", "ansible_distribution_major_version", "ansible_pkg_mgr",
                 "ansible_service_mgr", "ansible_system", "ansible_python", "ansible_local", "ansible_env"):
        assert name in facts, name
    assert facts["gather_subset"] == ["min"] and facts["module_setup"] is True
    # Only the minimal subset: no hardware or network facts.
    assert "ansible_memtotal_mb" not in facts and "ansible_default_ipv4" not in facts


def test_no_gather_subset_returns_no_facts_and_an_unknown_subset_fails(host):
    assert "ansible_facts" not in _precheck(host)
    result = run_module(precheck_module.main, dict(root=str(host), gather_subset=["gpus"]))
    assert result["failed"] and result["msg"].startswith("gather_subset: ") and "gpus" in result["msg"], result
