# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCI addresses in the two spellings the tools use, and the link between two devices."""


def split(address):
    """(domain, bus, device, function) integers of 'DDDD:BB:DD.F' or 'DDDDDDDD:BB:DD.F'."""
    domain, bus, rest = address.split(":")
    device, function = rest.split(".")
    return int(domain, 16), int(bus, 16), int(device, 16), int(function, 16)


def sysfs_id(address):
    """The kernel's form: 0000:18:00.0 (lower case, 4-digit domain)."""
    return "%04x:%02x:%02x.%x" % split(address)


def smi_id(address):
    """nvidia-smi's form: 00000000:18:00.0 (upper case, 8-digit domain)."""
    return "%08X:%02X:%02X.%X" % split(address)


def relation(first, second):
    """The nvidia-smi topo code for two PCI devices, from their NUMA nodes and
    pcie_path (root complex first, then the PCIe switches below it)."""
    path_a, path_b = first["pcie_path"], second["pcie_path"]
    shared = 0
    for left, right in zip(path_a, path_b):
        if left != right:
            break
        shared += 1
    if shared == 0:
        # numa_node -1: the firmware gave no affinity, which only happens with one node.
        nodes = {first["numa_node"], second["numa_node"]}
        return "NODE" if len(nodes) == 1 or -1 in nodes else "SYS"
    if shared == 1:
        return "PHB"
    # Both directly below the deepest shared switch: a single bridge between them.
    if len(path_a) == shared and len(path_b) == shared:
        return "PIX"
    return "PXB"
