# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the topology picture shows, before any geometry: boxes, members and links.

Reads the ``gpu_topology`` fact (see the gpu_numa_facts module). A GPU or NIC sits in
the box of the NUMA node the kernel gives it; a NIC without one sits with the GPUs it
shares a NUMA node with according to ``topo -m``; the rest go to the "unknown" box.
Only the close PCIe kinds (PIX, PXB, PHB) and NVLink become lines: NODE and SYS are
what the boxes already say (same box, other box).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

NVLINK = re.compile(r"^NV(\d+)$")
# Nearest first; these are drawn as lines.
CLOSE_KINDS = ("PIX", "PXB", "PHB")
# Kinds that put two devices on the same NUMA node.
SAME_NODE_KINDS = CLOSE_KINDS + ("NODE",)
UNKNOWN = "unknown"


def link_kind(value):
    """A topo -m cell as a link kind: NV#, PIX, PXB, PHB, NODE or SYS (SOC, the old SYS); None otherwise."""
    if not value:
        return None
    value = value.strip().upper()
    if NVLINK.match(value):
        return value
    if value == "SOC":
        return "SYS"
    return value if value in SAME_NODE_KINDS + ("SYS",) else None


def _links(topology):
    return (topology.get("links") or {}).get("matrix") or {}


def _between(matrix, label, other):
    if not label or not other:
        return None
    return link_kind((matrix.get(label) or {}).get(other) or (matrix.get(other) or {}).get(label))


def gpu_label(gpu):
    return "GPU%d" % gpu["index"]


def _nic_label(topology, nic):
    """The NIC's column in topo -m: its recorded label, else the label the legend maps to its name."""
    if nic.get("topology_label"):
        return nic["topology_label"]
    for label, name in ((topology.get("links") or {}).get("nics") or {}).items():
        if name == nic.get("name"):
            return label
    return None


class Layout(object):
    """Boxes (NUMA nodes with CPUs, plus "unknown"), memory-only nodes and the links to draw.

    boxes: [(box id, node or None, [gpu], [nic])] in node order, "unknown" last when used.
    memory_nodes: CPU-less NUMA nodes. fabric: the NV# kind every GPU pair shares, or None.
    gpu_links: [(kind, gpu a, gpu b)] drawn as arcs. nic_links: [(kind, gpu, nic)].
    """

    def __init__(self, topology):
        self.topology = topology
        nodes = [node for node in topology.get("numa_nodes") or [] if isinstance(node, dict)]
        self.memory_nodes = [node for node in nodes if _memory_only(node)]
        cpu_nodes = dict((node.get("id"), node) for node in nodes if not _memory_only(node))
        memory_ids = set(node.get("id") for node in self.memory_nodes)
        self.gpus = [gpu for gpu in topology.get("gpus") or [] if isinstance(gpu, dict) and gpu.get("index") is not None]
        self.nics = [nic for nic in topology.get("nics") or [] if isinstance(nic, dict) and nic.get("name")]
        matrix = _links(topology)
        self.nic_labels = dict((nic["name"], _nic_label(topology, nic)) for nic in self.nics)

        gpu_home = dict((gpu["index"], _gpu_home(gpu, memory_ids)) for gpu in self.gpus)
        nic_home = {}
        for nic in self.nics:
            nic_home[nic["name"]] = self._nic_home(nic, gpu_home, memory_ids, matrix)

        # Nodes named by a device but missing from numa_nodes still get a box (no CPU data).
        for home in list(gpu_home.values()) + list(nic_home.values()):
            if home is not None and home not in cpu_nodes:
                cpu_nodes[home] = {"id": home}
        self.boxes = []
        for node_id in sorted(cpu_nodes, key=_sort_key):
            self.boxes.append((node_id, cpu_nodes[node_id],
                               [gpu for gpu in self.gpus if gpu_home[gpu["index"]] == node_id],
                               [nic for nic in self.nics if nic_home[nic["name"]] == node_id]))
        stray_gpus = [gpu for gpu in self.gpus if gpu_home[gpu["index"]] is None]
        stray_nics = [nic for nic in self.nics if nic_home[nic["name"]] is None]
        if stray_gpus or stray_nics:
            self.boxes.append((UNKNOWN, None, stray_gpus, stray_nics))

        self.fabric = self._fabric(matrix)
        self.gpu_links = [] if self.fabric else self._gpu_links(matrix)
        self.nic_links = [(kind, gpu, nic) for gpu in self.gpus for nic in self.nics
                          for kind in [_between(matrix, gpu_label(gpu), self.nic_labels[nic["name"]])]
                          if kind in CLOSE_KINDS]

    def _nic_home(self, nic, gpu_home, memory_ids, matrix):
        if nic.get("numa_node") is not None and nic["numa_node"] not in memory_ids:
            return nic["numa_node"]
        label = self.nic_labels[nic["name"]]
        near = [(SAME_NODE_KINDS.index(kind), gpu["index"]) for gpu in self.gpus
                for kind in [_between(matrix, gpu_label(gpu), label)]
                if kind in SAME_NODE_KINDS and gpu_home[gpu["index"]] is not None]
        return gpu_home[min(near)[1]] if near else None

    def _pairs(self, matrix):
        for position, gpu in enumerate(self.gpus):
            for other in self.gpus[position + 1:]:
                yield gpu, other, _between(matrix, gpu_label(gpu), gpu_label(other))

    def _fabric(self, matrix):
        """The NV# kind when at least three GPUs all reach each other over the same number of NVLinks."""
        kinds = set(kind for _gpu, _other, kind in self._pairs(matrix))
        if len(self.gpus) >= 3 and len(kinds) == 1:
            kind = kinds.pop()
            return kind if kind and NVLINK.match(kind) else None
        return None

    def _gpu_links(self, matrix):
        return [(kind, gpu, other) for gpu, other, kind in self._pairs(matrix)
                if kind and (NVLINK.match(kind) or kind in CLOSE_KINDS)]


def _memory_only(node):
    """A NUMA node without CPUs (GPU or HBM memory); a node without the key is one we know nothing of."""
    return node.get("has_cpu") is False or ("cpus" in node and not node["cpus"] and not node.get("cpulist"))


def _gpu_home(gpu, memory_ids):
    """The NUMA node the GPU is drawn in: sysfs's, else nvidia-smi's; None when only a guess exists."""
    if gpu.get("numa_node") is not None and gpu["numa_node"] not in memory_ids:
        return gpu["numa_node"]
    # "only node" is the binding's guess on a one-node host, not the GPU's known place.
    if gpu.get("numa_affinity_source") != "only node":
        nodes = [node for node in gpu.get("numa_affinity") or [] if node not in memory_ids]
        if nodes:
            return nodes[0]
    return None


def _sort_key(node_id):
    return (0, node_id, "") if isinstance(node_id, int) else (1, 0, str(node_id))
