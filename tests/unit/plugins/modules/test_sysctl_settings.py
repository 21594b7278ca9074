# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sysctl_settings module against a fake /proc/sys and sysctl.d tree."""

from __future__ import annotations

import errno
from unittest import mock

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import sysctl_settings
from ansible_collections.gpuops.hardening.plugins.modules.sysctl_settings import main as sysctl_settings_main
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module

SETTINGS = {"vm.swappiness": 0, "kernel.numa_balancing": 0, "vm.max_map_count": 1048576}
NOTES = {"vm.swappiness": "Swap is off.", "vm/max_map_count": "Frameworks map many regions."}
CONTENT = (
    "# Managed by gpuops.hardening (module sysctl_settings); edits here are overwritten.\n"
    "# Kernel VM settings for GPU nodes: training profile.\n"
    "# Files named after this one in /etc/sysctl.d, /run/sysctl.d, /usr/local/lib/sysctl.d\n"
    "# or /usr/lib/sysctl.d, and /etc/sysctl.conf, override it; the module reports them.\n"
    "\n"
    "kernel.numa_balancing = 0\n"
    "\n"
    "# Frameworks map many regions.\n"
    "vm.max_map_count = 1048576\n"
    "\n"
    "# Swap is off.\n"
    "vm.swappiness = 0\n"
)


@pytest.fixture
def node(tmp_path):
    """A kernel at stock values and empty sysctl.d directories."""
    proc = tmp_path / "proc/sys"
    (proc / "vm").mkdir(parents=True)
    (proc / "kernel").mkdir()
    (proc / "vm/swappiness").write_text("60\n")
    (proc / "kernel/numa_balancing").write_text("1\n")
    (proc / "vm/max_map_count").write_text("65530\n")
    dirs = [tmp_path / "etc/sysctl.d", tmp_path / "run/sysctl.d", tmp_path / "usr/lib/sysctl.d"]
    for directory in dirs:
        directory.mkdir(parents=True)
    (tmp_path / "etc/sysctl.conf").write_text("#vm.swappiness = 10\n")
    (dirs[0] / "99-sysctl.conf").symlink_to("../sysctl.conf")
    return tmp_path


def _args(node, **extra):
    args = dict(
        settings=dict(SETTINGS), notes=dict(NOTES), description="Kernel VM settings for GPU nodes: training profile.",
        root=str(node),
    )
    args.update(extra)
    return args


def _live(node):
    return dict((key, (node / "proc/sys" / key.replace(".", "/")).read_text().strip())
                for key in ("vm.swappiness", "kernel.numa_balancing", "vm.max_map_count"))


def test_applies_differing_values_and_writes_the_file(node):
    result = run_module(sysctl_settings_main, _args(node), diff=True)
    assert not result["failed"], result
    assert result["changed"] and result["file"]["changed"]
    assert result["before"] == {"vm.swappiness": "60", "kernel.numa_balancing": "1", "vm.max_map_count": "65530"}
    assert result["after"] == {"vm.swappiness": "0", "kernel.numa_balancing": "0", "vm.max_map_count": "1048576"}
    assert result["live_applied"] and result["live_skipped"] == {}
    assert _live(node) == result["after"]
    assert (node / "etc/sysctl.d/90-gpuops-hardening.conf").read_text() == CONTENT
    live, file_diff = result["diff"]
    assert live["before"] == "vm.swappiness = 60\nkernel.numa_balancing = 1\nvm.max_map_count = 65530\n"
    assert live["after"] == "vm.swappiness = 0\nkernel.numa_balancing = 0\nvm.max_map_count = 1048576\n"
    assert file_diff["after"] == CONTENT
    assert result["boot_files"][-2:] == [str(node / "etc/sysctl.d/90-gpuops-hardening.conf"), str(node / "etc/sysctl.d/99-sysctl.conf")]
    assert result["conflicts"] == [] and result["masked_by"] is None


def test_second_run_is_a_no_op(node):
    run_module(sysctl_settings_main, _args(node))
    result = run_module(sysctl_settings_main, _args(node), diff=True)
    assert not result["changed"]
    assert result["diff"] == []
    assert result["warnings"] == []


def test_only_differing_keys_are_written(node):
    (node / "proc/sys/vm/swappiness").write_text("0\n")
    with mock.patch.object(sysctl_settings, "write_value", wraps=sysctl_settings.write_value) as writes:
        result = run_module(sysctl_settings_main, _args(node), diff=True)
    assert sorted(call.args[1] for call in writes.call_args_list) == ["0", "1048576"]
    assert "vm.swappiness" not in result["diff"][0]["before"]


def test_check_mode_changes_nothing(node):
    result = run_module(sysctl_settings_main, _args(node), check_mode=True, diff=True)
    assert result["changed"]
    assert result["after"]["vm.swappiness"] == "0"
    assert _live(node)["vm.swappiness"] == "60"
    assert not (node / "etc/sysctl.d/90-gpuops-hardening.conf").exists()
    assert str(node / "etc/sysctl.d/90-gpuops-hardening.conf") in result["boot_files"]


def test_read_only_proc_persists_and_says_so(node):
    reason = "%s is read-only inside this docker container" % (node / "proc/sys/vm/swappiness")
    with mock.patch.object(sysctl_settings, "live_apply_blocker", return_value=reason):
        first = run_module(sysctl_settings_main, _args(node), diff=True)
        second = run_module(sysctl_settings_main, _args(node), diff=True)
    assert first["changed"] and first["file"]["changed"]
    assert [d["after_header"] for d in first["diff"]] == [str(node / "etc/sysctl.d/90-gpuops-hardening.conf")]
    assert first["after"] == first["before"] and not first["live_applied"]
    # Said of /proc/sys as a whole, whichever key hit it first.
    assert first["live_skipped_reason"] == "%s is read-only inside this docker container" % (node / "proc/sys")
    assert sorted(first["live_skipped"]) == ["kernel.numa_balancing", "vm.max_map_count", "vm.swappiness"]
    assert any("live apply skipped" in w and "read-only" in w for w in first["warnings"])
    assert _live(node)["vm.swappiness"] == "60"
    assert not second["changed"] and second["warnings"]


def test_apply_live_false_only_writes_the_file(node):
    result = run_module(sysctl_settings_main, _args(node, apply_live=False))
    assert result["changed"] and result["live_skipped_reason"] == "apply_live is false"
    assert result["warnings"] == []
    assert _live(node)["vm.swappiness"] == "60"


def test_boot_conflict_warns_by_default(node):
    (node / "etc/sysctl.conf").write_text("vm.swappiness = 10\n")
    result = run_module(sysctl_settings_main, _args(node))
    assert not result["failed"]
    assert [(c["key"], c["value"], c["applied_by"]) for c in result["conflicts"]] == [
        ("vm.swappiness", "10", "systemd-sysctl and sysctl --system")]
    assert result["conflicts"][0]["file"] == str(node / "etc/sysctl.d/99-sysctl.conf")
    assert any("sysctl boot conflict: vm.swappiness" in w for w in result["warnings"])
    assert result["live_applied"]


def test_boot_conflict_fail_changes_nothing(node):
    (node / "usr/lib/sysctl.d/95-vendor.conf").write_text("kernel.numa_balancing = 1\n")
    result = run_module(sysctl_settings_main, _args(node, conflict_action="fail"))
    assert result["failed"]
    assert "kernel.numa_balancing" in result["msg"] and "95-vendor.conf line 1 sets 1" in result["msg"]
    assert _live(node)["kernel.numa_balancing"] == "1"
    assert not (node / "etc/sysctl.d/90-gpuops-hardening.conf").exists()


def test_boot_conflict_ignore_is_silent(node):
    (node / "etc/sysctl.d/99-zz.conf").write_text("vm.swappiness = 10\n")
    result = run_module(sysctl_settings_main, _args(node, conflict_action="ignore"))
    assert result["conflicts"] and result["warnings"] == []


def test_masked_file_is_a_conflict(node):
    (node / "etc/sysctl.d/90-gpuops-hardening.conf").write_text("")
    result = run_module(sysctl_settings_main, _args(node, path="/usr/lib/sysctl.d/90-gpuops-hardening.conf", conflict_action="fail"))
    assert result["failed"] and "hides" in result["msg"]


def test_slash_keys_are_understood(node):
    settings = {"vm/swappiness": 0, "kernel/numa_balancing": 0, "vm/max_map_count": "1048576"}
    result = run_module(sysctl_settings_main, _args(node, settings=settings))
    assert not result["failed"], result
    assert sorted(result["after"]) == ["kernel.numa_balancing", "vm.max_map_count", "vm.swappiness"]


def test_missing_key_is_kept_and_reported(node):
    settings = dict(SETTINGS, **{"vm.not_on_this_kernel": 1})
    result = run_module(sysctl_settings_main, _args(node, settings=settings))
    assert not result["failed"], result
    assert result["unsupported"] == ["vm.not_on_this_kernel"]
    assert any("this kernel has no vm.not_on_this_kernel" in w for w in result["warnings"])
    assert "vm.not_on_this_kernel = 1\n" in (node / "etc/sysctl.d/90-gpuops-hardening.conf").read_text()
    assert result["live_applied"]


def test_kernel_refusal_fails_before_the_file_is_written(node):
    def refuse(path, value):
        if path.endswith("max_map_count"):
            raise OSError(errno.EINVAL, "Invalid argument")
        with open(path, "w") as handle:
            handle.write(value)
    with mock.patch.object(sysctl_settings, "write_value", side_effect=refuse):
        result = run_module(sysctl_settings_main, _args(node))
    assert result["failed"]
    assert "the kernel refused vm.max_map_count = 1048576" in result["msg"]
    assert "Applied before that: kernel.numa_balancing, vm.swappiness" in result["msg"]
    assert not (node / "etc/sysctl.d/90-gpuops-hardening.conf").exists()


def test_null_value_leaves_the_key_unmanaged(node):
    settings = dict(SETTINGS, **{"vm.dirty_ratio": None})
    result = run_module(sysctl_settings_main, _args(node, settings=settings))
    assert not result["failed"], result
    assert "vm.dirty_ratio" not in result["after"] and result["unsupported"] == []
    assert (node / "etc/sysctl.d/90-gpuops-hardening.conf").read_text() == CONTENT


def test_file_without_notes_or_description_still_explains_itself(node):
    result = run_module(sysctl_settings_main, _args(node, notes={}, description=None))
    assert not result["failed"], result
    text = (node / "etc/sysctl.d/90-gpuops-hardening.conf").read_text()
    assert text.startswith("# Managed by gpuops.hardening")
    assert text.endswith("\nkernel.numa_balancing = 0\n\nvm.max_map_count = 1048576\n\nvm.swappiness = 0\n")


def test_partner_key_set_later_is_a_conflict(node):
    (node / "proc/sys/vm/dirty_bytes").write_text("0\n")
    (node / "etc/sysctl.d/95-local.conf").write_text("vm.dirty_ratio = 20\n")
    result = run_module(sysctl_settings_main, _args(node, settings={"vm.dirty_bytes": 8589934592}))
    assert [(c["key"], c["other_key"], c["value"]) for c in result["conflicts"]] == [("vm.dirty_bytes", "vm.dirty_ratio", "20")]
    assert any("zeroes vm.dirty_bytes" in w for w in result["warnings"])


@pytest.mark.parametrize("path", ["/etc/sysctl.d/90-gpuops-hardening", "/etc/sysctl.d/90-gpuops.conf.bak", "/etc/sysctl.d/.conf"])
def test_path_systemd_never_reads_fails_before_any_change(node, path):
    result = run_module(sysctl_settings_main, _args(node, path=path))
    assert result["failed"]
    assert path in result["msg"] and "*.conf" in result["msg"]
    assert _live(node)["vm.swappiness"] == "60"
    assert not (node / path.lstrip("/")).exists()


@pytest.mark.parametrize("settings, notes, fragment", [
    ({"vm.swappiness": True}, {}, "an integer or a one-line string"),
    ({"vm.swappiness": {"a": 1}}, {}, "an integer or a one-line string"),
    ({"vm.swappiness": "0\nkernel.x = 1"}, {}, "one-line"),
    ({"swappiness": 0}, {}, "not a sysctl key"),
    ({"net.ipv4.conf.*.rp_filter": 1}, {}, "not a sysctl key"),
    ({"vm.swappiness": 0, "vm/swappiness": 1}, {}, "given twice"),
    ({"vm.swappiness": 0}, {"vm.swappiness": "two\nlines"}, "must be one line"),
])
def test_bad_input_fails_before_any_change(node, settings, notes, fragment):
    result = run_module(sysctl_settings_main, _args(node, settings=settings, notes=notes))
    assert result["failed"]
    assert fragment in result["msg"]
    assert _live(node)["vm.swappiness"] == "60"
    assert not (node / "etc/sysctl.d/90-gpuops-hardening.conf").exists()
