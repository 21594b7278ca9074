# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubelet_topology on one lab node with a stand-in kubelet unit (no kubelet is packaged for the lab).

The stand-in (kubelet/fake_kubelet.py) refuses to start, as the kubelet's CPU and memory
managers do, when a state file holds another policy than the config file; so a
kubelet that runs after each converge shows the state files were handled. The node
(L40S profile: 2 NUMA nodes, CPUs 0-127) gets PyYAML as python3-yaml would give it.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest
import yaml

from lab import docker_exec, recap, run_playbook, start_nodes, stop_nodes

NODE = "kube-node1"
SPEC = {NODE: {"gpuops_gpu_profile": "l40s_4x", "gpuops_profile": "inference"}}
# site.yml's own play, as a fleet run reaches it: after the validation play, whose
# result it is handed (tasks_from: features.yml); the tag leaves the tuning roles out.
RUN = ("--tags", "kubelet_topology")
CONFIG = "/var/lib/kubelet/config.yaml"
USER_CONFIG = {
    "apiVersion": "kubelet.config.k8s.io/v1beta1",
    "kind": "KubeletConfiguration",
    "clusterDNS": ["10.96.0.10"],
    "kubeReserved": {"cpu": "500m"},
    "evictionHard": {"nodefs.available": "10%"},
}
HERE = os.path.dirname(__file__)


def _install_kubelet_stand_in():
    yaml_dir = os.path.dirname(yaml.__file__)
    docker_exec(NODE, "mkdir", "-p", "/usr/lib/python3/dist-packages", "/var/lib/kubelet")
    for source, target in ((yaml_dir, "/usr/lib/python3/dist-packages/yaml"),
                           (os.path.join(HERE, "kubelet", "fake_kubelet.py"), "/usr/local/bin/kubelet"),
                           (os.path.join(HERE, "kubelet", "kubelet.service"), "/etc/systemd/system/kubelet.service"),
                           (os.path.join(HERE, "kubelet", "fake_kubectl.sh"), "/usr/local/bin/kubectl")):
        subprocess.run(["docker", "cp", source, "%s:%s" % (NODE, target)], check=True, capture_output=True)
    docker_exec(NODE, "sh", "-c", "rm -rf /usr/lib/python3/dist-packages/yaml/_yaml*.so "
                                  "/usr/lib/python3/dist-packages/yaml/__pycache__")
    docker_exec(NODE, "python3", "-c", "import sys; open(sys.argv[1], 'w').write(sys.argv[2])", CONFIG,
                yaml.safe_dump(USER_CONFIG, sort_keys=False))
    docker_exec(NODE, "systemctl", "daemon-reload")
    docker_exec(NODE, "systemctl", "enable", "--now", "kubelet.service")


@pytest.fixture(scope="module")
def inventory(tmp_path_factory):
    path = start_nodes(SPEC, tmp_path_factory.mktemp("kubelet_topology"))
    with open(path, encoding="utf-8") as handle:
        tree = yaml.safe_load(handle)
    tree["kubernetes_nodes"] = {"hosts": {NODE: {}}}
    with open(path, "w", encoding="utf-8") as handle:
        yaml.safe_dump(tree, handle)
    _install_kubelet_stand_in()
    yield path
    stop_nodes(SPEC)


def _state(name):
    """A state file's content; the stand-in writes it a moment after its start, so wait up to 20 s."""
    for dummy in range(40):
        text = docker_exec(NODE, "cat", "/var/lib/kubelet/" + name, check=False)
        if text:
            return json.loads(text)
        time.sleep(0.5)
    return None


def _mark(name):
    """Tag a state file, so that a later read tells whether it was removed and written again."""
    state = _state(name)
    state["marker"] = True
    docker_exec(NODE, "python3", "-c", "import sys; open(sys.argv[1], 'w').write(sys.argv[2])",
                "/var/lib/kubelet/" + name, json.dumps(state))


def _kubelet_active():
    return docker_exec(NODE, "systemctl", "is-active", "kubelet.service", check=False).strip() == "active"


def _converge(inventory, extra_vars=None, flags=()):
    rc, output = run_playbook(inventory, extra_vars=extra_vars, flags=RUN + tuple(flags))
    return rc, output, recap(output, NODE)


def test_converge_idempotence_check_mode_and_state_resets(inventory):
    assert _kubelet_active() and _state("cpu_manager_state")["policyName"] == "none"

    rc, output, counts = _converge(inventory)
    assert rc == 0 and counts["changed"] == 1, output[-4000:]
    config = yaml.safe_load(docker_exec(NODE, "cat", CONFIG))
    assert config["clusterDNS"] == ["10.96.0.10"] and config["evictionHard"]["nodefs.available"] == "10%"
    assert config["kubeReserved"] == {"cpu": "500m", "memory": "512Mi"}
    assert config["cpuManagerPolicy"] == "static" and config["topologyManagerPolicy"] == "best-effort"
    assert config["reservedMemory"] == [{"numaNode": 0, "limits": {"memory": "1124Mi"}}]
    # The old state files went, or the stand-in would not have started again with the new policies.
    assert _kubelet_active()
    assert _state("cpu_manager_state")["policyName"] == "static"
    assert _state("memory_manager_state")["policyName"] == "Static"

    for flags in ((), ("--check", "--diff")):
        rc, output, counts = _converge(inventory, flags=flags)
        assert rc == 0 and counts["changed"] == 0, output[-4000:]

    # A change of the topology policy alone restarts the kubelet and keeps both state files.
    _mark("cpu_manager_state")
    _mark("memory_manager_state")
    rc, output, counts = _converge(inventory, {"kubelet_topology_topology_manager_policy": "restricted"})
    assert rc == 0 and counts["changed"] == 1, output[-4000:]
    assert _kubelet_active() and _state("cpu_manager_state").get("marker") and _state("memory_manager_state").get("marker")

    # The CPU policy back to none: exactly cpu_manager_state goes.
    rc, output, counts = _converge(inventory, {"kubelet_topology_topology_manager_policy": "restricted",
                                               "kubelet_topology_cpu_manager_policy": "none"})
    assert rc == 0 and counts["changed"] == 1, output[-4000:]
    assert _kubelet_active()
    assert _state("cpu_manager_state") == {"policyName": "none", "checksum": 0}
    assert _state("memory_manager_state").get("marker")


def test_values_that_do_not_fit_the_node_fail_before_any_change(inventory):
    before = docker_exec(NODE, "cat", CONFIG)
    rc, output, dummy = _converge(inventory, {"kubelet_topology_reserved_system_cpus": "0,200",
                                              "kubelet_topology_reserved_memory": [{"numa_node": 0, "memory": "562Mi"},
                                                                                   {"numa_node": 3, "memory": "562Mi"}]})
    assert rc != 0
    assert "kubelet_topology_reserved_system_cpus: got '0,200'; CPUs 200 do not exist on this node" in output
    assert "kubelet_topology_reserved_memory: got a reservation on NUMA node 3, which this node lacks" in output
    assert docker_exec(NODE, "cat", CONFIG) == before and _kubelet_active()


def _kubectl_calls():
    return docker_exec(NODE, "cat", "/var/log/gpuops-kubectl.log", check=False).splitlines()


def test_a_state_reset_drains_the_node_first_and_uncordons_it_after(inventory):
    """The stand-in kubectl runs on the node itself (kubelet_topology_drain_delegate_to) and logs each call."""
    drain = {"kubelet_topology_drain": True, "kubelet_topology_drain_delegate_to": NODE,
             "kubelet_topology_node_name": "gpu-worker-7"}
    # The file holds the none CPU policy (the test above): the role's static policy means a state reset.
    assert _state("cpu_manager_state")["policyName"] == "none"
    rc, output, counts = _converge(inventory, dict(drain, kubelet_topology_cpu_manager_policy="static"), ("--check",))
    assert rc == 0 and counts["changed"] == 1 and _kubectl_calls() == [], output[-4000:]

    rc, output, counts = _converge(inventory, drain)
    assert rc == 0, output[-4000:]
    calls = _kubectl_calls()
    assert len(calls) == 2, calls
    # Drained while the kubelet still ran on its old state; uncordoned once it runs again.
    assert calls[0].startswith("drain gpu-worker-7 --ignore-daemonsets --delete-emptydir-data --timeout=600s | "
                               "kubelet=active | cpu_manager_state={\"policyName\": \"none\""), calls
    assert calls[1].startswith("uncordon gpu-worker-7 | kubelet=active"), calls
    assert _kubelet_active() and _state("cpu_manager_state")["policyName"] == "static"

    # No reset, no drain: a topology change alone restarts the kubelet with its state files.
    rc, output, counts = _converge(inventory, dict(drain, kubelet_topology_topology_manager_policy="restricted"))
    assert rc == 0 and counts["changed"] == 1 and _kubectl_calls() == calls, output[-4000:]
