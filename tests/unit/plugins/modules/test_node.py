# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.hardening.node: a plan's features in one call, against a host tree (sysctl, THP, installed files)."""

from __future__ import annotations

import os
import stat
import time

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import converge_stamp
from ansible_collections.gpuops.hardening.plugins.module_utils.engines import gpu_numa_facts as gpu_numa_facts_engine
from ansible_collections.gpuops.hardening.plugins.module_utils.engines import memlock as memlock_engine
from ansible_collections.gpuops.hardening.plugins.module_utils.engines import nvidia_mig as nvidia_mig_engine
from ansible_collections.gpuops.hardening.plugins.module_utils.engines import thp as thp_engine
from ansible_collections.gpuops.hardening.plugins.module_utils.node_host import LEGACY_RECORD_PATH
from ansible_collections.gpuops.hardening.plugins.modules.installed_files import main as installed_files_main
from ansible_collections.gpuops.hardening.plugins.modules.node import main as node_main
from ansible_collections.gpuops.hardening.plugins.modules.sysctl_settings import main as sysctl_settings_main
from ansible_collections.gpuops.hardening.plugins.modules.thp import main as thp_main
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import NODE_LOCK_PATHS, run_module
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.recorded_systemctl import recorded_systemctl
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.thp_host import thp_host_tree

SYSCTL = {"settings": {"vm.swappiness": 0, "kernel.numa_balancing": 0}}
THP = {"enabled": "always", "defrag": "defer+madvise", "khugepaged_defrag": True}
LAUNCHER = {"folders": [{"path": "/opt/gpuops/bin", "mode": "0755"}],
            "files": [{"path": "/opt/gpuops/bin/launch", "content": "#!/bin/sh\nexec \"$@\"\n", "mode": "0755"}]}
PLAN = [
    {"name": "sysctl", "engine": "sysctl_settings", "args": SYSCTL},
    {"name": "thp", "engine": "thp", "args": THP},
    {"name": "launcher", "engine": "installed_files", "args": LAUNCHER},
]
# Each feature's own module, for the same work done call by call.
MODULES = {"sysctl_settings": sysctl_settings_main, "thp": thp_main, "installed_files": installed_files_main}


def host_tree(root):
    """A stock kernel (swappiness 60, NUMA balancing on, THP madvise) and empty configuration folders."""
    thp_host_tree(root)
    for key, value in (("vm/swappiness", "60"), ("kernel/numa_balancing", "1")):
        path = root / "proc/sys" / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n")
    for folder in ("etc/sysctl.d", "run/sysctl.d", "usr/lib/sysctl.d"):
        (root / folder).mkdir(parents=True)
    return root


@pytest.fixture
def node(tmp_path):
    with recorded_systemctl(thp_engine):
        yield host_tree(tmp_path / "host")


def converge(root, features=None, check_mode=False):
    return run_module(node_main, {"root": str(root), "features": features or PLAN}, check_mode=check_mode, diff=True)


def tree(root):
    """{relative path: (mode, content)} of everything below root, the node lock left out: a file's bytes,
    a link's target, and None for a folder, a socket or a pipe."""
    found = {}
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root)
            if relative in NODE_LOCK_PATHS:
                continue
            mode = os.lstat(path).st_mode
            content = None
            if stat.S_ISLNK(mode):
                content = os.readlink(path)
            elif stat.S_ISREG(mode):
                with open(path, "rb") as handle:
                    content = handle.read()
            found[relative] = (mode, content)
    return found


def test_one_call_converges_every_feature_in_the_plans_order_then_finds_nothing_to_do(node):
    first = converge(node)
    assert not first["failed"], first
    assert first["changed"] and list(first["features"]) == ["sysctl", "thp", "launcher"]
    assert all(first["features"][name]["changed"] for name in first["features"])
    assert first["failed_feature"] is None and first["handlers"] == [] and first["failed_features"] == []
    assert (node / "proc/sys/vm/swappiness").read_text().strip() == "0"
    assert (node / "opt/gpuops/bin/launch").read_text().startswith("#!/bin/sh")
    again = converge(node)
    assert not again["failed"] and not again["changed"], again
    assert not any(result["changed"] for result in again["features"].values())


def test_the_call_leaves_the_node_as_the_modules_do_one_by_one(tmp_path):
    with recorded_systemctl(thp_engine):
        together = host_tree(tmp_path / "together")
        one_by_one = host_tree(tmp_path / "one-by-one")
        assert not converge(together)["failed"]
        for feature in PLAN:
            result = run_module(MODULES[feature["engine"]], dict(feature["args"], root=str(one_by_one)))
            assert not result["failed"], result
    # The node call alone records when it converged; the modules alone do not.
    converged = tree(together)
    assert converged.pop(converge_stamp.STAMP_PATH.lstrip("/"))[1] == converge_stamp.CONTENT.encode()
    for folder in ("var/lib/gpuops-hardening", "var/lib", "var"):
        converged.pop(folder)
    assert converged == tree(one_by_one)


# Each feature alone, then the whole plan: check mode on the node as it is must say what the real run then does.
CASES = [[feature] for feature in PLAN] + [PLAN]


@pytest.mark.parametrize("features", CASES, ids=["sysctl", "thp", "launcher", "whole plan"])
def test_check_mode_predicts_exactly_what_the_real_run_does(node, features):
    before = tree(node)
    predicted = converge(node, features, check_mode=True)
    assert tree(node) == before, "check mode changed the node"
    done = converge(node, features)
    assert not done["failed"], done
    assert predicted == done
    # On the converged node, check mode and the real run agree again, both with nothing to do.
    assert converge(node, features, check_mode=True) == converge(node, features)


def test_the_first_failure_stops_the_call_and_names_its_feature(node):
    (node / "proc/cmdline").write_text("root=/dev/vda transparent_hugepage=never\n")
    plan = [PLAN[0], dict(PLAN[1], args=dict(THP, cmdline_conflict_action="fail")), PLAN[2]]
    result = converge(node, plan)
    assert result["failed"] and result["failed_feature"] == "thp"
    assert result["msg"].startswith("thp: THP conflict, nothing changed")
    assert list(result["features"]) == ["sysctl", "thp"], "the launcher ran after the failure"
    assert result["changed"] and result["features"]["sysctl"]["changed"]
    assert not (node / "opt").exists()


@pytest.mark.parametrize("feature, message", [
    ({"name": "thp", "engine": "thp", "args": dict(THP, enabled="sometimes")},
     "features[1] (thp): value of enabled must be one of: always, madvise, never, got: sometimes"),
    ({"name": "thp", "engine": "thp", "args": dict(THP, root="/elsewhere")},
     "features[1] (thp): root is set once for the whole call, not per feature"),
    ({"name": "sysctl", "engine": "thp", "args": THP}, "features: each name must be unique, got sysctl more than once"),
])
def test_a_bad_plan_fails_before_any_change_naming_the_feature(node, feature, message):
    before = tree(node)
    result = converge(node, [PLAN[0], feature, PLAN[2]])
    assert result["failed"] and not result["changed"], result
    assert result["msg"].startswith(message), result["msg"]
    assert result["msg"].endswith("nothing was changed")
    assert tree(node) == before


def test_a_converge_records_its_time_and_neither_check_mode_nor_a_failure_does(node):
    assert not converge(node, check_mode=True)["failed"]
    assert converge_stamp.last_converged(str(node)) is None, "check mode recorded a converge"
    (node / "proc/cmdline").write_text("root=/dev/vda transparent_hugepage=never\n")
    failing = [PLAN[0], dict(PLAN[1], args=dict(THP, cmdline_conflict_action="fail"))]
    assert converge(node, failing)["failed"]
    assert converge_stamp.last_converged(str(node)) is None, "a failed call recorded a converge"
    (node / "proc/cmdline").write_text("root=/dev/vda\n")
    before = time.time()
    first = converge(node)
    assert not first["failed"] and first["changed"]
    assert converge_stamp.last_converged(str(node)) >= before - 1
    # Bookkeeping, not a change: a converged node stays unchanged, and its stamp moves.
    converge_stamp.record(str(node), now=1000)
    again = converge(node)
    assert not again["changed"], again
    assert converge_stamp.last_converged(str(node)) >= before - 1


def test_the_call_removes_the_replay_record_of_1x_once(node):
    record = node / LEGACY_RECORD_PATH.lstrip("/")
    record.parent.mkdir(parents=True)
    record.write_text("{}\n")
    first = converge(node)
    assert first["legacy_record_removed"] == str(record) and not record.exists()
    assert any("removed %s" % record in warning for warning in first["warnings"])
    assert "legacy_record_removed" not in converge(node)


def test_each_warning_names_its_feature(node):
    (node / "proc/cmdline").write_text("root=/dev/vda transparent_hugepage=never\n")
    result = converge(node)
    assert any(warning.startswith("thp: THP conflict") for warning in result["warnings"]), result["warnings"]


@pytest.mark.parametrize("pending, restart_services, handlers", [
    ({"daemon_reexec": True, "daemon_reload": True, "restart": []}, False, [{"action": "daemon_reexec"}]),
    ({"daemon_reexec": False, "daemon_reload": True, "restart": ["slurmd.service"]}, False, [{"action": "daemon_reload"}]),
    ({"daemon_reexec": False, "daemon_reload": False, "restart": ["slurmd.service"]}, True,
     [{"action": "restart", "unit": "slurmd.service"}]),
    ({"daemon_reexec": False, "daemon_reload": False, "restart": []}, True, []),
])
def test_memlocks_handlers_are_what_its_role_runs(pending, restart_services, handlers):
    """roles/validate/tasks/node.yml runs them: a re-exec covers a reload; restarts only with restart_services."""
    assert memlock_engine.handlers({"restart_services": restart_services}, {"pending": pending}) == handlers


def test_keep_going_runs_every_feature_and_keeps_each_failure_in_its_result(node):
    (node / "proc/cmdline").write_text("root=/dev/vda transparent_hugepage=never\n")
    plan = [PLAN[0], dict(PLAN[1], args=dict(THP, cmdline_conflict_action="fail")), PLAN[2]]
    result = run_module(node_main, {"root": str(node), "features": plan, "keep_going": True}, check_mode=True)
    assert not result["failed"] and result["failed_feature"] is None, result
    assert result["failed_features"] == ["thp"] and result["features"]["thp"]["failed"]
    assert result["features"]["thp"]["msg"].startswith("THP conflict, nothing changed")
    assert list(result["features"]) == ["sysctl", "thp", "launcher"]


def test_timings_give_each_features_seconds_only_when_asked(node):
    timed = run_module(node_main, {"root": str(node), "features": PLAN, "timings": True})
    assert sorted(timed["timings"]) == ["launcher", "sysctl", "thp"]
    assert all(isinstance(seconds, float) and seconds >= 0 for seconds in timed["timings"].values())
    assert "timings" not in converge(node)


def test_the_topology_and_mig_features_ask_the_play_for_packages_and_a_reboot():
    spec = {"numactl_packages": ["numactl"]}
    assert gpu_numa_facts_engine.handlers(spec, {"numactl_path": None}) == [{"action": "install", "packages": ["numactl"]}]
    assert gpu_numa_facts_engine.handlers(spec, {"numactl_path": "/usr/bin/numactl"}) == []
    assert gpu_numa_facts_engine.handlers({"numactl_packages": []}, {"numactl_path": None}) == []
    waiting = {"gpus": [{"index": 0, "reboot_required": False},
                        {"index": 2, "reboot_required": True, "reboot_reason": "no reset"}]}
    (reboot,) = nvidia_mig_engine.handlers({}, waiting)
    assert reboot["action"] == "reboot" and "GPU 2: no reset; reboot the node" in reboot["msg"]
    assert nvidia_mig_engine.handlers({}, {"gpus": [{"index": 0, "reboot_required": False}]}) == []


# The MIG survey: the GPUs' modes, the profile and placement tables, the instances (mig_survey.py).
SURVEY = (("--query-gpu=index,uuid,name,pci.device_id,pci.bus_id,mig.mode.current,mig.mode.pending",), ("-lgip",),
          ("-lgipp",), ("-lgi",), ("-lci",))


def test_the_check_before_any_change_and_the_converge_share_the_mig_survey_until_the_node_changes(mig_node):
    """On a converged node the survey the first check read answers the converge's; the process check (-q -x), which
    guards against work on the GPUs, is read again. Once a feature changes the node, everything is read again."""
    node = mig_node(mig_gpus=(0,))
    layout = {"name": "mig_layout", "engine": "nvidia_mig",
              "args": {"layouts": {0: {"mig_enabled": True, "mig_devices": {"3g.40gb": 1, "1g.10gb": 2}}}}}
    first = run_module(node_main, {"root": node.root, "features": [layout], "timings": True}, diff=True)
    assert not first["failed"] and first["changed"], first

    node.calls.clear()
    again = run_module(node_main, {"root": node.root, "features": [layout], "timings": True}, diff=True)
    assert not again["failed"] and not again["changed"], again
    assert [len(node.ran(*words)) for words in SURVEY] == [1] * len(SURVEY), node.calls
    assert len(node.ran("-q", "-x")) == 2 and again["nvidia_smi_reads_shared"] == len(SURVEY)

    # A change in between (the first layout on GPU 0 again, after the test removes an instance): read again.
    node.calls.clear()
    twice = dict(layout, name="mig_layout_again")
    node.smi("mig", "-i", "0", "-gi", str(node.instances(0)[0][0]), "-dci")
    node.smi("mig", "-i", "0", "-gi", str(node.instances(0)[0][0]), "-dgi")
    node.calls.clear()
    changed = run_module(node_main, {"root": node.root, "features": [layout, twice], "timings": True}, diff=True)
    assert not changed["failed"] and changed["features"]["mig_layout"]["changed"], changed
    assert not changed["features"]["mig_layout_again"]["changed"], changed
    # The checks of both features and the first converge share one survey; the creation forgets it, so the second
    # feature reads anew.
    assert [len(node.ran(*words)) for words in SURVEY] == [2] * len(SURVEY), node.calls
    assert changed["nvidia_smi_reads_shared"] == 2 * len(SURVEY)
