# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Inputs for gpu_topology.build_topology, and a topology made from a ``topo -m`` text alone."""

from __future__ import annotations

from ansible_collections.gpuops.hardening.plugins.module_utils import gpu_topology, nvidia_smi, sysfs_topology
from ansible_collections.gpuops.hardening.plugins.module_utils.cpulist import format_cpulist
from ansible_collections.gpuops.hardening.tests.unit.plugins.module_utils import fake_sysfs


def gpu_query(*bus_ids, **extra):
    """A parse_query_xml() result with one test GPU per PCI bus id; extra overrides every GPU's fields."""
    gpus = []
    for index, bus_id in enumerate(bus_ids):
        gpu = {"index": index, "name": "Test GPU", "uuid": "GPU-%08d-0000-0000-0000-000000000000" % index,
               "pci_bus_id": bus_id, "minor_number": index, "memory_total_mib": 81559,
               "persistence_mode": "Enabled", "mig_mode": "Disabled", "mig_mode_pending": "Disabled",
               "compute_mode": "Default", "mig_devices": []}
        gpu.update(extra)
        gpus.append(gpu)
    return {"driver_version": "550.90.07", "cuda_version": "12.4", "gpus": gpus}


def _numa_nodes_of(matrix):
    """{node id: sysfs node} as the matrix implies: its NUMA Affinity column, else one node per CPU Affinity."""
    nodes = {}
    affinities = [gpu for _label, gpu in sorted(matrix["gpus"].items()) if gpu["cpu_affinity"]]
    for gpu in affinities:
        if gpu["numa_affinity"] and len(gpu["numa_affinity"]) == 1:
            nodes.setdefault(gpu["numa_affinity"][0], set()).update(gpu["cpu_affinity"])
    if not nodes:
        for gpu in affinities:
            cpus = set(gpu["cpu_affinity"])
            if cpus not in nodes.values():
                nodes[len(nodes)] = cpus
    return dict((node_id, {"cpus": format_cpulist(sorted(cpus)), "memory_kib": 0, "distances": []})
                for node_id, cpus in nodes.items())


def topology_from_matrix(tmp_path, text):
    """The gpu_topology fact of a host known only by its ``nvidia-smi topo -m`` output.

    GPUs get made-up PCI addresses and the name "Test GPU"; NUMA nodes hold the CPUs the
    matrix gives them; NICs come from the matrix without sysfs data.
    """
    matrix = nvidia_smi.parse_topology_matrix(text)
    bus_ids = ["00000000:%02X:00.0" % (index + 1) for index in range(len(matrix["gpus"]))]
    root = fake_sysfs.build(tmp_path / "sys", _numa_nodes_of(matrix), {})
    return gpu_topology.build_topology(gpu_query(*bus_ids), matrix=matrix, numa_nodes=sysfs_topology.read_numa_nodes(root),
                                       numa_balancing=0)
