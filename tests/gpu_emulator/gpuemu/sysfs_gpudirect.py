# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fake sysfs's PCI hierarchy and what GPUDirect RDMA reads from it, with its faults.

The hierarchy. On a real host ``/sys/bus/pci/devices/<bdf>`` links to
``../../../devices/pci<domain>:<bus>/<bridge>/.../<bdf>``: the addresses along the resolved path are the
bridges above the device. The lab bind-mounts only ``bus/pci/devices``, so the fake keeps the same
chain one level in: ``bus/pci/devices/pci<domain>:<bus>/<bridge>/.../<bdf>``, linked from
``bus/pci/devices/<bdf>`` for every function, bridges included. A profile's ``pcie_path`` names it: the
first element is the host bridge (nvidia-smi's PHB), every later one a bridge (a switch or root port);
devices with the same path hang below the same bridge (pci.relation reads the same paths).

Per bridge, ``config``: 4096 bytes, as root reads them (drivers/pci/pci-sysfs.c, pci_read_config): a type 1
header, a PCI Express capability at 0x40, then the extended capabilities from 0x100 (PCI Express Base
Specification): Advanced Error Reporting (ID 0x0001) at 0x100, pointing on to ACS (ID 0x000D) at 0x148. The
ACS Control register (+6) has P2P Request and Completion Redirect off (bits 2 and 3), as NVIDIA's NCCL
troubleshooting guide asks for GPUDirect. The IDs are a Broadcom PEX890xx Gen 5 switch's (1000:c030, "PEX890xx PCIe Gen 5
Switch", in the PCI ID Repository's pci.ids as Debian 12's pci.ids 0.0~2023.04.11-1 ships it).

Per endpoint, where the profile's ``iommu`` is ``passthrough``: an ``iommu_group`` folder whose ``type`` is
``identity`` (Documentation/ABI/testing/sysfs-kernel-iommu_groups). The kernel makes it a link to
``/sys/kernel/iommu_groups/<id>``; a folder reads the same through the mount. ``off`` (the default): none.

``module/nvidia_peermem`` on profiles with RDMA NICs, as Linux shows a loaded module
(Documentation/ABI/testing/sysfs-module): ``initstate`` ``live``, ``refcnt``, and the module's one parameter,
``parameters/peerdirect_support`` (NVIDIA open-gpu-kernel-modules, nvidia-peermem.c). Mounted at /sys/module.

Faults (``python3 -m gpuemu sysfs-faults``), written in place into a tree that may be mounted:

    iommu_type   {"<gpu index>": "DMA-FQ"}   the GPU's IOMMU group type (a group is made where there was none)
    acs_redirect ["<gpu index>", ...]       ACS Control 0x001d on the bridge just above the GPU: Source
                                             Validation, P2P Request and Completion Redirect, Upstream
                                             Forwarding, the bits Linux's pci_std_enable_acs sets
    peermem      "missing"                   no module/nvidia_peermem
"""

import os
import shutil
import struct

from . import pci

CONFIG_SIZE = 4096
BRIDGE_CLASS = 0x060400
BRIDGE_VENDOR, BRIDGE_DEVICE = 0x1000, 0xC030
AER_OFFSET, ACS_OFFSET = 0x100, 0x148
ACS_CAPABILITIES = 0x005F  # SV, TB, RR, CR, UF and Direct Translated P2P
ACS_HEALTHY, ACS_REDIRECT = 0x0000, 0x001D
PEERMEM = "nvidia_peermem"


def _device_items(state):
    return [("gpu", gpu) for gpu in state["gpus"]] + [("nic", nic) for nic in state["nics"]]


def layout(state):
    """{"folders": {bdf: folder below bus/pci/devices}, "bridges": [bdf, ...], "above": {device bdf: its bridge}}."""
    used = {}
    for _kind, item in _device_items(state):
        domain, bus, _device, _function = pci.split(item["pci_bus_id"])
        used.setdefault(domain, set()).add(bus)
    named, folders, bridges, above = {}, {}, [], {}

    def free_bus(domain):
        bus = min(set(range(256)) - used[domain])
        used[domain].add(bus)
        return bus

    for _kind, item in _device_items(state):
        domain = pci.split(item["pci_bus_id"])[0]
        folder = None
        for depth in range(len(item["pcie_path"])):
            key = (domain, tuple(item["pcie_path"][:depth + 1]))
            if key not in named:
                bus = free_bus(domain)
                if depth == 0:
                    named[key] = "pci%04x:%02x" % (domain, bus)
                else:
                    named[key] = "%04x:%02x:00.0" % (domain, bus)
                    bridges.append(named[key])
                    folders[named[key]] = os.path.join(folder, named[key])
            folder = folders.get(named[key], named[key])
        bdf = pci.sysfs_id(item["pci_bus_id"])
        folders[bdf] = os.path.join(folder, bdf)
        if len(item["pcie_path"]) > 1:
            above[bdf] = named[(domain, tuple(item["pcie_path"]))]
    return {"folders": folders, "bridges": bridges, "above": above}


def device_folder(out, plan, bdf):
    """The device's folder in the hierarchy, made with its bus/pci/devices link; the link's path."""
    devices = os.path.join(out, "bus", "pci", "devices")
    os.makedirs(os.path.join(devices, plan["folders"][bdf]), exist_ok=True)
    link = os.path.join(devices, bdf)
    if not os.path.islink(link):
        os.symlink(plan["folders"][bdf], link)
    return link


def bridge_config(acs_control):
    """A PCIe switch port's config space as root reads it, with this ACS Control value."""
    config = bytearray(CONFIG_SIZE)
    struct.pack_into("<HHHH", config, 0, BRIDGE_VENDOR, BRIDGE_DEVICE, 0x0407, 0x0010)
    struct.pack_into("<I", config, 8, BRIDGE_CLASS << 8)
    config[0x0E] = 0x01  # type 1 header: a bridge
    config[0x34] = 0x40  # the capability list starts at the PCI Express capability
    # PCI Express capability: version 2, a switch downstream port (type 6).
    struct.pack_into("<BBH", config, 0x40, 0x10, 0x00, 0x0062)
    struct.pack_into("<I", config, AER_OFFSET, 0x0001 | (2 << 16) | (ACS_OFFSET << 20))
    struct.pack_into("<IHH", config, ACS_OFFSET, 0x000D | (1 << 16), ACS_CAPABILITIES, acs_control)
    return bytes(config)


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # In place (no rename): the tree may be bind-mounted into a running node.
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text + "\n")


def _write_bytes(path, data):
    with open(path, "wb") as handle:
        handle.write(data)


def _iommu(device_dir, group_type):
    group = os.path.join(device_dir, "iommu_group")
    if group_type is None:
        shutil.rmtree(group, ignore_errors=True)
    else:
        _write(os.path.join(group, "type"), group_type)


def write(state, out, faults=None):
    """The GPUDirect files for a state's profile, healthy but for faults (see the docstring); in place."""
    faults = faults or {}
    plan = layout(state)
    devices = os.path.join(out, "bus", "pci", "devices")
    redirected = set(plan["above"].get(pci.sysfs_id(state["gpus"][int(index)]["pci_bus_id"]))
                     for index in faults.get("acs_redirect", []))
    for bridge in plan["bridges"]:
        folder = device_folder(out, plan, bridge)
        _write(os.path.join(folder, "vendor"), "0x%04x" % BRIDGE_VENDOR)
        _write(os.path.join(folder, "device"), "0x%04x" % BRIDGE_DEVICE)
        _write(os.path.join(folder, "class"), "0x%06x" % BRIDGE_CLASS)
        _write_bytes(os.path.join(folder, "config"),
                     bridge_config(ACS_REDIRECT if bridge in redirected else ACS_HEALTHY))
    healthy = "identity" if state.get("iommu") == "passthrough" else None
    translated = dict((int(index), value) for index, value in faults.get("iommu_type", {}).items())
    for kind, item in _device_items(state):
        folder = os.path.join(devices, pci.sysfs_id(item["pci_bus_id"]))
        _iommu(folder, translated.get(item["index"], healthy) if kind == "gpu" else healthy)
    module = os.path.join(out, "module", PEERMEM)
    if state["nics"] and faults.get("peermem") != "missing":
        _write(os.path.join(module, "initstate"), "live")
        _write(os.path.join(module, "refcnt"), "0")
        _write(os.path.join(module, "parameters", "peerdirect_support"), "0")
    else:
        shutil.rmtree(module, ignore_errors=True)
    return out
