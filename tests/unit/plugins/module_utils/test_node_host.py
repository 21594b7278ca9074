# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host object engines share, and the feature module around an engine (run_engine)."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import thp as thp_engine
from ansible_collections.gpuops.hardening.plugins.module_utils.node_host import LEGACY_RECORD_PATH, FeatureFailed, NodeHost
from ansible_collections.gpuops.hardening.plugins.modules.thp import main as thp_main
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.recorded_systemctl import recorded_systemctl
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.thp_host import thp_host_tree

TRAINING = {"enabled": "always", "defrag": "defer+madvise", "khugepaged_defrag": True}


class FakeModule:
    """The few AnsibleModule methods NodeHost reaches for."""

    def __init__(self):
        self.commands = []

    def run_command(self, args, **kwargs):
        self.commands.append(list(args))
        return 0, "", ""

    def get_bin_path(self, arg, required=False, opt_dirs=None):
        return None


@pytest.fixture
def node(tmp_path):
    thp_host_tree(tmp_path)
    with recorded_systemctl(thp_engine):
        yield tmp_path


def _legacy_record(root):
    path = root / LEGACY_RECORD_PATH.lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"thp": {"module": "thp", "args": {}}}\n')
    return path


def test_a_failing_engine_raises_with_what_it_found():
    feature = NodeHost(FakeModule()).feature("thp", {}, check_mode=False)
    with pytest.raises(FeatureFailed) as raised:
        feature.fail_json(msg="THP conflict, nothing changed", cmdline_value="never")
    assert raised.value.msg == "THP conflict, nothing changed"
    assert raised.value.result == {"cmdline_value": "never"}


def test_a_required_tool_that_is_missing_fails_the_feature_not_the_process():
    feature = NodeHost(FakeModule()).feature("mps", {}, check_mode=False)
    with pytest.raises(FeatureFailed, match="nvidia-cuda-mps-control"):
        feature.get_bin_path("nvidia-cuda-mps-control", required=True)


def test_warnings_of_every_feature_reach_the_host():
    host = NodeHost(FakeModule())
    host.feature("thp", {}, False).warn("one")
    host.feature("sysctl_settings", {}, False).warn("two")
    assert host.warnings == ["one", "two"]


def test_the_first_run_removes_the_replay_record_of_1x_and_says_so(node):
    record = _legacy_record(node)
    result = run_module(thp_main, dict(TRAINING, root=str(node)))
    assert not result["failed"], result
    assert not record.exists()
    assert result["changed"] and result["legacy_record_removed"] == str(record)
    assert any("removed %s" % record in warning for warning in result["warnings"])
    again = run_module(thp_main, dict(TRAINING, root=str(node)))
    assert not again["changed"] and "legacy_record_removed" not in again


def test_check_mode_predicts_the_removal_and_keeps_the_record(node):
    record = _legacy_record(node)
    checked = run_module(thp_main, dict(TRAINING, root=str(node)), check_mode=True)
    assert record.exists()
    assert checked["changed"] and checked["legacy_record_removed"] == str(record)
    assert any("would remove %s" % record in warning for warning in checked["warnings"])


def test_the_diff_comes_back_only_when_asked(node):
    assert "diff" not in run_module(thp_main, dict(TRAINING, root=str(node)), check_mode=True)
    assert run_module(thp_main, dict(TRAINING, root=str(node)), check_mode=True, diff=True)["diff"]
