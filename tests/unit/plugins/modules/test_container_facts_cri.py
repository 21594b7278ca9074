# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_facts engine's CRI reading in a node call: a stand-in crictl answering with JSON written from
cri-tools', the CRI API's and containerd's sources (module_utils/fixtures/cri_written; no Debian release packages
crictl), and the containers' /proc below the node's root; then the containers area's verdicts on what it read."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.gpuops.hardening.plugins.modules.node import main as node_main
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_container_checks import container_checks
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.stand_in_cli import stand_in, write_file

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "module_utils", "fixtures", "cri_written")
FEATURE = [{"name": "containers", "engine": "container_facts", "args": {}}]
FAKE_CRICTL = r'''#!%(python)s
import json, os, sys
with open(os.environ["FAKE_CRICTL_LOG"], "a") as log:
    log.write(json.dumps({"argv": sys.argv[1:], "lc_all": os.environ.get("LC_ALL")}) + "\n")
if os.environ.get("FAKE_CRICTL_DOWN") == sys.argv[1]:
    sys.stderr.write('level=fatal msg="validate service connection: validate CRI v1 runtime API for endpoint '
                     '\"unix:///run/containerd/containerd.sock\": rpc error: code = Unavailable"\n')
    sys.exit(1)
with open(os.path.join(%(fixtures)r, sys.argv[1] + ".json")) as handle:
    sys.stdout.write("".join(line for line in handle if not line.startswith("#")))
'''
LIMITS = "Limit                     Soft Limit           Hard Limit           Units     \n" \
         "Max locked memory         %s                   %s                   bytes     \n"


@pytest.fixture
def node(tmp_path, monkeypatch):
    root = tmp_path / "node"
    # The trainer's process: containerd's default 64 MiB pod /dev/shm, memlock as its spec sets it.
    write_file(str(root / "proc/4242/limits"), LIMITS % (67108864, 67108864))
    write_file(str(root / "proc/4242/mountinfo"),
               "700 690 0:77 / /dev/shm ro,nosuid,nodev,noexec,relatime - tmpfs shm rw,size=65536k\n")
    stand_in(tmp_path, monkeypatch, "crictl", FAKE_CRICTL, FIXTURES)
    return root


def _fact(root):
    result = run_module(node_main, {"root": str(root), "features": FEATURE}, check_mode=True)
    assert not result.get("failed") and not result["changed"], result
    return result["ansible_facts"]["container_runtimes"]


def _checks(fact, rdma_devices=("mlx5_0",)):
    limits = {"audit_container_free_space_gib": 20, "audit_container_writable_layer_mib": 1024}
    checks = container_checks(fact, limits, list(rdma_devices), {"driver_version": "570.124.06", "cuda_version": "12.8"})
    return dict((item["id"], item) for item in checks)


def test_crictl_reads_the_running_containers_as_argv_lists_in_the_c_locale(node):
    fact = _fact(node)
    assert [runtime["name"] for runtime in fact["runtimes"]] == ["crictl"]
    cri = fact["runtimes"][0]
    assert cri["problem"] is None and cri["storage"] is None and cri["images"] == []
    with open(str(node.parent / "crictl.log"), encoding="utf-8") as handle:
        calls = [json.loads(line) for line in handle]
    assert [call["argv"][:3] for call in calls] == [["ps", "-o", "json"], ["stats", "-o", "json"],
                                                    ["inspect", "-o", "json"]]
    assert len(calls[-1]["argv"]) == 6 and all(call["lc_all"] == "C" for call in calls)
    trainer = cri["containers"][0]
    assert trainer["shm_in_process"] == 64 << 20 and trainer["memlock_in_process"] == {"soft": 64 << 20, "hard": 64 << 20}


def test_the_gpu_containers_get_the_docker_containers_checks(node):
    checks = _checks(_fact(node))
    verdicts = dict((check_id, item["verdict"]) for check_id, item in checks.items())
    assert verdicts == {
        "containers.crictl.trainer.writable_layer": "WARN", "containers.crictl.trainer.shm": "WARN",
        "containers.crictl.trainer.memlock": "FAIL", "containers.crictl.trainer.network": "WARN",
        "containers.crictl.serve.writable_layer": "PASS", "containers.crictl.serve.shm": "PASS",
        "containers.crictl.serve.memlock": "PASS", "containers.crictl.serve.network": "PASS"}
    assert "2 GiB" in checks["containers.crictl.trainer.writable_layer"]["reason"]


def test_without_stats_each_writable_layer_is_a_skip_saying_why(node, monkeypatch):
    monkeypatch.setenv("FAKE_CRICTL_DOWN", "stats")
    skipped = _checks(_fact(node))["containers.crictl.trainer.writable_layer"]
    assert skipped["verdict"] == "SKIP" and "crictl stats" in skipped["reason"]


def test_a_runtime_that_does_not_answer_is_one_skip(node, monkeypatch):
    monkeypatch.setenv("FAKE_CRICTL_DOWN", "ps")
    checks = _checks(_fact(node))
    assert list(checks) == ["containers.crictl.read"] and checks["containers.crictl.read"]["verdict"] == "SKIP"
    assert "Unavailable" in checks["containers.crictl.read"]["reason"]


def test_no_gpu_container_is_one_skip(node):
    fact = _fact(node)
    fact["runtimes"][0]["containers"] = [item for item in fact["runtimes"][0]["containers"] if not item["gpu"]]
    assert [item["verdict"] for item in _checks(fact).values()] == ["SKIP"]
