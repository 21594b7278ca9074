# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reads NUMA nodes, PCI devices and RDMA devices from a sysfs tree.

Every reader takes the tree's root (``/sys`` on a host, a folder in tests) and
returns plain data. Real sysfs is full of symlinks (``bus/pci/devices/<bdf>``
and ``class/infiniband/<dev>`` point into ``devices/pci...``); paths are
resolved, never assumed, so a fake tree with the same names reads the same.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.gpuops.hardening.plugins.module_utils.cpulist import (
    parse_cpumask,
    try_parse_cpulist,
)
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import read_text

_PCI_ADDRESS = re.compile(r"^[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
_NODE_DIR = re.compile(r"^node(\d+)$")
_CPU_DIR = re.compile(r"^cpu(\d+)$")
_MEMTOTAL = re.compile(r"MemTotal:\s+(\d+)\s*kB")


def _int(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def read_numa_nodes(sysfs_root):
    """NUMA nodes, sorted by id: CPUs, memory, distances; CPU-less nodes included."""
    base = os.path.join(sysfs_root, "devices", "system", "node")
    online = try_parse_cpulist(read_text(os.path.join(base, "online"), strip=True))
    if online is None:
        try:
            online = sorted(int(m.group(1)) for m in map(_NODE_DIR.match, os.listdir(base)) if m)
        except OSError:
            return []
    nodes = []
    for node_id in online:
        node_dir = os.path.join(base, "node%d" % node_id)
        cpulist = read_text(os.path.join(node_dir, "cpulist"), strip=True)
        cpus = try_parse_cpulist(cpulist)
        if cpus is None:
            cpus = []
        meminfo = read_text(os.path.join(node_dir, "meminfo"), strip=True) or ""
        memtotal = _MEMTOTAL.search(meminfo)
        distance = read_text(os.path.join(node_dir, "distance"), strip=True)
        nodes.append({
            "id": node_id,
            "cpus": cpus,
            "cpulist": cpulist or "",
            "has_cpu": bool(cpus),
            "memory_total_kib": int(memtotal.group(1)) if memtotal else None,
            "distances": [int(n) for n in distance.split()] if distance else [],
        })
    return nodes


def read_cpu_cores(sysfs_root):
    """[{"cpu", "core_id", "socket"}] from devices/system/cpu/cpuN/topology, online CPUs only.

    An offline CPU has no topology folder; it is left out, as Slurm leaves it out.
    """
    base = os.path.join(sysfs_root, "devices", "system", "cpu")
    online = try_parse_cpulist(read_text(os.path.join(base, "online"), strip=True))
    try:
        present = sorted(int(m.group(1)) for m in map(_CPU_DIR.match, os.listdir(base)) if m)
    except OSError:
        return []
    cpus = []
    for cpu in present:
        if online is not None and cpu not in online:
            continue
        topology = os.path.join(base, "cpu%d" % cpu, "topology")
        core_id = _int(read_text(os.path.join(topology, "core_id"), strip=True))
        socket = _int(read_text(os.path.join(topology, "physical_package_id"), strip=True))
        if core_id is None or socket is None:
            continue
        cpus.append({"cpu": cpu, "core_id": core_id, "socket": socket})
    return cpus


def read_pci_device(sysfs_root, address):
    """One PCI function's NUMA node and local CPUs; None when sysfs lacks it.

    ``numa_node`` is None where the kernel says -1 (no affinity known, as in
    many VMs); ``numa_node_raw`` keeps what the file said.
    """
    path = os.path.join(sysfs_root, "bus", "pci", "devices", address)
    if not os.path.isdir(path):
        return None
    return _device_at(os.path.realpath(path), address)


def _device_at(path, address):
    raw = _int(read_text(os.path.join(path, "numa_node"), strip=True))
    cpulist = read_text(os.path.join(path, "local_cpulist"), strip=True)
    cpus = try_parse_cpulist(cpulist)
    if cpus is None:
        try:
            cpus = parse_cpumask(read_text(os.path.join(path, "local_cpus"), strip=True))
            cpulist = None
        except ValueError:
            cpus = None
    try:
        netdevs = sorted(os.listdir(os.path.join(path, "net")))
    except OSError:
        netdevs = []
    return {
        "pci_bus_id": address,
        "numa_node": raw if raw is not None and raw >= 0 else None,
        "numa_node_raw": raw,
        "local_cpulist": cpulist,
        "cpus": cpus,
        "vendor": read_text(os.path.join(path, "vendor"), strip=True),
        "device": read_text(os.path.join(path, "device"), strip=True),
        "class": read_text(os.path.join(path, "class"), strip=True),
        "netdevs": netdevs,
    }


def _rdma_names(sysfs_root):
    """RDMA device names and their device folders.

    From class/infiniband, plus any found under the PCI functions themselves:
    a container may get a fake PCI tree mounted but no class/infiniband mount
    point to put a fake one on.
    """
    found = {}
    base = os.path.join(sysfs_root, "class", "infiniband")
    try:
        for name in os.listdir(base):
            found[name] = os.path.join(base, name, "device")
    except OSError:
        pass
    pci = os.path.join(sysfs_root, "bus", "pci", "devices")
    try:
        addresses = os.listdir(pci)
    except OSError:
        addresses = []
    for address in addresses:
        try:
            names = os.listdir(os.path.join(pci, address, "infiniband"))
        except OSError:
            continue
        for name in names:
            found.setdefault(name, os.path.join(pci, address))
    return sorted(found.items())


def read_rdma_devices(sysfs_root):
    """RDMA devices (mlx5_0, ...) with PCI address, NUMA node, CPUs and netdevs.

    A software device without a PCI parent (rxe, siw) is listed with None
    for what it lacks.
    """
    devices = []
    for name, device_link in _rdma_names(sysfs_root):
        entry = {"name": name, "pci_bus_id": None, "numa_node": None, "numa_node_raw": None,
                 "local_cpulist": None, "cpus": None, "netdevs": []}
        if os.path.isdir(device_link):
            resolved = os.path.realpath(device_link)
            address = os.path.basename(resolved)
            if _PCI_ADDRESS.match(address):
                info = _device_at(resolved, address)
                for key in entry:
                    if key in info:
                        entry[key] = info[key]
        devices.append(entry)
    return devices


def read_numa_balancing(proc_root):
    """kernel.numa_balancing as an int (0 off, 1 on, 2 tiering); None if absent."""
    return _int(read_text(os.path.join(proc_root, "sys", "kernel", "numa_balancing"), strip=True))
