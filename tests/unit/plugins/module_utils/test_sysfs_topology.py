# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sysfs readers on fake trees in the kernel's layout and the emulator's flat one."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import sysfs_topology
from ansible_collections.gpuops.hardening.tests.unit.plugins.module_utils import fake_sysfs

NODES = {
    0: {"cpus": "0-3,8-11", "memory_kib": 1000, "distances": [10, 21, 12]},
    1: {"cpus": "4-7,12-15", "memory_kib": 2000, "distances": [21, 10, 23]},
    2: {"cpus": "", "memory_kib": 500, "distances": [12, 23, 10]},  # HBM / GPU memory
}
PCI = {
    "0000:18:00.0": {"numa_node": 0, "cpulist": "0-3,8-11"},
    "0001:c3:00.0": {"numa_node": 1, "cpulist": "4-7,12-15"},
    "0000:1a:00.0": {"numa_node": 0, "cpulist": "0-3,8-11", "net": ["ibp26s0"]},
    "0000:1a:00.1": {"numa_node": 0, "cpulist": "0-3,8-11", "net": ["ens1f1np1", "ens1f1np1v0"]},
    "0000:00:04.0": {"numa_node": -1, "cpulist": "0-15"},
}
RDMA = {"mlx5_0": "0000:1a:00.0", "mlx5_bond_0": "0000:1a:00.1"}


@pytest.fixture(params=["kernel", "flat"])
def tree(request, tmp_path):
    return fake_sysfs.build(tmp_path / "sys", NODES, PCI, RDMA, layout=request.param)


def test_numa_nodes_include_cpuless(tree):
    nodes = sysfs_topology.read_numa_nodes(tree)
    assert [node["id"] for node in nodes] == [0, 1, 2]
    assert nodes[0] == {"id": 0, "cpus": [0, 1, 2, 3, 8, 9, 10, 11], "cpulist": "0-3,8-11", "has_cpu": True,
                        "memory_total_kib": 1000, "distances": [10, 21, 12]}
    assert nodes[2]["cpus"] == [] and nodes[2]["has_cpu"] is False and nodes[2]["memory_total_kib"] == 500


def test_pci_device(tree):
    gpu = sysfs_topology.read_pci_device(tree, "0001:c3:00.0")
    assert gpu["numa_node"] == 1 and gpu["numa_node_raw"] == 1
    assert gpu["cpus"] == [4, 5, 6, 7, 12, 13, 14, 15] and gpu["local_cpulist"] == "4-7,12-15"
    assert gpu["vendor"] == "0x10de"


def test_pci_device_without_node(tree):
    vm_gpu = sysfs_topology.read_pci_device(tree, "0000:00:04.0")
    assert vm_gpu["numa_node"] is None and vm_gpu["numa_node_raw"] == -1


def test_pci_device_missing(tree):
    assert sysfs_topology.read_pci_device(tree, "0000:99:00.0") is None


def test_rdma_devices(tree):
    devices = sysfs_topology.read_rdma_devices(tree)
    assert [device["name"] for device in devices] == ["mlx5_0", "mlx5_bond_0"]
    assert devices[0]["pci_bus_id"] == "0000:1a:00.0"
    assert devices[0]["netdevs"] == ["ibp26s0"]
    assert devices[0]["numa_node"] == 0 and devices[0]["local_cpulist"] == "0-3,8-11"
    assert devices[1]["netdevs"] == ["ens1f1np1", "ens1f1np1v0"]


def test_rdma_without_class_folder_found_under_pci(tmp_path):
    root = fake_sysfs.build(tmp_path / "sys", NODES, PCI, RDMA, layout="flat")
    for name in os.listdir(os.path.join(root, "class", "infiniband")):
        os.unlink(os.path.join(root, "class", "infiniband", name, "device"))
        os.rmdir(os.path.join(root, "class", "infiniband", name))
    names = [device["name"] for device in sysfs_topology.read_rdma_devices(root)]
    assert names == ["mlx5_0", "mlx5_bond_0"]


def test_software_rdma_device_without_pci_parent(tmp_path):
    root = fake_sysfs.build(tmp_path / "sys", NODES, PCI, RDMA)
    os.makedirs(os.path.join(root, "class", "infiniband", "rxe0"))
    rxe = [device for device in sysfs_topology.read_rdma_devices(root) if device["name"] == "rxe0"][0]
    assert rxe["pci_bus_id"] is None and rxe["numa_node"] is None and rxe["netdevs"] == []


def test_cpumask_when_no_cpulist(tmp_path):
    masked = {"0000:18:00.0": {"numa_node": 0, "cpulist": None, "cpumask": "00000000,0000ff00"}}
    root = fake_sysfs.build(tmp_path / "sys", NODES, masked)
    device = sysfs_topology.read_pci_device(root, "0000:18:00.0")
    assert device["cpus"] == list(range(8, 16)) and device["local_cpulist"] is None


def test_online_file_missing_falls_back_to_folders(tmp_path):
    root = fake_sysfs.build(tmp_path / "sys", NODES, {})
    os.unlink(os.path.join(root, "devices", "system", "node", "online"))
    assert [node["id"] for node in sysfs_topology.read_numa_nodes(root)] == [0, 1, 2]


def test_online_subset_only(tmp_path):
    root = fake_sysfs.build(tmp_path / "sys", NODES, {}, online="0,2")
    assert [node["id"] for node in sysfs_topology.read_numa_nodes(root)] == [0, 2]


def test_empty_tree(tmp_path):
    assert sysfs_topology.read_numa_nodes(str(tmp_path)) == []
    assert sysfs_topology.read_rdma_devices(str(tmp_path)) == []
    assert sysfs_topology.read_pci_device(str(tmp_path), "0000:18:00.0") is None


@pytest.mark.parametrize("content, expected", [("1\n", 1), ("0\n", 0), ("2", 2), ("", None), (None, None)])
def test_numa_balancing(tmp_path, content, expected):
    if content is not None:
        path = tmp_path / "sys" / "kernel"
        path.mkdir(parents=True)
        (path / "numa_balancing").write_text(content)
    assert sysfs_topology.read_numa_balancing(str(tmp_path)) == expected


def test_rdma_devices_in_class_and_pci_are_listed_once(tmp_path):
    root = fake_sysfs.build(tmp_path / "sys", NODES, PCI, RDMA, layout="flat")
    os.unlink(os.path.join(root, "class", "infiniband", "mlx5_bond_0", "device"))
    os.rmdir(os.path.join(root, "class", "infiniband", "mlx5_bond_0"))
    devices = sysfs_topology.read_rdma_devices(root)
    assert [(device["name"], device["pci_bus_id"]) for device in devices] == [
        ("mlx5_0", "0000:1a:00.0"), ("mlx5_bond_0", "0000:1a:00.1")]
