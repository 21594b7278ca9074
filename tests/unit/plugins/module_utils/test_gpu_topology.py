# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Combining nvidia-smi and sysfs into the gpu_topology fact."""

from __future__ import annotations

import os

from ansible_collections.gpuops.hardening.plugins.module_utils import gpu_topology, nvidia_smi, sysfs_topology
from ansible_collections.gpuops.hardening.tests.unit.plugins.module_utils import fake_sysfs
from ansible_collections.gpuops.hardening.tests.unit.plugins.module_utils.topology_builders import gpu_query

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "nvidia_smi")


def _sample(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


# Four GPUs and three NICs on nodes 0 and 2 of a 4-node host; matches topo_4gpu_3nic_tabs.txt.
NODES4 = {
    0: {"cpus": "0-15,64-79", "memory_kib": 100, "distances": [10, 12, 32, 32]},
    1: {"cpus": "16-31,80-95", "memory_kib": 100, "distances": [12, 10, 32, 32]},
    2: {"cpus": "32-47,96-111", "memory_kib": 100, "distances": [32, 32, 10, 12]},
    3: {"cpus": "48-63,112-127", "memory_kib": 100, "distances": [32, 32, 12, 10]},
}
PCI4 = {
    "0000:18:00.0": {"numa_node": 0, "cpulist": "0-15,64-79"},
    "0000:2a:00.0": {"numa_node": 0, "cpulist": "0-15,64-79"},
    "0000:9a:00.0": {"numa_node": 2, "cpulist": "32-47,96-111"},
    "0000:ab:00.0": {"numa_node": 2, "cpulist": "32-47,96-111"},
    "0000:1a:00.0": {"numa_node": 0, "cpulist": "0-15,64-79", "net": ["ibp26s0"]},
    "0000:9c:00.0": {"numa_node": 2, "cpulist": "32-47,96-111", "net": ["ibp156s0"]},
    "0000:2c:00.0": {"numa_node": 0, "cpulist": "0-15,64-79", "net": ["bond0"]},
}
RDMA4 = {"mlx5_0": "0000:1a:00.0", "mlx5_1": "0000:9c:00.0", "mlx5_bond_0": "0000:2c:00.0"}
BUS4 = ("00000000:18:00.0", "00000000:2A:00.0", "00000000:9A:00.0", "00000000:AB:00.0")


def _build(tmp_path, query, matrix_text=None, nodes=None, pci=None, rdma=None, numa_balancing=0, gpu_list=None):
    root = fake_sysfs.build(tmp_path / "sys", nodes if nodes is not None else NODES4,
                            pci if pci is not None else PCI4, rdma if rdma is not None else RDMA4)
    pci_devices = {}
    for gpu in (query or {"gpus": []})["gpus"]:
        address = nvidia_smi.pci_bus_id_to_sysfs(gpu["pci_bus_id"])
        pci_devices[address] = sysfs_topology.read_pci_device(root, address)
    return gpu_topology.build_topology(
        query,
        matrix=nvidia_smi.parse_topology_matrix(matrix_text) if matrix_text is not None else None,
        pci_devices=pci_devices,
        rdma_devices=sysfs_topology.read_rdma_devices(root),
        numa_nodes=sysfs_topology.read_numa_nodes(root),
        numa_balancing=numa_balancing,
        gpu_list=gpu_list,
    )


def test_full_host(tmp_path):
    topology = _build(tmp_path, gpu_query(*BUS4), _sample("topo_4gpu_3nic_tabs.txt"))
    gpu0, gpu1, gpu2, gpu3 = topology["gpus"]
    assert gpu0["pci_bus_id"] == "0000:18:00.0" and gpu0["pci_bus_id_nvidia_smi"] == "00000000:18:00.0"
    assert gpu3["pci_bus_id"] == "0000:ab:00.0"
    assert gpu0["numa_node"] == 0 and gpu0["numa_affinity"] == [0]
    assert gpu3["numa_node"] == 2 and gpu3["local_cpulist"] == "32-47,96-111"
    assert gpu3["cpus"] == list(range(32, 48)) + list(range(96, 112))
    assert gpu0["nearest_nics"] == ["mlx5_0"]
    assert gpu1["nearest_nics"] == ["mlx5_bond_0"]
    assert gpu2["nearest_nics"] == ["mlx5_1"] and gpu3["nearest_nics"] == ["mlx5_1"]
    assert gpu0["driver_version"] == "550.90.07" and gpu0["cuda_version"] == "12.4"

    nics = {nic["name"]: nic for nic in topology["nics"]}
    assert nics["mlx5_1"] == {"name": "mlx5_1", "netdevs": ["ibp156s0"], "pci_bus_id": "0000:9c:00.0",
                              "numa_node": 2, "local_cpulist": "32-47,96-111", "topology_label": "NIC1",
                              "nearest_gpus": [2, 3]}
    assert nics["mlx5_bond_0"]["topology_label"] == "NIC2"

    assert [node["gpus"] for node in topology["numa_nodes"]] == [[0, 1], [], [2, 3], []]
    assert topology["numa_nodes"][2]["nics"] == ["mlx5_1"]

    plan = topology["recommendations"][3]
    assert plan["numactl_args"] == ["--cpunodebind=2", "--membind=2"]
    assert plan["numactl"] == "numactl --cpunodebind=2 --membind=2"
    assert plan["taskset"] == "taskset -c 32-47,96-111"
    # CUDA's default order is fastest first; the UUID names this GPU whatever the order.
    assert plan["cuda_visible_devices"] == gpu3["uuid"] == plan["uuid"]
    assert plan["nvidia_smi_index"] == 3

    assert topology["links"]["labels"][:4] == ["GPU0", "GPU1", "GPU2", "GPU3"]
    assert topology["links"]["matrix"]["GPU0"]["NIC0"] == "PIX"
    assert topology["numa_balancing"] is False
    assert topology["warnings"] == []


def test_vm_without_numa_node(tmp_path):
    pci = {"0000:00:04.0": {"numa_node": -1, "cpulist": "0-15"}}
    nodes = {0: {"cpus": "0-7", "memory_kib": 1, "distances": [10, 20]},
             1: {"cpus": "8-15", "memory_kib": 1, "distances": [20, 10]}}
    topology = _build(tmp_path, gpu_query("00000000:00:04.0"), nodes=nodes, pci=pci, rdma={})
    (gpu,) = topology["gpus"]
    assert gpu["numa_node"] is None and gpu["numa_affinity"] is None
    assert topology["recommendations"][0]["numactl_args"] is None
    assert topology["recommendations"][0]["taskset_cpus"] == "0-15"
    assert any("numa_node is -1" in warning for warning in topology["warnings"])
    assert any("affinity is unknown" in warning for warning in topology["warnings"])


def test_single_node_host_without_numa_node_binds_to_its_only_node(tmp_path):
    pci = {"0000:00:04.0": {"numa_node": -1, "cpulist": "0-7"}}
    nodes = {0: {"cpus": "0-7", "memory_kib": 1, "distances": [10]}}
    topology = _build(tmp_path, gpu_query("00000000:00:04.0"), nodes=nodes, pci=pci, rdma={})
    (gpu,) = topology["gpus"]
    assert gpu["numa_node"] is None and gpu["numa_affinity"] == [0]
    assert topology["recommendations"][0]["numactl"] == "numactl --cpunodebind=0 --membind=0"
    assert [w for w in topology["warnings"] if "affinity is unknown" in w] == []
    assert any("numa_node is -1" in warning for warning in topology["warnings"])


def test_gpu_memory_as_cpuless_node(tmp_path):
    nodes = {0: {"cpus": "0-71", "memory_kib": 1, "distances": [10, 80]},
             1: {"cpus": "", "memory_kib": 2, "distances": [80, 10]}}
    pci = {"0009:01:00.0": {"numa_node": 0, "cpulist": "0-71"}}
    topology = _build(tmp_path, gpu_query("00000009:01:00.0"), _sample("topo_1gpu_gpu_numa_id.txt"),
                      nodes=nodes, pci=pci, rdma={})
    (gpu,) = topology["gpus"]
    assert gpu["pci_bus_id"] == "0009:01:00.0"
    assert gpu["numa_node"] == 0 and gpu["gpu_memory_numa_node"] == 1
    assert topology["recommendations"][0]["numactl_args"] == ["--cpunodebind=0", "--membind=0"]
    assert topology["numa_nodes"][1]["has_cpu"] is False
    # Only one node has CPUs: NUMA balancing does not matter there.
    assert not any("numa_balancing" in warning for warning in _build(
        tmp_path / "again", gpu_query("00000009:01:00.0"), nodes=nodes, pci=pci, rdma={}, numa_balancing=1)["warnings"])


SPANNING_TOPO = ("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n"
                 "GPU0\t X \tSYS\t48-63\t6-7\nGPU1\tSYS\t X \t0-15\t0-1\n")
EIGHT_NODES = dict((n, {"cpus": "%d-%d" % (n * 8, n * 8 + 7), "memory_kib": 1, "distances": []}) for n in range(8))


def test_affinity_spanning_nodes(tmp_path):
    """Without a sysfs node, nvidia-smi's span is the binding, and its CPUs the CPU list."""
    pci = {"0000:01:00.0": {"numa_node": 0, "cpulist": "0-15"}}
    topology = _build(tmp_path, gpu_query("00000000:C1:00.0", "00000000:01:00.0"), SPANNING_TOPO,
                      nodes=EIGHT_NODES, pci=pci, rdma={})
    gpu0 = topology["gpus"][0]
    assert gpu0["numa_affinity"] == [6, 7] and gpu0["numa_affinity_source"] == "nvidia-smi"
    assert gpu0["local_cpulist"] == "48-63"
    assert topology["recommendations"][0]["numactl"] == "numactl --cpunodebind=6-7 --membind=6-7"
    assert [node["gpus"] for node in topology["numa_nodes"]] == [[1], [], [], [], [], [], [0], [0]]
    assert topology["warnings"] == []


def test_sysfs_node_is_the_one_source_of_binding_and_cpus(tmp_path):
    """sysfs says node 6 (its local CPUs span 6-7), nvidia-smi says 6-7: both follow sysfs."""
    pci = {"0000:c1:00.0": {"numa_node": 6, "cpulist": "48-63"}, "0000:01:00.0": {"numa_node": 0, "cpulist": "0-15"}}
    topology = _build(tmp_path, gpu_query("00000000:C1:00.0", "00000000:01:00.0"), SPANNING_TOPO,
                      nodes=EIGHT_NODES, pci=pci, rdma={})
    gpu0, gpu1 = topology["gpus"]
    assert gpu0["numa_node"] == 6 and gpu0["numa_affinity"] == [6] and gpu0["numa_affinity_source"] == "sysfs"
    assert gpu0["local_cpulist"] == "48-55" and gpu0["cpus"] == list(range(48, 56))
    assert topology["recommendations"][0]["numactl"] == "numactl --cpunodebind=6 --membind=6"
    assert topology["recommendations"][0]["taskset"] == "taskset -c 48-55"
    assert gpu1["numa_affinity"] == [0] and gpu1["local_cpulist"] == "0-7"
    assert topology["warnings"] == []


def test_nearest_nic_on_other_node_and_numa_balancing(tmp_path):
    text = ("\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\n"
            "GPU0\t X \tSYS\tNODE\t0-15,64-79\t0\n"
            "GPU1\tSYS\t X \tSYS\t32-47,96-111\t2\n"
            "NIC0\tNODE\tSYS\t X \n\nNIC Legend:\n  NIC0: mlx5_0\n")
    topology = _build(tmp_path, gpu_query("00000000:18:00.0", "00000000:9A:00.0"), text,
                      rdma={"mlx5_0": "0000:1a:00.0"}, numa_balancing=1)
    assert topology["gpus"][1]["nearest_nics"] == ["mlx5_0"]
    assert topology["numa_balancing"] is True
    warnings = topology["warnings"]
    assert any(w.startswith("GPU 1: its nearest NIC (mlx5_0) is on another NUMA node") for w in warnings)
    assert not any(w.startswith("GPU 0:") for w in warnings)
    assert any("kernel.numa_balancing is 1" in w for w in warnings)


def test_without_topo_matrix_nics_come_from_numa_nodes(tmp_path):
    topology = _build(tmp_path, gpu_query(*BUS4))
    assert topology["gpus"][0]["nearest_nics"] == ["mlx5_0", "mlx5_bond_0"]
    assert topology["gpus"][2]["nearest_nics"] == ["mlx5_1"]
    assert topology["links"] == {"labels": [], "nics": {}, "matrix": {}}
    assert topology["recommendations"][2]["numactl_args"] == ["--cpunodebind=2", "--membind=2"]


def test_sysfs_and_nvidia_smi_disagree(tmp_path):
    text = "\tGPU0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t32-47\t2\n"
    topology = _build(tmp_path, gpu_query("00000000:18:00.0"), text)
    gpu = topology["gpus"][0]
    assert gpu["numa_node"] == 0
    assert any("sysfs puts it on NUMA node 0 but nvidia-smi reports NUMA affinity 2; binding and CPUs follow sysfs"
               in w for w in topology["warnings"])
    # The node binding and the CPU list come from the same source.
    assert gpu["numa_affinity"] == [0] and gpu["local_cpulist"] == "0-15,64-79"
    assert topology["recommendations"][0]["numactl"] == "numactl --cpunodebind=0 --membind=0"
    assert topology["recommendations"][0]["taskset_cpus"] == "0-15,64-79"


def test_old_driver_without_sysfs_binds_to_the_nodes_of_its_cpus(tmp_path):
    text = "\tGPU0\tmlx5_0\tCPU Affinity\nGPU0\t X \tPIX\t32-47,96-111\nmlx5_0\tPIX\t X \n"
    topology = _build(tmp_path, gpu_query("00000000:77:00.0"), text, rdma={})
    (gpu,) = topology["gpus"]
    assert gpu["numa_node"] is None and gpu["numa_affinity"] == [2]
    assert gpu["nearest_nics"] == ["mlx5_0"]
    assert topology["nics"][-1]["name"] == "mlx5_0" and topology["nics"][-1]["pci_bus_id"] is None
    assert topology["nics"][-1]["nearest_gpus"] == [0]


def test_no_gpus(tmp_path):
    topology = _build(tmp_path, None, numa_balancing=None)
    assert topology["gpus"] == [] and topology["recommendations"] == []
    assert len(topology["numa_nodes"]) == 4 and len(topology["nics"]) == 3
    assert topology["numa_balancing"] is None and topology["driver_version"] is None


def test_mig_devices_from_gpu_list(tmp_path):
    gpu_list = nvidia_smi.parse_gpu_list(_sample("gpu_list_mixed.txt"))
    topology = _build(tmp_path, gpu_query(*BUS4[:2]), gpu_list=gpu_list)
    assert [device["profile"] for device in topology["gpus"][0]["mig_devices"]] == ["3g.40gb", "1g.10gb+me"]
    assert topology["gpus"][1]["mig_devices"] == []


def test_link_rank():
    assert gpu_topology.link_rank("PIX") < gpu_topology.link_rank("PXB") < gpu_topology.link_rank("PHB")
    assert gpu_topology.link_rank("PHB") < gpu_topology.link_rank("NODE") < gpu_topology.link_rank("SYS")
    assert gpu_topology.link_rank("SOC") == gpu_topology.link_rank("SYS")
    assert gpu_topology.link_rank("NV18") == 0
    assert gpu_topology.link_rank("OK") is None and gpu_topology.link_rank(None) is None


def test_cpuless_node_named_by_sysfs_gives_way_to_the_cpu_nodes(tmp_path):
    nodes = {0: {"cpus": "0-7", "memory_kib": 1, "distances": [10, 20]},
             1: {"cpus": "8-15", "memory_kib": 1, "distances": [20, 10]},
             2: {"cpus": "", "memory_kib": 1, "distances": [30, 30]}}
    pci = {"0000:18:00.0": {"numa_node": 2, "cpulist": "8-15"}}
    topology = _build(tmp_path, gpu_query("00000000:18:00.0"), nodes=nodes, pci=pci, rdma={})
    assert topology["gpus"][0]["numa_node"] == 2
    assert topology["gpus"][0]["numa_affinity"] == [1]
    assert topology["recommendations"][0]["numactl"] == "numactl --cpunodebind=1 --membind=1"
