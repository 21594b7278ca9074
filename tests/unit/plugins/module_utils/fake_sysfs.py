# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Builds small sysfs trees for tests, in the kernel's layout or the emulator's flat one.

``layout="kernel"`` mirrors a real host: PCI functions live under
``devices/pci<domain>:<bus>/...``, ``bus/pci/devices/<bdf>`` and
``class/infiniband/<dev>`` are symlinks into that tree. ``layout="flat"`` is the
GPU emulator's: real folders under ``bus/pci/devices`` and a relative
``class/infiniband/<dev>/device`` link.
"""

from __future__ import annotations

import os


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def build(root, nodes, pci, rdma=None, layout="kernel", online=None):
    """Write a tree under root.

    nodes: {id: {"cpus": "0-3", "memory_kib": 1024, "distances": [10, 21]}}
    pci: {bdf: {"numa_node": 0, "cpulist": "0-3", "net": ["eth0"], "cpumask": None}}
    rdma: {ibdev: bdf}
    """
    root = str(root)
    node_base = os.path.join(root, "devices", "system", "node")
    ids = sorted(nodes)
    _write(os.path.join(node_base, "online"), (online if online is not None else ",".join(map(str, ids))) + "\n")
    for node_id, node in nodes.items():
        node_dir = os.path.join(node_base, "node%d" % node_id)
        _write(os.path.join(node_dir, "cpulist"), node.get("cpus", "") + "\n")
        _write(os.path.join(node_dir, "meminfo"),
               "Node %d MemTotal:       %d kB\nNode %d MemFree:        1 kB\n"
               % (node_id, node.get("memory_kib", 0), node_id))
        _write(os.path.join(node_dir, "distance"), " ".join(map(str, node.get("distances", []))) + "\n")

    bus_dir = os.path.join(root, "bus", "pci", "devices")
    os.makedirs(bus_dir, exist_ok=True)
    device_dirs = {}
    for bdf, device in pci.items():
        if layout == "kernel":
            domain_bus = bdf.rsplit(":", 1)[0]
            real = os.path.join(root, "devices", "pci%s" % domain_bus, "%s:00.0" % domain_bus, bdf)
            os.makedirs(real, exist_ok=True)
            os.symlink(os.path.relpath(real, bus_dir), os.path.join(bus_dir, bdf))
        else:
            real = os.path.join(bus_dir, bdf)
            os.makedirs(real, exist_ok=True)
        device_dirs[bdf] = real
        _write(os.path.join(real, "numa_node"), "%d\n" % device.get("numa_node", -1))
        if device.get("cpulist") is not None:
            _write(os.path.join(real, "local_cpulist"), device["cpulist"] + "\n")
        if device.get("cpumask") is not None:
            _write(os.path.join(real, "local_cpus"), device["cpumask"] + "\n")
        _write(os.path.join(real, "vendor"), device.get("vendor", "0x10de") + "\n")
        for netdev in device.get("net", []):
            os.makedirs(os.path.join(real, "net", netdev), exist_ok=True)

    class_dir = os.path.join(root, "class", "infiniband")
    os.makedirs(class_dir, exist_ok=True)
    for ibdev, bdf in (rdma or {}).items():
        real = device_dirs[bdf]
        if layout == "kernel":
            ib_dir = os.path.join(real, "infiniband", ibdev)
            os.makedirs(ib_dir, exist_ok=True)
            os.symlink(os.path.relpath(real, ib_dir), os.path.join(ib_dir, "device"))
            os.symlink(os.path.relpath(ib_dir, class_dir), os.path.join(class_dir, ibdev))
        else:
            os.makedirs(os.path.join(real, "infiniband", ibdev), exist_ok=True)
            ib_dir = os.path.join(class_dir, ibdev)
            os.makedirs(ib_dir, exist_ok=True)
            os.symlink(os.path.join("..", "..", "..", "bus", "pci", "devices", bdf), os.path.join(ib_dir, "device"))
    return root
