# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A fake sysfs tree for a profile, laid out like the kernel's so that its sub-trees
can be bind-mounted over a container's /sys:

    OUT/bus/pci/devices/<DDDD:BB:DD.F>    GPUs, NICs and the bridges above them (vendor, device, class,
                                          numa_node, ...), each a link into the PCI hierarchy kept beside
                                          them (sysfs_gpudirect.py)
    OUT/devices/system/node/              NUMA nodes (online, has_cpu, nodeN/cpulist, meminfo, ...)
    OUT/class/infiniband/<ibdev>/         device -> ../../../bus/pci/devices/<bdf> (relative)
    OUT/module/nvidia_peermem/            on profiles with RDMA NICs (sysfs_gpudirect.py)
"""

import hashlib
import os
import shutil

from . import catalog, cpulist, pci, state as state_file, sysfs_gpudirect

NVIDIA_VENDOR = "0x10de"
MELLANOX_VENDOR = "0x15b3"
LINK_SPEEDS = {3: "8.0 GT/s PCIe", 4: "16.0 GT/s PCIe", 5: "32.0 GT/s PCIe"}


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text if text.endswith("\n") else text + "\n")


def _write_all(directory, files):
    for name, text in files.items():
        _write(os.path.join(directory, name), str(text))


def _node_cpus(state, node_id):
    if node_id < 0:
        return cpulist.parse(state["cpus_possible"])
    for node in state["numa_nodes"]:
        if node["id"] == node_id:
            return cpulist.parse(node["cpus"])
    return []


def _pci_files(state, item, vendor, device_id, pci_class, subsystem, link_gen, link_width):
    cpus = _node_cpus(state, item["numa_node"])
    nr_cpus = cpulist.parse(state["cpus_possible"])[-1] + 1
    return {
        "vendor": vendor,
        "device": device_id,
        "class": pci_class,
        "subsystem_vendor": vendor,
        "subsystem_device": subsystem,
        "numa_node": item["numa_node"],
        "local_cpulist": cpulist.format_list(cpus),
        "local_cpus": cpulist.format_mask(cpus, nr_cpus),
        "current_link_speed": LINK_SPEEDS[link_gen],
        "max_link_speed": LINK_SPEEDS[link_gen],
        "current_link_width": link_width,
        "max_link_width": link_width,
        "enable": 1,
    }


def _hardware_address(nic, infiniband):
    digest = hashlib.sha256(nic["pci_bus_id"].encode()).hexdigest()
    if infiniband:
        octets = ["00", "00", "10", "29", "fe", "80"] + ["00"] * 6 + [digest[i:i + 2] for i in range(0, 16, 2)]
    else:
        octets = ["b8", "3f", "d2"] + [digest[i:i + 2] for i in range(0, 6, 2)]
    return ":".join(octets)


def _port_files(nic):
    return {
        "state": "4: ACTIVE",
        "phys_state": "5: LinkUp",
        "rate": nic["rate"],
        "link_layer": nic["link_layer"],
    }


def _nic(state, out, plan, nic):
    bdf = pci.sysfs_id(nic["pci_bus_id"])
    device_dir = sysfs_gpudirect.device_folder(out, plan, bdf)
    _write_all(device_dir, _pci_files(state, nic, MELLANOX_VENDOR, nic["pci_device_id"], nic["pci_class"], "0x0041", 5, 16))
    infiniband = nic["link_layer"] == "InfiniBand"
    _write_all(os.path.join(device_dir, "net", nic["netdev"]), {
        "address": _hardware_address(nic, infiniband),
        "mtu": 4092 if infiniband else 9000,
        "operstate": "up",
        "type": 32 if infiniband else 1,
    })
    ib_files = {"node_type": "1: CA", "fw_ver": "28.43.1014"}
    _write_all(os.path.join(device_dir, "infiniband", nic["ibdev"]), ib_files)
    _write_all(os.path.join(device_dir, "infiniband", nic["ibdev"], "ports", "1"), _port_files(nic))
    class_dir = os.path.join(out, "class", "infiniband", nic["ibdev"])
    _write_all(class_dir, ib_files)
    _write_all(os.path.join(class_dir, "ports", "1"), _port_files(nic))
    # Relative, so it resolves both under OUT and once mounted at /sys/class/infiniband.
    os.symlink(os.path.join("..", "..", "..", "bus", "pci", "devices", bdf), os.path.join(class_dir, "device"))


def _has_reset(state, gpu):
    """The kernel creates `reset` for a device with a reset method (Documentation/ABI/
    testing/sysfs-bus-pci). A GPU passed through to a VM (mig_mode_apply "reboot")
    has none the guest can use, and a profile may say "pci_reset": false for a GPU."""
    return gpu.get("pci_reset", True) and state["settings"].get("mig_mode_apply") != "reboot"


def _gpu(state, out, plan, gpu):
    model = catalog.model(gpu["model"])
    device_dir = sysfs_gpudirect.device_folder(out, plan, pci.sysfs_id(gpu["pci_bus_id"]))
    _write_all(device_dir, _pci_files(state, gpu, NVIDIA_VENDOR, model["pci_device_id"], model["pci_class"],
                                      model["pci_subsystem_id"], model["pcie_gen"], model["pcie_width"]))
    if _has_reset(state, gpu):
        # Write-only and empty, as the kernel's reset attribute (mode 0200).
        reset = os.path.join(device_dir, "reset")
        with open(reset, "w", encoding="utf-8"):
            pass
        os.chmod(reset, 0o200)


def _meminfo(node_id, total_kb):
    lines = []
    free_kb = total_kb * 97 // 100
    for label, value in (("MemTotal:", total_kb), ("MemFree:", free_kb), ("MemUsed:", total_kb - free_kb),
                         ("Active:", (total_kb - free_kb) // 2), ("Inactive:", (total_kb - free_kb) // 4),
                         ("FilePages:", (total_kb - free_kb) // 2), ("AnonPages:", (total_kb - free_kb) // 4),
                         ("Shmem:", 0), ("KernelStack:", 0), ("PageTables:", 0)):
        lines.append("Node %d %-16s%8d kB" % (node_id, label, value))
    for label in ("HugePages_Total:", "HugePages_Free:", "HugePages_Surp:"):
        lines.append("Node %d %-16s %5d" % (node_id, label, 0))
    return "\n".join(lines)


def _nodes(state, out):
    node_dir = os.path.join(out, "devices", "system", "node")
    nodes = state["numa_nodes"]
    nr_cpus = cpulist.parse(state["cpus_possible"])[-1] + 1
    ids = [n["id"] for n in nodes]
    with_memory = [n["id"] for n in nodes if n["memory_mib"] > 0]
    _write_all(node_dir, {
        "online": cpulist.format_list(ids),
        "possible": cpulist.format_list(ids),
        "has_cpu": cpulist.format_list([n["id"] for n in nodes if n["cpus"]]),
        "has_memory": cpulist.format_list(with_memory),
        # Memory onlined as movable only (like a GH200's GPU HBM) is not "normal".
        "has_normal_memory": cpulist.format_list([n["id"] for n in nodes if n["memory_mib"] > 0 and not n.get("movable")]),
    })
    for position, node in enumerate(nodes):
        cpus = cpulist.parse(node["cpus"])
        directory = os.path.join(node_dir, "node%d" % node["id"])
        _write_all(directory, {
            "cpulist": cpulist.format_list(cpus),
            "cpumap": cpulist.format_mask(cpus, nr_cpus),
            "meminfo": _meminfo(node["id"], node["memory_mib"] * 1024),
            "distance": " ".join(str(d) for d in state["numa_distances"][position]),
        })
        for size in ("2048kB", "1048576kB"):
            _write_all(os.path.join(directory, "hugepages", "hugepages-" + size),
                       {"nr_hugepages": 0, "free_hugepages": 0, "surplus_hugepages": 0})


def generate(profile, out):
    """Write the tree for a profile (name or JSON path) into out, replacing what was there."""
    state = state_file.new(profile)
    for sub in (("bus",), ("devices",), ("class",), ("module",)):
        shutil.rmtree(os.path.join(out, *sub), ignore_errors=True)
    os.makedirs(os.path.join(out, "bus", "pci", "devices"), exist_ok=True)
    os.makedirs(os.path.join(out, "class", "infiniband"), exist_ok=True)
    os.makedirs(os.path.join(out, "module"), exist_ok=True)
    plan = sysfs_gpudirect.layout(state)
    for gpu in state["gpus"]:
        _gpu(state, out, plan, gpu)
    for nic in state["nics"]:
        _nic(state, out, plan, nic)
    sysfs_gpudirect.write(state, out)
    _nodes(state, out)
    return out


def set_faults(profile, out, faults):
    """Rewrite a generated tree's GPUDirect files for these faults (sysfs_gpudirect.py lists them; {} clears
    them), in place, so that a node with the tree mounted sees the change."""
    return sysfs_gpudirect.write(state_file.new(profile), out, faults)
