# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet_config module on a host tree: a 2-node sysfs, the kubelet's file and state files,
and a stand-in systemctl that records what the kubelet unit was told."""

from __future__ import annotations

import os
from unittest import mock

import pytest
import yaml

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import kubelet_config as module
from ansible_collections.gpuops.hardening.plugins.modules.kubelet_config import main as kubelet_config_main
from ansible_collections.gpuops.hardening.tests.unit.plugins.module_utils import fake_sysfs
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module

CONFIG = "/var/lib/kubelet/config.yaml"
STATE_FILES = ("cpu_manager_state", "memory_manager_state")
USER_TEXT = """apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
clusterDNS:
- 10.96.0.10
kubeReserved:
  cpu: 500m
evictionHard:
  nodefs.available: 10%
cpuManagerPolicy: none
"""
SETTINGS = {
    "cpuManagerPolicy": "static",
    "reservedSystemCPUs": "0-1",
    "topologyManagerPolicy": "single-numa-node",
    "topologyManagerScope": "container",
    "memoryManagerPolicy": "Static",
    "kubeReserved": {"memory": "512Mi"},
    "systemReserved": {"memory": "512Mi"},
    "evictionHard": {"memory.available": "100Mi"},
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "562Mi"}}, {"numaNode": 1, "limits": {"memory": "562Mi"}}],
}


class FakeSystemctl:
    """systemctl for the kubelet unit: its state and the verbs it got."""

    def __init__(self):
        self.active = True
        self.calls = []

    def __call__(self, module, timeout=60):  # the module builds Systemctl(module, timeout=...)
        self.module = module
        return self

    def show(self, units, properties):  # pylint: disable=unused-argument
        return [{"LoadState": "loaded", "ActiveState": "active" if self.active else "inactive"}]

    def stop(self, unit):
        if not self.module.check_mode:
            self.calls.append(("stop", unit))
            self.active = False

    def start(self, unit, restart=False):
        if not self.module.check_mode:
            self.calls.append(("restart" if restart else "start", unit))
            self.active = True


@pytest.fixture
def host(tmp_path):
    root = tmp_path / "host"
    fake_sysfs.build(root / "sys", {0: {"cpus": "0-3"}, 1: {"cpus": "4-7"}}, {})
    kubelet_dir = root / "var" / "lib" / "kubelet"
    kubelet_dir.mkdir(parents=True)
    (kubelet_dir / "config.yaml").write_text(USER_TEXT)
    for name in STATE_FILES:
        (kubelet_dir / name).write_text('{"policyName":"none","checksum":1}')
    systemctl = FakeSystemctl()
    with mock.patch.object(module, "Systemctl", systemctl):
        yield root, kubelet_dir, systemctl


def run(root, check_mode=False, **args):
    return run_module(kubelet_config_main, dict(dict(root=str(root), settings=SETTINGS), **args), check_mode=check_mode, diff=True)


def converge_and_restart(root, kubelet_dir):
    """A first converge, after which the kubelet writes both state files again."""
    run(root)
    for name in STATE_FILES:
        (kubelet_dir / name).write_text("{}")


def test_converge_merges_resets_state_and_is_idempotent(host):
    root, kubelet_dir, systemctl = host
    checked = run(root, check_mode=True)
    assert checked["changed"] and not checked["failed"]
    assert (kubelet_dir / "config.yaml").read_text() == USER_TEXT
    assert systemctl.calls == []
    assert checked["state_files_removed"] == ["/var/lib/kubelet/cpu_manager_state", "/var/lib/kubelet/memory_manager_state"]

    result = run(root)
    assert result["changed"], result
    written = yaml.safe_load((kubelet_dir / "config.yaml").read_text())
    assert written["clusterDNS"] == ["10.96.0.10"]
    assert written["kubeReserved"] == {"cpu": "500m", "memory": "512Mi"}
    assert written["evictionHard"] == {"nodefs.available": "10%", "memory.available": "100Mi"}
    assert written["reservedSystemCPUs"] == "0-1"
    assert not os.path.exists(kubelet_dir / "cpu_manager_state")
    assert not os.path.exists(kubelet_dir / "memory_manager_state")
    assert systemctl.calls == [("stop", "kubelet"), ("start", "kubelet")]
    assert result["service_action"] == "stopped_and_started"
    assert result["backup_file"] and os.path.exists(result["backup_file"])
    assert {entry["before_header"] for entry in result["diff"]} >= {CONFIG + ": cpuManagerPolicy"}

    # The kubelet wrote its state again; a second run leaves it and the service alone.
    (kubelet_dir / "cpu_manager_state").write_text('{"policyName":"static","checksum":2}')
    for check_mode in (False, True):
        again = run(root, check_mode=check_mode)
        assert not again["changed"] and again["changes"] == [] and again["state_files_removed"] == []
    assert os.path.exists(kubelet_dir / "cpu_manager_state")
    assert systemctl.calls == [("stop", "kubelet"), ("start", "kubelet")]


def test_a_change_without_a_policy_change_restarts_and_keeps_state(host):
    root, kubelet_dir, systemctl = host
    run(root)
    (kubelet_dir / "cpu_manager_state").write_text("{}")
    result = run(root, settings=dict(SETTINGS, topologyManagerPolicy="restricted"))
    assert result["changed"] and result["state_files_removed"] == [] and result["policy_changes"] == []
    assert os.path.exists(kubelet_dir / "cpu_manager_state")
    assert systemctl.calls[-1] == ("restart", "kubelet")


def test_only_the_changed_managers_state_goes(host):
    root, kubelet_dir, dummy = host
    converge_and_restart(root, kubelet_dir)
    result = run(root, settings=dict(SETTINGS, cpuManagerPolicy="none"))
    assert result["state_files_removed"] == ["/var/lib/kubelet/cpu_manager_state"]
    assert os.path.exists(kubelet_dir / "memory_manager_state")


# A reservation the manager's checkpoint was computed from changes under an unchanged static policy: the
# kubelet rejects that checkpoint at start, so the module resets it exactly as for a policy change.
@pytest.mark.parametrize("change, state_file", [
    ({"reservedMemory": [{"numaNode": 0, "limits": {"memory": "1124Mi"}}]}, "memory_manager_state"),
    ({"reservedSystemCPUs": "0-2"}, "cpu_manager_state"),
])
def test_a_reservation_change_resets_the_state_like_a_policy_change(host, change, state_file):
    root, kubelet_dir, systemctl = host
    converge_and_restart(root, kubelet_dir)
    settings = dict(SETTINGS, **change)

    refused = run(root, settings=settings, reset_state=False)
    assert refused["failed"] and state_file in refused["msg"] and "nothing was changed" in refused["msg"]
    checked = run(root, settings=settings, check_mode=True)
    calls_before = list(systemctl.calls)
    result = run(root, settings=settings)

    removed = ["/var/lib/kubelet/" + state_file]
    for outcome in (checked, result):
        assert outcome["changed"] and outcome["policy_changes"] == []
        assert outcome["state_files_removed"] == removed
        assert outcome["service_action"] == "stopped_and_started"
        assert [item["state_file"] for item in outcome["reservation_changes"]] == [state_file]
    assert not os.path.exists(kubelet_dir / state_file)
    assert all(os.path.exists(kubelet_dir / name) for name in STATE_FILES if name != state_file)
    assert systemctl.calls[len(calls_before):] == [("stop", "kubelet"), ("start", "kubelet")]


@pytest.mark.parametrize("settings, message", [
    (dict(SETTINGS, reservedSystemCPUs="0-1,8"), "kubelet_topology_reserved_system_cpus: got '0-1,8'; CPUs 8 do not exist"),
    (dict(SETTINGS, reservedMemory=[{"numaNode": 2, "limits": {"memory": "1124Mi"}}]),
     "kubelet_topology_reserved_memory: got a reservation on NUMA node 2, which this node lacks; allowed: NUMA nodes 0-1"),
    (dict(SETTINGS, systemReserved={"memory": "1Gi"}), "kubelet_topology_reserved_memory: got "),
    (dict(SETTINGS, maxPods="110"), "maxPods: must be of type int"),
])
def test_misfits_fail_before_any_change(host, settings, message):
    root, kubelet_dir, systemctl = host
    labels = {"reservedSystemCPUs": "kubelet_topology_reserved_system_cpus",
              "reservedMemory": "kubelet_topology_reserved_memory"}
    result = run(root, settings=settings, labels=labels)
    assert result["failed"] and message in result["msg"], result["msg"]
    assert "nothing was changed" in result["msg"]
    assert (kubelet_dir / "config.yaml").read_text() == USER_TEXT
    assert os.path.exists(kubelet_dir / "cpu_manager_state") and systemctl.calls == []


def test_reset_state_false_refuses_a_policy_change_with_state(host):
    root, kubelet_dir, dummy = host
    result = run(root, reset_state=False)
    assert result["failed"] and "cpu_manager_state" in result["msg"]
    assert (kubelet_dir / "config.yaml").read_text() == USER_TEXT


def test_a_missing_file_is_created_and_unknown_fields_warn(host):
    root, kubelet_dir, dummy = host
    (kubelet_dir / "config.yaml").unlink()
    result = run(root, settings=dict(SETTINGS, someFutureField=True))
    written = yaml.safe_load((kubelet_dir / "config.yaml").read_text())
    assert written["apiVersion"] == "kubelet.config.k8s.io/v1beta1" and written["kind"] == "KubeletConfiguration"
    assert result["unknown_fields"] == ["someFutureField"]
    assert any("someFutureField" in warning for warning in result["warnings"])


DRAIN = {"node": "gpu-worker-7", "delegate_to": "kube-admin", "timeout": 300}


def test_with_drain_a_state_reset_waits_for_the_drain_which_check_mode_does_not_say(host):
    root, kubelet_dir, systemctl = host
    checked = run(root, check_mode=True, drain=DRAIN)
    assert checked["changed"] and not checked["waits_for_drain"]
    assert module.handlers(dict(drain=DRAIN), checked) == []

    waiting = run(root, drain=DRAIN)
    assert not waiting["changed"] and waiting["waits_for_drain"], waiting
    assert waiting["state_files_removed"] == checked["state_files_removed"]
    assert (kubelet_dir / "config.yaml").read_text() == USER_TEXT and systemctl.calls == []
    assert module.handlers(dict(drain=DRAIN), waiting) == [dict(DRAIN, action="drain")]

    # Drained, the play runs the feature again without drain: the reset.
    done = run(root)
    assert done["changed"] and done["service_action"] == "stopped_and_started"


def test_with_drain_a_change_without_a_reset_is_made_at_once(host):
    root, kubelet_dir, systemctl = host
    run(root)
    (kubelet_dir / "cpu_manager_state").write_text("{}")
    result = run(root, settings=dict(SETTINGS, topologyManagerPolicy="restricted"), drain=DRAIN)
    assert result["changed"] and not result["waits_for_drain"] and result["service_action"] == "restarted"
    assert module.handlers(dict(drain=DRAIN), result) == []
