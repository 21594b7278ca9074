# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu-numa-exec launcher the numa_binding role installs."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import gpu_topology, nvidia_smi, sysfs_topology
from ansible_collections.gpuops.hardening.plugins.plugin_utils import node_plan
from ansible_collections.gpuops.hardening.tests.unit.plugins.module_utils import fake_sysfs

COLLECTION = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
ROLE = os.path.join(COLLECTION, "roles", "numa_binding")
LAUNCHER = os.path.join(ROLE, "files", "gpu_numa_exec.py")
MODULE_UTILS = os.path.join(COLLECTION, "plugins", "module_utils")
FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "plugins", "module_utils", "fixtures", "nvidia_smi")

# Real bound runs need numactl: make deps installs it on the test host; the execution
# environment image, where the units run again on the newest ansible-core, has none.
needs_numactl = pytest.mark.skipif(not shutil.which("numactl"), reason="numactl is not installed here (make deps installs it)")


def _load():
    spec = importlib.util.spec_from_file_location("gpu_numa_exec", LAUNCHER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


launcher = _load()

NODES = {0: {"cpus": "0-15,64-79", "memory_kib": 1, "distances": [10, 21]},
         2: {"cpus": "32-47,96-111", "memory_kib": 1, "distances": [21, 10]}}
PCI = {
    "0000:18:00.0": {"numa_node": 0, "cpulist": "0-15,64-79"},
    "0000:2a:00.0": {"numa_node": 0, "cpulist": "0-15,64-79"},
    "0000:9a:00.0": {"numa_node": 2, "cpulist": "32-47,96-111"},
    "0000:ab:00.0": {"numa_node": -1, "cpulist": "0-127"},
}
BUS = ["00000000:18:00.0", "00000000:2A:00.0", "00000000:9A:00.0", "00000000:AB:00.0"]


@pytest.fixture
def facts(tmp_path):
    """A fact file exactly as the role writes it: the module's topology as JSON."""
    root = fake_sysfs.build(tmp_path / "sys", NODES, PCI)
    query = {"driver_version": "1", "cuda_version": "1", "gpus": []}
    for index, bus in enumerate(BUS):
        query["gpus"].append({"index": index, "name": "GPU", "uuid": "GPU-%d" % index, "pci_bus_id": bus,
                              "minor_number": index, "memory_total_mib": 1, "persistence_mode": None,
                              "mig_mode": None, "mig_mode_pending": None, "compute_mode": None,
                              "mig_devices": []})
    with open(os.path.join(FIXTURES, "gpu_list_mixed.txt"), encoding="utf-8") as handle:
        gpu_list = nvidia_smi.parse_gpu_list(handle.read())
    pci = dict((nvidia_smi.pci_bus_id_to_sysfs(bus), sysfs_topology.read_pci_device(root, nvidia_smi.pci_bus_id_to_sysfs(bus)))
               for bus in BUS)
    topology = gpu_topology.build_topology(query, pci_devices=pci, numa_nodes=sysfs_topology.read_numa_nodes(root),
                                           gpu_list=gpu_list)
    path = tmp_path / "gpu_topology.fact"
    path.write_text(json.dumps(topology, indent=4))
    return path


@pytest.fixture
def kernel(tmp_path, monkeypatch):
    """What the running kernel allows, as /proc/self/status says."""
    status = tmp_path / "status"

    def allow(mems):
        status.write_text("Name:\tpython3\nCpus_allowed_list:\t0-127\nMems_allowed_list:\t%s\n" % mems)
    allow("0-2")
    monkeypatch.setattr(launcher, "PROC_STATUS", str(status))
    return allow


def run(capsys, *argv):
    status = launcher.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_dry_run_prints_the_exact_command(facts, kernel, capsys):
    status, out, err = run(capsys, "--facts", str(facts), "--gpu", "2", "--dry-run", "--", "python", "train.py", "--lr", "1e-3")
    assert status == 0
    assert out == ("CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=2 "
                   "numactl --cpunodebind=2 --membind=2 -- python train.py --lr 1e-3\n")
    assert "GPU 2 (0000:9a:00.0): NUMA node 2, CPUs 32-47,96-111" in err


def test_dry_run_agrees_with_the_recommendation(facts, kernel, capsys):
    plan = json.loads(facts.read_text())["recommendations"][1]
    status, out, _err = run(capsys, "--facts", str(facts), "--gpu", "1", "--dry-run", "--", "true")
    assert status == 0 and plan["numactl"] + " -- true" in out


def test_quoting(facts, kernel, capsys):
    _status, out, _err = run(capsys, "--facts", str(facts), "--gpu", "0", "--dry-run", "--", "sh", "-c", "echo $HOME; ls 'a b'")
    assert out.rstrip().endswith("-- sh -c 'echo $HOME; ls '\"'\"'a b'\"'\"''")


def test_node_not_online_on_this_kernel(facts, kernel, capsys):
    kernel("0")
    status, out, err = run(capsys, "--facts", str(facts), "--gpu", "2", "--", "true")
    assert status == launcher.EXIT_NODE_OFFLINE and out == ""
    assert "NUMA node 2 of GPU 2 is not online on this kernel (memory nodes allowed here: 0)" in err
    # A dry run still shows the command, with the same finding.
    status, out, err = run(capsys, "--facts", str(facts), "--gpu", "2", "--dry-run", "--", "true")
    assert status == 0 and "--cpunodebind=2" in out and "not online on this kernel" in err


def test_unknown_affinity(facts, kernel, capsys):
    status, _out, err = run(capsys, "--facts", str(facts), "--gpu", "3", "--", "true")
    assert status == launcher.EXIT_NO_AFFINITY
    assert "NUMA affinity of GPU 3 (0000:ab:00.0) is unknown" in err and "--allow-unbound" in err
    status, out, err = run(capsys, "--facts", str(facts), "--gpu", "3", "--allow-unbound", "--dry-run", "--", "true")
    assert status == 0 and out == "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=3 true\n"
    assert "running unbound" in err


def test_unknown_gpu(facts, kernel, capsys):
    status, _out, err = run(capsys, "--facts", str(facts), "--gpu", "9", "--", "true")
    assert status == launcher.EXIT_USAGE and "no GPU 9 on this host (GPUs: 0, 1, 2, 3)" in err


def test_several_gpus_and_uuids(facts, kernel, capsys):
    status, out, err = run(capsys, "--facts", str(facts), "--gpu", "GPU-0,2", "--dry-run", "--", "true")
    assert status == 0
    assert out == ("CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=GPU-0,2 "
                   "numactl --cpunodebind=0,2 --membind=0,2 -- true\n")
    assert "different NUMA nodes" in err


def test_mig_uuid_selects_its_gpu(facts, kernel, capsys):
    mig = "MIG-aaaaaaaa-bbbb-5ccc-8ddd-eeeeeeeeeeee"
    status, out, _err = run(capsys, "--facts", str(facts), "--gpu", mig, "--dry-run", "--cpu-only", "--", "true")
    assert status == 0
    assert out == "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=%s numactl --cpunodebind=0 -- true\n" % mig


def test_numactl_missing(facts, kernel, capsys, monkeypatch):
    real_which = shutil.which
    monkeypatch.setattr(launcher.shutil, "which", lambda name: None if name == "numactl" else real_which(name))
    status, _out, err = run(capsys, "--facts", str(facts), "--gpu", "0", "--", "true")
    assert status == launcher.EXIT_NO_NUMACTL and "numactl is not installed" in err


def test_broken_fact_file(tmp_path, kernel, capsys):
    path = tmp_path / "broken.fact"
    path.write_text("{not json")
    status, _out, err = run(capsys, "--facts", str(path), "--gpu", "0", "--", "true")
    assert status == launcher.EXIT_NO_TOPOLOGY and "not valid JSON" in err


def test_no_command(facts, capsys):
    with pytest.raises(SystemExit) as stop:
        launcher.main(["--facts", str(facts), "--gpu", "0"])
    assert stop.value.code == 2


def test_falls_back_to_nvidia_smi_and_sysfs(tmp_path, kernel, capsys, monkeypatch):
    root = fake_sysfs.build(tmp_path / "sys", NODES, PCI)
    tool = tmp_path / "bin" / "nvidia-smi"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\necho '0, GPU-a, 00000000:18:00.0'\necho '1, GPU-b, 00000000:9A:00.0'\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", "%s:%s" % (tool.parent, os.environ["PATH"]))
    monkeypatch.setattr(launcher, "SYSFS_PCI", os.path.join(root, "bus", "pci", "devices"))
    status, out, err = run(capsys, "--facts", str(tmp_path / "absent.fact"), "--gpu", "1", "--dry-run", "--", "true")
    assert status == 0, err
    assert "numactl --cpunodebind=2 --membind=2 -- true" in out
    assert "CPUs 32-47,96-111" in err


def test_lists_come_from_the_shared_parser():
    assert launcher.parse_cpulist.__code__.co_filename == os.path.join(MODULE_UTILS, "cpulist.py")
    assert launcher.read_text.__code__.co_filename == os.path.join(MODULE_UTILS, "host_options.py")
    assert launcher.sysfs_bus_id.__code__.co_filename == os.path.join(MODULE_UTILS, "pci_bus_id.py")
    assert launcher.parse_cpulist("0-2,5, 7") == [0, 1, 2, 5, 7]
    assert launcher.parse_cpulist("0-7:2/4") == [0, 1, 4, 5]
    assert launcher.format_cpulist([5, 0, 1, 2]) == "0-2,5"
    with pytest.raises(ValueError):
        launcher.parse_cpulist("-31")


@pytest.mark.parametrize("mems, offline", [("0-3:1/2", False), ("1-3:1/2", True)])
def test_strided_memory_node_list(facts, kernel, capsys, mems, offline):
    """A strided list is read, not dropped: node 2 is in 0-3:1/2 (0,2), not in 1-3:1/2 (1,3)."""
    kernel(mems)
    status, _out, err = run(capsys, "--facts", str(facts), "--gpu", "2", "--dry-run", "--", "true")
    assert status == 0
    assert ("NUMA node 2 of GPU 2 is not online on this kernel" in err) is offline


def test_role_installs_the_helpers_the_launcher_loads():
    """The node plan's launcher feature: the helpers the launcher loads, in ../lib/gpuops-hardening beside it."""
    assert node_plan.LAUNCHER_HELPERS == launcher.SHARED_HELPERS
    inputs = {"numa_binding_require_gpu": True, "numa_binding_nvidia_smi_timeout": 30,
              "numa_binding_manage_packages": True, "numa_binding_write_local_fact": False,
              "numa_binding_install_launcher": True, "numa_binding_launcher_path": "/opt/x/bin/gpu-numa-exec"}
    context = node_plan.PlanContext(os.path.join(ROLE, ".."), None)
    (_topology, installed) = node_plan.numa_binding_features(inputs, {"__numa_binding_packages": ["numactl"]}, context)
    paths = [entry["path"] for entry in installed["args"]["files"]]
    assert paths == ["/opt/x/lib/gpuops-hardening/%s.py" % name for name in launcher.SHARED_HELPERS] + [
        "/opt/x/bin/gpu-numa-exec"]
    assert installed["args"]["files"][-1]["src"] == os.path.join(ROLE, "..", "numa_binding", "files", "gpu_numa_exec.py")


def test_installed_layout_runs(tmp_path, facts):
    """As the role lays it out: bin/gpu-numa-exec and lib/gpuops-hardening/<helper>.py."""
    (tmp_path / "bin").mkdir()
    lib = tmp_path / "lib" / "gpuops-hardening"
    lib.mkdir(parents=True)
    shutil.copy(LAUNCHER, tmp_path / "bin" / "gpu-numa-exec")
    for name in launcher.SHARED_HELPERS:
        shutil.copy(os.path.join(MODULE_UTILS, name + ".py"), lib)
    done = subprocess.run([sys.executable, str(tmp_path / "bin" / "gpu-numa-exec"), "--facts", str(facts),
                           "--gpu", "0", "--dry-run", "--", "true"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "numactl --cpunodebind=0 --membind=0 -- true" in done.stdout
    (lib / "cpulist.py").unlink()
    done = subprocess.run([sys.executable, str(tmp_path / "bin" / "gpu-numa-exec"), "--help"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    assert done.returncode == 1 and "helpers (cpulist.py, host_options.py, pci_bus_id.py) are missing" in done.stderr


@needs_numactl
def test_real_bound_run_on_this_kernel(tmp_path):
    """Bind to node 0, which every Linux kernel has, and read the binding back."""
    fact = tmp_path / "gpu_topology.fact"
    fact.write_text(json.dumps({"gpus": [{"index": 0, "uuid": "GPU-x", "pci_bus_id": "0000:18:00.0",
                                          "numa_affinity": [0], "local_cpulist": "0"}],
                                "recommendations": [{"gpu": 0, "numa_nodes": [0]}]}))
    done = subprocess.run(
        [sys.executable, LAUNCHER, "--facts", str(fact), "--gpu", "0", "--",
         sys.executable, "-c", "import os; print(os.environ['CUDA_VISIBLE_DEVICES']); print(open('/proc/self/status').read())"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    if "set_mempolicy" in done.stderr or "Operation not permitted" in done.stderr:
        pytest.skip("this sandbox refuses memory policies: %s" % done.stderr.strip())
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "0"
    status = dict(line.split(":", 1) for line in lines[1:] if ":" in line)
    assert status["Mems_allowed_list"].strip() == "0"
    node0 = open("/sys/devices/system/node/node0/cpulist", encoding="ascii").read().strip()
    assert status["Cpus_allowed_list"].strip() == node0


@needs_numactl
def test_real_bound_run_sets_the_memory_policy(tmp_path):
    """Mems_allowed_list is the cpuset's; the bind policy itself shows in numactl --show."""
    fact = tmp_path / "gpu_topology.fact"
    fact.write_text(json.dumps({"gpus": [{"index": 0, "uuid": "GPU-x", "numa_affinity": [0]}]}))
    done = subprocess.run([sys.executable, LAUNCHER, "--facts", str(fact), "--gpu", "0", "--", "numactl", "--show"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    if done.returncode != 0 and "Operation not permitted" in done.stderr:
        pytest.skip("this sandbox refuses memory policies")
    assert done.returncode == 0, done.stderr
    assert "policy: bind" in done.stdout
    assert "membind: 0 " in done.stdout + " "
    assert "cpubind: 0 " in done.stdout + " "


def test_help_says_an_index_needs_the_pci_bus_order(capsys):
    with pytest.raises(SystemExit):
        launcher.parse_args(["--help"])
    out = " ".join(capsys.readouterr()[0].split())
    assert "GPU index as nvidia-smi numbers it (exported with CUDA_DEVICE_ORDER=PCI_BUS_ID" in out


def test_fact_with_uuid_for_cuda_visible_devices(facts, kernel, capsys):
    """The fact's recommendations name GPUs by UUID; selecting by that UUID binds the same way."""
    plan = json.loads(facts.read_text())["recommendations"][2]
    assert plan["cuda_visible_devices"] == "GPU-2"
    status, out, _err = run(capsys, "--facts", str(facts), "--gpu", plan["cuda_visible_devices"], "--dry-run", "--", "true")
    assert status == 0
    assert out == "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=GPU-2 numactl --cpunodebind=2 --membind=2 -- true\n"
