# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The thp module against a fake THP sysfs directory."""

from __future__ import annotations

import os
from unittest import mock

import pytest

from ansible_collections.gpuops.hardening.plugins.modules import thp as thp_module
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module

TRAINING = {"enabled": "always", "defrag": "defer+madvise", "khugepaged_defrag": True}


@pytest.fixture
def sysfs(tmp_path):
    """A THP sysfs directory at kernel defaults, plus a kernel command line."""
    root = tmp_path / "transparent_hugepage"
    (root / "khugepaged").mkdir(parents=True)
    (root / "enabled").write_text("always [madvise] never\n")
    (root / "defrag").write_text("always defer defer+madvise [madvise] never\n")
    (root / "khugepaged" / "defrag").write_text("1\n")
    cmdline = tmp_path / "cmdline"
    cmdline.write_text("BOOT_IMAGE=/vmlinuz root=/dev/vda ro quiet\n")
    return root, cmdline


def _args(sysfs, **extra):
    root, cmdline = sysfs
    args = dict(TRAINING, sysfs_path=str(root), cmdline_path=str(cmdline))
    args.update(extra)
    return args


def _live(root):
    """What the fake kernel now shows, as the choice file would be re-rendered."""
    return (root / "enabled").read_text().strip(), (root / "defrag").read_text().strip(), (root / "khugepaged" / "defrag").read_text().strip()


def test_applies_only_differing_values(sysfs):
    result = run_module(thp_module.main, _args(sysfs), diff=True)
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
    result = run_module(thp_module.main, _args(sysfs), diff=True)
    assert not result["changed"]
    assert result["diff"] == []
    assert result["live_applied"]


def test_check_mode_reports_without_writing(sysfs):
    result = run_module(thp_module.main, _args(sysfs), check_mode=True, diff=True)
    assert result["changed"]
    assert result["after"]["enabled"] == "always"
    assert _live(sysfs[0]) == ("always [madvise] never", "always defer defer+madvise [madvise] never", "1")


def test_khugepaged_defrag_written_as_digit(sysfs):
    result = run_module(thp_module.main, _args(sysfs, enabled="madvise", defrag="defer", khugepaged_defrag=False))
    assert result["changed"]
    assert _live(sysfs[0])[2] == "0"


def test_cmdline_conflict_fail_changes_nothing(sysfs):
    sysfs[1].write_text("root=/dev/vda transparent_hugepage=never\n")
    result = run_module(thp_module.main, _args(sysfs, cmdline_conflict_action="fail"))
    assert result["failed"]
    assert "transparent_hugepage=never" in result["msg"]
    assert result["cmdline_conflict"] and result["cmdline_value"] == "never"
    assert _live(sysfs[0])[0] == "always [madvise] never"


def test_cmdline_conflict_warns_and_applies(sysfs):
    sysfs[1].write_text("root=/dev/vda transparent_hugepage=never\n")
    result = run_module(thp_module.main, _args(sysfs))
    assert not result["failed"]
    assert result["cmdline_conflict"]
    assert any("transparent_hugepage=never" in w for w in result.get("warnings", []))
    assert result["live_applied"]


def test_matching_cmdline_is_no_conflict(sysfs):
    sysfs[1].write_text("root=/dev/vda transparent_hugepage=always\n")
    result = run_module(thp_module.main, _args(sysfs, cmdline_conflict_action="fail"))
    assert not result["failed"]
    assert result["cmdline_value"] == "always"
    assert not result["cmdline_conflict"]


def test_read_only_sysfs_skips_live_apply_visibly(sysfs):
    with mock.patch.object(thp_module, "live_apply_blocker", return_value="/sys/... is read-only inside this docker container"):
        result = run_module(thp_module.main, _args(sysfs))
    assert not result["changed"]
    assert not result["live_applied"]
    assert "read-only" in result["live_skipped_reason"]
    assert any("live apply skipped" in w for w in result.get("warnings", []))


def test_unsupported_value_fails_clearly(sysfs):
    (sysfs[0] / "defrag").write_text("always defer [madvise] never\n")
    result = run_module(thp_module.main, _args(sysfs))
    assert result["failed"]
    assert "defrag=defer+madvise" in result["msg"] and "always, defer, madvise, never" in result["msg"]


def test_missing_thp_support_fails(tmp_path):
    result = run_module(thp_module.main, dict(TRAINING, sysfs_path=str(tmp_path / "absent"), cmdline_path=str(tmp_path / "none")))
    assert result["failed"]
    assert "without transparent hugepage support" in result["msg"]


class FakeSystemctl:
    """Records systemctl calls instead of running them."""

    enabled = set()
    calls = []

    def __init__(self, module, timeout=60):
        self.module = module

    def daemon_reload(self):
        FakeSystemctl.calls.append("daemon-reload")

    def enable(self, unit):
        if unit in FakeSystemctl.enabled:
            return False
        if not self.module.check_mode:
            FakeSystemctl.enabled.add(unit)
            FakeSystemctl.calls.append("enable " + unit)
        return True


def test_unit_written_enabled_then_idempotent(sysfs, tmp_path):
    FakeSystemctl.enabled = set()
    FakeSystemctl.calls = []
    unit = tmp_path / "etc" / "gpuops-thp.service"
    args = _args(sysfs, unit_path=str(unit), unit_content="[Unit]\nDescription=x\n")
    with mock.patch.object(thp_module, "Systemctl", FakeSystemctl):
        first = run_module(thp_module.main, args, diff=True)
        second = run_module(thp_module.main, args, diff=True)
    assert first["changed"] and first["unit"]["changed"]
    assert unit.read_text() == "[Unit]\nDescription=x\n"
    assert oct(os.stat(unit).st_mode & 0o777) == "0o644"
    assert FakeSystemctl.calls == ["daemon-reload", "enable gpuops-thp.service"]
    assert not second["changed"] and not second["unit"]["changed"]
    assert second["diff"] == []


def test_unit_check_mode_writes_nothing(sysfs, tmp_path):
    FakeSystemctl.enabled = set()
    FakeSystemctl.calls = []
    unit = tmp_path / "gpuops-thp.service"
    with mock.patch.object(thp_module, "Systemctl", FakeSystemctl):
        result = run_module(thp_module.main, _args(sysfs, unit_path=str(unit), unit_content="x\n"), check_mode=True, diff=True)
    assert result["changed"] and result["unit"]["changed"]
    assert not unit.exists()
    assert FakeSystemctl.enabled == set()
    assert any(d["after_header"] == str(unit) for d in result["diff"])
