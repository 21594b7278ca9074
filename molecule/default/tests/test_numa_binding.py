# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The numa_binding role on the emulated GPU nodes.

Each node's expected topology is its emulator profile (host var
``gpuops_gpu_profile``), read from tests/gpu_emulator/profiles. Every node with
a profile gets the generic checks; the DGX H100-class node also gets the
launcher checks, which need GPUs on two NUMA nodes.

The lab's real kernel has only NUMA node 0 (the fake sysfs mounted over /sys
claims more), so a bound run works on a node-0 GPU and must be refused, with a
clear message, on a node-1 GPU.
"""

from __future__ import annotations

import json
import os
import re
import shlex

import pytest

from lab_playbook import run_playbook, task_status

PROFILES_DIR = os.path.normpath(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "gpu_emulator", "profiles"))
FACT_FILE = "/etc/ansible/facts.d/gpu_topology.fact"
LAUNCHER = "/usr/local/bin/gpu-numa-exec"
BINDING_PROBE = ("sh -c 'grep -E \"^(Cpus|Mems)_allowed_list\" /proc/self/status; numactl --show; "
                 "echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER=$CUDA_DEVICE_ORDER'")


def _profile_of(host):
    name = host.ansible.get_variables().get("gpuops_gpu_profile")
    if not name:
        pytest.skip("%s has no emulated GPU profile" % host.backend.get_hostname())
    with open(os.path.join(PROFILES_DIR, "%s.json" % name), encoding="utf-8") as handle:
        return json.load(handle)


@pytest.fixture
def profile(host):
    return _profile_of(host)


@pytest.fixture
def dgx(host):
    """The profile, on the DGX H100-class node only."""
    data = _profile_of(host)
    if data["name"] != "dgx_h100":
        pytest.skip("the launcher checks need the dgx_h100 profile; this node has %s" % data["name"])
    return data


def _fact(host):
    return json.loads(host.file(FACT_FILE).content_string)


def _status(text):
    """The *_allowed_list lines of /proc/self/status as a dict."""
    fields = (line.split(":", 1) for line in text.splitlines() if ":" in line)
    return dict((key.strip(), value.strip()) for key, value in fields if key.endswith("_allowed_list"))


def _id_set(text):
    """``0-2,5`` -> {0, 1, 2, 5}."""
    ids = set()
    for part in text.strip().split(","):
        bounds = part.split("-")
        ids.update(range(int(bounds[0]), int(bounds[-1]) + 1))
    return ids


def _kernel_memory_nodes(host):
    """Memory nodes the node's real kernel offers (not the emulated sysfs)."""
    line = host.run("grep ^Mems_allowed_list: /proc/self/status").stdout
    return _id_set(line.split(":", 1)[1])


def _node_cpus(profile, node_id):
    return next(node["cpus"] for node in profile["numa_nodes"] if node["id"] == node_id)


# ------------------------------------------------------------------ every emulated node

def test_fact_file_is_written(host, profile):
    fact = host.file(FACT_FILE)
    assert fact.is_file and fact.user == "root" and fact.mode == 0o644


def test_fact_gpus_match_the_profile(host, profile):
    topology = _fact(host)
    assert [gpu["uuid"] for gpu in topology["gpus"]] == [gpu["uuid"] for gpu in profile["gpus"]]
    for gpu, want in zip(topology["gpus"], profile["gpus"]):
        assert gpu["pci_bus_id"] == want["pci_bus_id"]
        assert gpu["name"] == want["model"]
        if want["numa_node"] >= 0:
            assert gpu["numa_node"] == want["numa_node"]
            assert gpu["local_cpulist"] == _node_cpus(profile, want["numa_node"])
        else:
            assert gpu["numa_node"] is None
        assert gpu["driver_version"] == profile["driver_version"]


def test_fact_nics_and_nodes_match_the_profile(host, profile):
    topology = _fact(host)
    assert [(nic["name"], nic["netdevs"], nic["pci_bus_id"]) for nic in topology["nics"]] == \
        [(nic["ibdev"], [nic["netdev"]], nic["pci_bus_id"]) for nic in profile["nics"]]
    assert [(node["id"], node["cpulist"]) for node in topology["numa_nodes"]] == \
        [(node["id"], node["cpus"]) for node in profile["numa_nodes"]]


def test_recommendations_follow_each_gpus_node(host, profile):
    topology = _fact(host)
    for plan, want in zip(topology["recommendations"], profile["gpus"]):
        if want["numa_node"] >= 0:
            node = want["numa_node"]
            assert plan["numactl"] == "numactl --cpunodebind=%d --membind=%d" % (node, node)
            assert plan["taskset_cpus"] == _node_cpus(profile, node)


def test_module_agrees_with_the_fact(host, profile):
    """The module run now (read-only) reports what the role wrote."""
    result = host.ansible("gpuops.hardening.gpu_numa_facts", "", check=True)
    assert result["ansible_facts"]["gpu_topology"] == _fact(host)


def test_numactl_and_launcher_installed(host, profile):
    assert host.package("numactl").is_installed
    launcher = host.file(LAUNCHER)
    assert launcher.is_file and launcher.user == "root" and launcher.mode == 0o755
    assert launcher.content_string.startswith("#!/usr/bin/python3\n")


# ------------------------------------------------------------------ the DGX H100-class node

def test_the_package_manager_installs_numactl_only_where_it_is_missing(host, dgx):
    """The topology call says where numactl is. A node without the package gets it through apt, from the lab's
    offline file: source (scripts/lab/build-image.sh), whose lists the image does not have until the role refreshes
    them; a node with it asks for nothing, so the play does not even include the handler tasks."""
    hostname = host.backend.get_hostname()
    task = "gpuops.hardening.validate : Install the packages the node lacks"
    tags = ("--tags", "numa_binding_topology,numa_binding_packages")
    assert host.run("rm -rf /var/lib/apt/lists/* && dpkg --purge numactl").rc == 0
    try:
        assert not host.exists("numactl")
        rc, output = run_playbook("playbooks/site.yml", hostname, flags=tags)
        assert rc == 0, output[-3000:]
        assert task_status(output, task, hostname) == "changed", output[-3000:]
        assert host.package("numactl").is_installed and host.exists("numactl")
    finally:
        host.run("dpkg -s numactl >/dev/null 2>&1 || dpkg -i /opt/gpuops-lab/apt/numactl_*.deb")
    rc, output = run_playbook("playbooks/site.yml", hostname, flags=tags)
    assert rc == 0, output[-3000:]
    assert task_status(output, task, hostname) is None, output[-3000:]
    assert task_status(output, "gpuops.hardening.validate : Do what the node call asks for", hostname) == "skipping"


def test_dry_run_prints_the_recommended_command_for_gpu5(host, dgx):
    plan = _fact(host)["recommendations"][5]
    assert plan["numa_nodes"] == [dgx["gpus"][5]["numa_node"]] == [1]
    run = host.run("%s --gpu 5 --dry-run -- python3 train.py --epochs 1" % LAUNCHER)
    assert run.rc == 0, run.stderr
    assert run.stdout == ("CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=5 %s -- python3 train.py --epochs 1\n"
                          % plan["numactl"])
    assert plan["numactl"] == "numactl --cpunodebind=1 --membind=1"
    # The GPU's node and CPUs, as the profile has them.
    assert "GPU 5 (%s): NUMA node 1, CPUs %s" % (dgx["gpus"][5]["pci_bus_id"], _node_cpus(dgx, 1)) in run.stderr
    assert plan["taskset_cpus"] == _node_cpus(dgx, 1)


def test_bound_run_on_a_node0_gpu_shows_the_binding(host, dgx):
    gpu = next(index for index, item in enumerate(dgx["gpus"]) if item["numa_node"] == 0)
    unbound = _status(host.run("grep _allowed_list /proc/self/status").stdout)
    run = host.run("%s --gpu %d -- %s" % (LAUNCHER, gpu, BINDING_PROBE))
    assert run.rc == 0, run.stderr
    bound = _status(run.stdout)
    assert bound["Mems_allowed_list"] == "0"
    assert bound["Cpus_allowed_list"]
    assert _id_set(bound["Cpus_allowed_list"]) <= _id_set(unbound["Cpus_allowed_list"])
    assert "policy: bind" in run.stdout
    assert re.search(r"^membind: 0\s*$", run.stdout, re.M)
    assert "CUDA_VISIBLE_DEVICES=%d CUDA_DEVICE_ORDER=PCI_BUS_ID" % gpu in run.stdout


def test_gpu_on_node1_is_refused_clearly(host, dgx):
    if 1 in _kernel_memory_nodes(host):
        pytest.skip("this kernel has NUMA node 1; the refusal cannot be shown here")
    run = host.run("%s --gpu 5 -- %s" % (LAUNCHER, shlex.quote("true")))
    assert run.rc == 4
    assert "NUMA node 1 of GPU 5 is not online on this kernel" in run.stderr
    assert run.stdout == ""


def test_launcher_refuses_an_unknown_gpu(host, dgx):
    run = host.run("%s --gpu 8 -- true" % LAUNCHER)
    assert run.rc == 2 and "no GPU 8 on this host (GPUs: 0, 1, 2, 3, 4, 5, 6, 7)" in run.stderr
