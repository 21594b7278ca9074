# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi topo -m: the tab-separated link matrix, affinities and legends."""

from . import pci

# nvidia-smi underlines the header row with terminal escapes, even into a pipe.
UNDERLINE, RESET = "\x1b[4m", "\x1b[0m"

HELP = """
    topo -- Display topological information about the system.

    Usage: nvidia-smi topo [options]

    Options include:
    [-m | --matrix]: Display the GPUDirect communication matrix for the system.
"""

LEGEND = [
    ("X", "Self"),
    ("SYS", "Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)"),
    ("NODE", "Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node"),
    ("PHB", "Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)"),
    ("PXB", "Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)"),
    ("PIX", "Connection traversing at most a single PCIe bridge"),
    ("NV#", "Connection traversing a bonded set of # NVLinks"),
]


def _link(state, first, second):
    if first is second:
        return " X "
    nvlink = state.get("nvlink")
    both_gpus = "uuid" in first and "uuid" in second
    if both_gpus and nvlink:
        return "NV%d" % nvlink["links"]
    return pci.relation(first, second)


def render(state):
    nodes = {node["id"]: node for node in state["numa_nodes"]}
    gpus = state["gpus"]
    nics = state["nics"]
    devices = [("GPU%d" % g["index"], g) for g in gpus] + [("NIC%d" % n, nic) for n, nic in enumerate(nics)]
    heads = [label for label, _item in devices] + ["CPU Affinity", "NUMA Affinity", "GPU NUMA ID"]
    lines = ["\t" + UNDERLINE + "\t".join(heads) + RESET]
    for label, item in devices:
        cells = [label] + [_link(state, item, other) for _label, other in devices]
        if "uuid" in item:
            gpu_numa = item.get("gpu_numa_id")
            node = item["numa_node"]
            cells.append(nodes[node]["cpus"] if node >= 0 else state["cpus_possible"])
            # The driver leaves an empty cell before GPU NUMA ID.
            cells += [str(node) if node >= 0 else "N/A", "", "N/A" if gpu_numa is None else str(gpu_numa)]
        lines.append("\t".join(cells))
    lines += ["", "Legend:", ""]
    lines += ["  %-4s = %s" % (code, text) for code, text in LEGEND]
    if nics:
        lines += ["", "NIC Legend:", ""]
        lines += ["  NIC%d: %s" % (n, nic["ibdev"]) for n, nic in enumerate(nics)]
    return "\n".join(lines) + "\n\n"
