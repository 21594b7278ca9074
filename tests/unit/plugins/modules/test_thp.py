# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The thp module against a fake THP sysfs directory."""

from __future__ import annotations

import os
from unittest import mock

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import thp
from ansible_collections.gpuops.hardening.plugins.module_utils.engines import thp as thp_module
from ansible_collections.gpuops.hardening.plugins.modules.thp import main as thp_main
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.recorded_systemctl import (
    RecordedSystemctl,
    recorded_systemctl,
)
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.thp_host import thp_host_tree

TRAINING = {"enabled": "always", "defrag": "defer+madvise", "khugepaged_defrag": True}


@pytest.fixture(autouse=True)
def systemctl():
    with recorded_systemctl(thp_module) as recorded:
        yield recorded


@pytest.fixture
def sysfs(tmp_path):
    """A host tree: THP sysfs at kernel defaults, a kernel command line, no unit yet."""
    return thp_host_tree(tmp_path)


def _args(sysfs, **extra):
    host_root = sysfs[1].parent.parent
    args = dict(TRAINING, root=str(host_root))
    args.update(extra)
    return args


def _unit(sysfs):
    return sysfs[1].parent.parent / "etc" / "systemd" / "system" / "gpuops-thp.service"


def _live(root):
    """What the fake kernel now shows, as the choice file would be re-rendered."""
    return (root / "enabled").read_text().strip(), (root / "defrag").read_text().strip(), (root / "khugepaged" / "defrag").read_text().strip()


def test_applies_only_differing_values(sysfs):
    result = run_module(thp_main, _args(sysfs), diff=True)
    assert not result["failed"], result
    assert result["changed"]
    assert result["before"] == {"enabled": "madvise", "defrag": "madvise", "khugepaged_defrag": True}
    assert result["after"] == TRAINING
    assert result["live_applied"]
    # The kernel accepts a bare value; the fake file now holds exactly what was written.
    assert _live(sysfs[0]) == ("always", "defer+madvise", "1")
    assert result["diff"][0]["before"] == "enabled: madvise\ndefrag: madvise\nkhugepaged_defrag: True\n"
    assert result["diff"][0]["after"] == "enabled: always\ndefrag: defer+madvise\nkhugepaged_defrag: True\n"


def test_second_run_is_a_no_op(sysfs):
    root = sysfs[0]
    (root / "enabled").write_text("[always] madvise never\n")
    (root / "defrag").write_text("always defer [defer+madvise] madvise never\n")
    result = run_module(thp_main, _args(sysfs, persist=False), diff=True)
    assert not result["changed"]
    assert result["diff"] == []
    assert result["live_applied"]


def test_check_mode_reports_without_writing(sysfs):
    result = run_module(thp_main, _args(sysfs), check_mode=True, diff=True)
    assert result["changed"]
    assert result["after"]["enabled"] == "always"
    assert _live(sysfs[0]) == ("always [madvise] never", "always defer defer+madvise [madvise] never", "1")


def test_khugepaged_defrag_written_as_digit(sysfs):
    result = run_module(thp_main, _args(sysfs, enabled="madvise", defrag="defer", khugepaged_defrag=False))
    assert result["changed"]
    assert _live(sysfs[0])[2] == "0"


def test_cmdline_conflict_fail_changes_nothing(sysfs):
    sysfs[1].write_text("root=/dev/vda transparent_hugepage=never\n")
    result = run_module(thp_main, _args(sysfs, cmdline_conflict_action="fail"))
    assert result["failed"]
    assert "transparent_hugepage=never" in result["msg"]
    assert result["cmdline_conflict"] and result["cmdline_value"] == "never"
    assert _live(sysfs[0])[0] == "always [madvise] never"


def test_cmdline_conflict_warns_and_applies(sysfs):
    sysfs[1].write_text("root=/dev/vda transparent_hugepage=never\n")
    result = run_module(thp_main, _args(sysfs))
    assert not result["failed"]
    assert result["cmdline_conflict"]
    assert any("transparent_hugepage=never" in w for w in result.get("warnings", []))
    assert result["live_applied"]


def test_matching_cmdline_is_no_conflict(sysfs):
    sysfs[1].write_text("root=/dev/vda transparent_hugepage=always\n")
    result = run_module(thp_main, _args(sysfs, cmdline_conflict_action="fail"))
    assert not result["failed"]
    assert result["cmdline_value"] == "always"
    assert not result["cmdline_conflict"]


def test_read_only_sysfs_skips_live_apply_visibly(sysfs):
    with mock.patch.object(thp_module, "live_apply_blocker", return_value="/sys/... is read-only inside this docker container"):
        result = run_module(thp_main, _args(sysfs, persist=False))
    assert not result["changed"]
    assert not result["live_applied"]
    assert "read-only" in result["live_skipped_reason"]
    assert any("live apply skipped" in w for w in result.get("warnings", []))


def test_unsupported_value_fails_clearly(sysfs):
    (sysfs[0] / "defrag").write_text("always defer [madvise] never\n")
    result = run_module(thp_main, _args(sysfs))
    assert result["failed"]
    assert "defrag=defer+madvise" in result["msg"] and "always, defer, madvise, never" in result["msg"]


def test_missing_thp_support_fails(tmp_path):
    result = run_module(thp_main, dict(TRAINING, root=str(tmp_path)))
    assert result["failed"]
    assert "without transparent hugepage support" in result["msg"]


def test_unit_written_enabled_then_idempotent(sysfs):
    args = _args(sysfs, profile="training")
    first = run_module(thp_main, args, diff=True)
    second = run_module(thp_main, args, diff=True)
    unit = _unit(sysfs)
    assert first["changed"] and first["unit"]["changed"]
    text = unit.read_text()
    assert text.startswith(thp.UNIT_MARKER)
    assert "Description=Transparent hugepages for GPU workloads (training profile)\n" in text
    assert "ExecStart=/bin/sh -c 'echo defer+madvise > /sys/kernel/mm/transparent_hugepage/defrag'\n" in text
    assert oct(os.stat(unit).st_mode & 0o777) == "0o644"
    assert RecordedSystemctl.calls == ["daemon-reload", "enable gpuops-thp.service"]
    assert not second["changed"] and not second["unit"]["changed"]
    assert second["diff"] == []


def test_unit_check_mode_writes_nothing(sysfs):
    result = run_module(thp_main, _args(sysfs), check_mode=True, diff=True)
    assert result["changed"] and result["unit"]["changed"]
    assert not _unit(sysfs).exists()
    assert RecordedSystemctl.enabled == set() and RecordedSystemctl.calls == []
    assert any(d["after_header"] == str(_unit(sysfs)) for d in result["diff"])


def test_persist_false_disables_and_removes_our_unit(sysfs):
    run_module(thp_main, _args(sysfs))
    RecordedSystemctl.calls = []
    result = run_module(thp_main, _args(sysfs, persist=False), diff=True)
    assert not result["failed"], result
    assert result["changed"] and result["unit"] == {
        "path": str(_unit(sysfs)), "changed": True, "present": False, "enabled": False, "managed": True}
    assert not _unit(sysfs).exists()
    assert RecordedSystemctl.calls == ["disable gpuops-thp.service", "daemon-reload"]
    assert any(d["after_header"] == "%s (absent)" % _unit(sysfs) for d in result["diff"])
    again = run_module(thp_main, _args(sysfs, persist=False))
    assert not again["changed"]


def test_persist_false_check_mode_keeps_the_unit(sysfs):
    run_module(thp_main, _args(sysfs))
    RecordedSystemctl.calls = []
    result = run_module(thp_main, _args(sysfs, persist=False), check_mode=True, diff=True)
    assert result["changed"] and result["unit"]["changed"]
    assert _unit(sysfs).exists()
    assert RecordedSystemctl.calls == [] and RecordedSystemctl.enabled == {"gpuops-thp.service"}


def test_persist_false_removes_a_unit_from_the_old_role_template(sysfs):
    unit = _unit(sysfs)
    unit.parent.mkdir(parents=True)
    unit.write_text("#\n# Ansible managed\n#\n# Re-applies the transparent hugepage settings of the "
                    "gpuops.hardening thp role\n[Unit]\n")
    RecordedSystemctl.enabled = {"gpuops-thp.service"}
    result = run_module(thp_main, _args(sysfs, persist=False))
    assert result["unit"]["changed"] and not unit.exists()
    assert RecordedSystemctl.enabled == set()


def test_persist_false_leaves_a_foreign_unit_alone(sysfs):
    unit = _unit(sysfs)
    unit.parent.mkdir(parents=True)
    unit.write_text("[Unit]\nDescription=the site's own THP unit\n")
    result = run_module(thp_main, _args(sysfs, persist=False))
    assert not result["failed"], result
    assert unit.read_text() == "[Unit]\nDescription=the site's own THP unit\n"
    assert result["unit"]["managed"] is False and not result["unit"]["changed"]
    assert any("not written by gpuops.hardening.thp" in w for w in result["warnings"])
    assert RecordedSystemctl.calls == []


def test_persist_without_values_fails(sysfs):
    result = run_module(thp_main, {"root": _args(sysfs)["root"]})
    assert result["failed"] and "nothing to apply" in result["msg"]


@pytest.mark.parametrize("persist, expected, absent", [
    (True, "gpuops-thp.service unit sets it again after every boot", "no boot unit"),
    (False, "no boot unit is managed (persist is false), so every boot starts with 'never' again", "after every boot"),
])
def test_cmdline_message_says_whether_a_unit_is_managed(sysfs, persist, expected, absent):
    sysfs[1].write_text("root=/dev/vda transparent_hugepage=never\n")
    result = run_module(thp_main, _args(sysfs, persist=persist))
    assert expected in result["cmdline_message"]
    assert absent not in result["cmdline_message"]
    assert "sets enabled=always on the running kernel" in result["cmdline_message"]


def test_cmdline_message_when_live_apply_is_skipped(sysfs):
    sysfs[1].write_text("root=/dev/vda transparent_hugepage=never\n")
    result = run_module(thp_main, _args(sysfs, apply_live=False))
    assert "The running kernel keeps its value (live apply skipped: apply_live is false)" in result["cmdline_message"]
    assert "on the running kernel" not in result["cmdline_message"].replace("The running kernel keeps", "")
