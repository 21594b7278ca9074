# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Combines nvidia-smi's view and sysfs's view into one GPU/NIC/NUMA topology.

Pure: it takes what the parsers and sysfs readers returned and decides, per
GPU, which NUMA nodes and CPUs a job should be bound to, which NICs are
nearest, and what deserves a warning. sysfs is the kernel's word on a PCI
device's node; nvidia-smi's NUMA Affinity is used where sysfs has none, and
where it spans several nodes (``6-7``) the binding spans them too. The node
binding and the CPU list always come from the same one of the two.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.hardening.plugins.module_utils.cpulist import format_cpulist
from ansible_collections.gpuops.hardening.plugins.module_utils.pci_bus_id import sysfs_bus_id

# Distance of a topo -m link, nearest first. SOC is what old drivers called SYS.
_LINK_RANK = {"PIX": 1, "PXB": 2, "PHB": 3, "NODE": 4, "SYS": 5, "SOC": 5}
_FAR = 5


def link_rank(value):
    """Rank of a link between a GPU and a NIC (lower is nearer); None if unknown."""
    if value is None:
        return None
    if re.match(r"^NV\d+$", value):
        return 0
    return _LINK_RANK.get(value.upper())


def _nearest(links, candidates):
    """The candidates with the best link rank, and that rank."""
    ranked = [(link_rank(links.get(label)), label) for label in candidates]
    ranked = [(rank, label) for rank, label in ranked if rank is not None]
    if not ranked:
        return [], None
    best = min(rank for rank, _label in ranked)
    return [label for rank, label in ranked if rank == best], best


def _nodes_of_cpus(cpus, numa_nodes):
    wanted = set(cpus or [])
    return [node["id"] for node in numa_nodes if wanted.intersection(node["cpus"])]


def _cpus_of_nodes(nodes, numa_nodes):
    return sorted(cpu for node in numa_nodes if node["id"] in nodes for cpu in node["cpus"])


def _bind_plan(index, gpu):
    """numactl and taskset arguments for one GPU, or Nones when unknown."""
    nodes = gpu["numa_affinity"]
    cpulist = gpu["local_cpulist"]
    plan = {
        "gpu": index,
        "uuid": gpu["uuid"],
        "pci_bus_id": gpu["pci_bus_id"],
        "numa_nodes": nodes,
        "numactl_args": None,
        "numactl": None,
        "taskset_cpus": cpulist,
        "taskset": "taskset -c %s" % cpulist if cpulist else None,
        # CUDA numbers devices fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID;
        # a UUID names the same GPU whatever the order.
        "cuda_visible_devices": gpu["uuid"] or str(index),
        "nvidia_smi_index": index,
    }
    if nodes:
        node_text = format_cpulist(nodes)
        # Memory on the CPUs' own nodes: host buffers stay local to the GPU.
        plan["numactl_args"] = ["--cpunodebind=%s" % node_text, "--membind=%s" % node_text]
        plan["numactl"] = "numactl " + " ".join(plan["numactl_args"])
    return plan


def _affinity_source(pci, topo, numa_nodes, cpu_nodes):
    """(source, nodes, local CPUs) from ONE source, so node binding and CPU list agree.

    sysfs's numa_node when it is >= 0 (the kernel's word); else nvidia-smi's
    NUMA Affinity, or on old drivers the nodes of its CPU Affinity; else the
    host's only node with CPUs. Local CPUs come from the same source.
    """
    if pci.get("numa_node") is not None:
        return "sysfs", [pci["numa_node"]], pci.get("cpus")
    if topo.get("numa_affinity"):
        return "nvidia-smi", list(topo["numa_affinity"]), topo.get("cpu_affinity")
    if topo.get("cpu_affinity") and pci.get("numa_node_raw") != -1:
        return "nvidia-smi", _nodes_of_cpus(topo["cpu_affinity"], numa_nodes), topo["cpu_affinity"]
    if len(cpu_nodes) == 1:
        # One node with CPUs (a workstation, most VMs): the only choice there is.
        return "only node", list(cpu_nodes), pci.get("cpus")
    return None, [], pci.get("cpus")


def _gpu_entry(raw, address, pci, topo, numa_nodes, cpu_nodes, warnings):
    """One GPU, its binding and CPUs from one source (see _affinity_source)."""
    where = "GPU %d (%s)" % (raw["index"], address or raw["pci_bus_id"])
    numa_node = pci.get("numa_node")
    topo_nodes = topo.get("numa_affinity")
    if pci and pci.get("numa_node_raw") == -1:
        warnings.append("%s: the kernel reports no NUMA node for it (numa_node is -1, as in many VMs)" % where)
    elif not pci and topo_nodes and len(topo_nodes) == 1:
        numa_node = topo_nodes[0]
    if pci.get("numa_node") is not None and topo_nodes and numa_node not in topo_nodes:
        warnings.append("%s: sysfs puts it on NUMA node %d but nvidia-smi reports NUMA affinity %s; "
                        "binding and CPUs follow sysfs" % (where, numa_node, format_cpulist(topo_nodes)))

    source, bind_nodes, cpus = _affinity_source(pci, topo, numa_nodes, cpu_nodes)
    if bind_nodes and cpu_nodes and not set(bind_nodes) <= set(cpu_nodes):
        # --cpunodebind needs nodes with CPUs; a CPU-less node (HBM, CXL memory)
        # gives way to the nodes that hold the GPU's CPUs.
        bind_nodes = [node for node in bind_nodes if node in cpu_nodes] or _nodes_of_cpus(cpus, numa_nodes)
    if bind_nodes:
        node_cpus = _cpus_of_nodes(bind_nodes, numa_nodes)
        # taskset and numactl name the same CPUs: the source's local CPUs on the bound nodes.
        if node_cpus:
            cpus = sorted(set(cpus).intersection(node_cpus)) if cpus and set(cpus) & set(node_cpus) else node_cpus
    else:
        bind_nodes = source = None
        warnings.append("%s: its NUMA affinity is unknown, so jobs on it cannot be bound to a node" % where)

    return {
        "index": raw["index"],
        "uuid": raw["uuid"],
        "name": raw["name"],
        # The N of /dev/nvidiaN, which need not be the index.
        "minor_number": raw.get("minor_number"),
        "pci_bus_id": address or raw["pci_bus_id"],
        "pci_bus_id_nvidia_smi": raw["pci_bus_id"],
        "numa_node": numa_node,
        "numa_affinity": bind_nodes,
        "numa_affinity_source": source,
        "gpu_memory_numa_node": topo.get("gpu_numa_id"),
        "cpus": cpus,
        "local_cpulist": format_cpulist(cpus) if cpus is not None else None,
        "nearest_nics": [],
        "memory_total_mib": raw["memory_total_mib"],
        "persistence_mode": raw["persistence_mode"],
        "mig_mode": raw["mig_mode"],
        "mig_mode_pending": raw["mig_mode_pending"],
        "compute_mode": raw["compute_mode"],
    }


def merge_mig_devices(from_query, from_list):
    """A GPU's MIG devices with the ids of -q -x and the profile and UUID of -L, joined on the MIG index.

    -q -x gives each MIG device its GPU and compute instance ids but no profile; -L the reverse.
    Each item holds index, profile, uuid, gpu_instance_id and compute_instance_id (None where
    the command that gives it was not read). The order is -L's, then devices only -q -x lists.
    """
    by_index = dict((device.get("index"), device) for device in from_query)
    merged = []
    for device in from_list:
        ids = by_index.pop(device.get("index"), {})
        merged.append(dict(device, gpu_instance_id=ids.get("gpu_instance_id"),
                           compute_instance_id=ids.get("compute_instance_id")))
    for device in from_query:
        if device.get("index") in by_index:
            merged.append({"index": device.get("index"), "profile": None, "uuid": None,
                           "gpu_instance_id": device.get("gpu_instance_id"),
                           "compute_instance_id": device.get("compute_instance_id")})
    return merged


def build_topology(query, matrix=None, pci_devices=None, rdma_devices=None,
                   numa_nodes=None, numa_balancing=None, gpu_list=None):
    """Assemble the ``gpu_topology`` fact.

    query: parse_query_xml() output (or None when there is no GPU tool).
    matrix: parse_topology_matrix() output or None.
    pci_devices: {sysfs PCI address: read_pci_device() output or None}.
    rdma_devices: read_rdma_devices() output. numa_nodes: read_numa_nodes().
    numa_balancing: read_numa_balancing(). gpu_list: parse_gpu_list() or None,
    read only for MIG device UUIDs.
    """
    query = query or {"driver_version": None, "cuda_version": None, "gpus": []}
    matrix = matrix or {"labels": [], "gpus": {}, "nics": {}, "links": {}}
    pci_devices = pci_devices or {}
    rdma_devices = rdma_devices or []
    numa_nodes = numa_nodes or []
    warnings = []

    topo_links = matrix["links"]
    topo_nic_labels = [label for label in matrix["labels"] if label in matrix["nics"]]
    nic_label_by_name = {}
    for label in topo_nic_labels:
        nic_label_by_name[matrix["nics"][label] or label] = label
    rdma_by_name = dict((nic["name"], nic) for nic in rdma_devices)
    mig_by_index = dict((item["index"], item["mig_devices"]) for item in (gpu_list or []))

    cpu_nodes = [node["id"] for node in numa_nodes if node["cpus"]]
    gpus = []
    for raw in query["gpus"]:
        address = sysfs_bus_id(raw["pci_bus_id"])
        gpu = _gpu_entry(raw, address, pci_devices.get(address) or {},
                         matrix["gpus"].get("GPU%d" % raw["index"]) or {}, numa_nodes, cpu_nodes, warnings)
        gpu.update({
            "mig_devices": merge_mig_devices(raw.get("mig_devices") or [], mig_by_index.get(raw["index"], [])),
            "driver_version": query["driver_version"],
            "cuda_version": query["cuda_version"],
        })
        gpus.append(gpu)

    nics = _nics(rdma_devices, matrix, topo_nic_labels, nic_label_by_name)
    nic_by_name = dict((nic["name"], nic) for nic in nics)
    for gpu in gpus:
        gpu["nearest_nics"], rank = _nearest_nics(gpu, nics, topo_links, nic_label_by_name)
        far = [name for name in gpu["nearest_nics"]
               if _other_node(gpu["numa_node"], nic_by_name[name]["numa_node"])]
        if gpu["nearest_nics"] and (rank == _FAR or far):
            warnings.append("GPU %d: its nearest NIC (%s) is on another NUMA node; GPUDirect RDMA "
                            "traffic crosses the socket interconnect"
                            % (gpu["index"], ", ".join(gpu["nearest_nics"])))
    for nic in nics:
        nic["nearest_gpus"] = sorted(gpu["index"] for gpu in gpus if nic["name"] in gpu["nearest_nics"])
        if nic["name"] in rdma_by_name and rdma_by_name[nic["name"]].get("numa_node_raw") == -1:
            warnings.append("NIC %s: the kernel reports no NUMA node for it (numa_node is -1)" % nic["name"])

    nodes = []
    for node in numa_nodes:
        entry = dict(node)
        entry["gpus"] = [gpu["index"] for gpu in gpus if gpu["numa_affinity"] and node["id"] in gpu["numa_affinity"]]
        entry["nics"] = [nic["name"] for nic in nics if nic["numa_node"] == node["id"]]
        nodes.append(entry)

    if numa_balancing and len(cpu_nodes) > 1:
        warnings.append("kernel.numa_balancing is %d: the kernel keeps migrating the memory of bound jobs; "
                        "set it to 0 on GPU nodes" % numa_balancing)

    return {
        "driver_version": query["driver_version"],
        "cuda_version": query["cuda_version"],
        "gpus": gpus,
        "nics": nics,
        "numa_nodes": nodes,
        "numa_balancing": None if numa_balancing is None else bool(numa_balancing),
        "links": {"labels": list(matrix["labels"]), "nics": dict(matrix["nics"]),
                  "matrix": dict((k, dict(v)) for k, v in topo_links.items())},
        "recommendations": [_bind_plan(gpu["index"], gpu) for gpu in gpus],
        "warnings": warnings,
    }


def _other_node(gpu_node, nic_node):
    return gpu_node is not None and nic_node is not None and gpu_node != nic_node


def _nics(rdma_devices, matrix, topo_nic_labels, nic_label_by_name):
    """RDMA devices from sysfs, then any the matrix names that sysfs lacks."""
    nics = []
    for device in rdma_devices:
        nics.append({
            "name": device["name"],
            "netdevs": list(device["netdevs"]),
            "pci_bus_id": device["pci_bus_id"],
            "numa_node": device["numa_node"],
            "local_cpulist": device["local_cpulist"],
            "topology_label": nic_label_by_name.get(device["name"]),
            "nearest_gpus": [],
        })
    known = set(nic["name"] for nic in nics)
    for label in topo_nic_labels:
        name = matrix["nics"][label] or label
        if name not in known:
            nics.append({"name": name, "netdevs": [], "pci_bus_id": None, "numa_node": None,
                         "local_cpulist": None, "topology_label": label, "nearest_gpus": []})
    return nics


def _nearest_nics(gpu, nics, topo_links, nic_label_by_name):
    """NIC names nearest to a GPU: by topo -m link type, else by NUMA node."""
    gpu_links = topo_links.get("GPU%d" % gpu["index"], {})
    labelled = [(nic_label_by_name.get(nic["name"]), nic["name"]) for nic in nics]
    labelled = [(label, name) for label, name in labelled if label and label in gpu_links]
    if labelled:
        best, rank = _nearest(gpu_links, [label for label, _name in labelled])
        return [name for label, name in labelled if label in best], rank
    if gpu["numa_node"] is None:
        return [], None
    return [nic["name"] for nic in nics if nic["numa_node"] == gpu["numa_node"]], None
