# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What GPUDirect RDMA needs from the host, read from sysfs: parsing only, the audit judges it.

- PCI ACS (PCI Express Base Specification, "ACS Extended Capability"): extended capabilities start at
  config offset 0x100; each 32-bit header holds the capability ID (bits 15:0), its version (19:16) and the
  next header's offset (31:20, 0 ends the list). ACS is ID 0x000D; its Capability register is at +4 and
  its Control register at +6, where bit 2 enables P2P Request Redirect and bit 3 P2P Completion Redirect:
  set on a port between a GPU and its NIC, peer-to-peer traffic goes up to the root complex (NVIDIA's
  NCCL troubleshooting guide, "PCI Access Control Services (ACS)"; ``setpci ECAP_ACS+6.w=0`` clears it).
  sysfs's ``config`` gives the whole 4096 bytes to root only; other users read 64 (Linux,
  drivers/pci/pci-sysfs.c, pci_read_config), so a short read is unknown, never "no ACS".
- IOMMU: ``/sys/bus/pci/devices/<bdf>/iommu_group`` links to ``/sys/kernel/iommu_groups/<id>``, whose
  ``type`` (Linux 5.11, Documentation/ABI/testing/sysfs-kernel-iommu_groups) is ``identity`` for
  passthrough and ``DMA`` or ``DMA-FQ`` for a translating domain; no group: no IOMMU on the device.
- The PCI path: ``/sys/bus/pci/devices/<bdf>`` links into ``/sys/devices/pci<domain>:<bus>/<port>/.../<bdf>``;
  the addresses along the resolved path are the bridges above the device.
- nvidia-peermem: ``/sys/module/nvidia_peermem`` while it is loaded (``initstate`` ``live``). Its init
  registers the peer-memory clients ``nv_mem`` and ``nv_mem_nc`` with the RDMA core and fails unless both
  register (NVIDIA open-gpu-kernel-modules, kernel-open/nvidia-peermem/nvidia-peermem.c,
  nv_mem_client_init). The MLNX_OFED peer-memory core lists each registered client under
  ``/sys/kernel/mm/memory_peers/<name>`` (its ib_peer_mem.c); a kernel without that core has no such folder.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import struct

from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import read_text

ACS_CAPABILITY_ID = 0x000D
EXTENDED_CONFIG_START = 0x100
# A conventional (non-PCIe) function has 256 bytes of config space and no extended capabilities.
CONVENTIONAL_CONFIG_SIZE = 0x100
ACS_CONTROL_OFFSET = 6
ACS_P2P_REQUEST_REDIRECT = 1 << 2
ACS_P2P_COMPLETION_REDIRECT = 1 << 3
IOMMU_PASSTHROUGH_TYPES = ("identity",)
IOMMU_TRANSLATED_TYPES = ("DMA", "DMA-FQ")
PEERMEM_MODULE = "nvidia_peermem"
PEERMEM_CLIENT = "nv_mem"
# Kernel command line words that choose the IOMMU mode, shown next to a translated IOMMU.
_IOMMU_WORDS = re.compile(r"^(intel_iommu|amd_iommu|iommu|iommu\.passthrough|iommu\.strict)=")
_PCI_ADDRESS = re.compile(r"^[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
_PCI_ROOT = re.compile(r"^pci[0-9a-f]{4,}:[0-9a-f]{2}$")


def extended_capabilities(config):
    """[(capability id, version, offset)] from raw config space bytes, in list order.

    None when the bytes stop before the extended space (a read that was not root's); [] for a conventional
    function's 256 bytes or an empty list (a header of 0 or all ones)."""
    if len(config) < CONVENTIONAL_CONFIG_SIZE:
        return None
    found = []
    offset, seen = EXTENDED_CONFIG_START, set()
    while EXTENDED_CONFIG_START <= offset <= len(config) - 4 and offset not in seen:
        seen.add(offset)
        header = struct.unpack_from("<I", config, offset)[0]
        if header in (0, 0xFFFFFFFF):
            break
        found.append((header & 0xFFFF, (header >> 16) & 0xF, offset))
        # The low two bits of the next pointer are reserved.
        offset = (header >> 20) & 0xFFC
        if not offset:
            break
    return found


def acs_state(config):
    """A bridge's ACS from its config space bytes (None when unreadable, see extended_capabilities).

    {"readable", "present", "capability", "control", "request_redirect", "completion_redirect"}; the last four
    are None where the bytes do not say."""
    state = {"readable": False, "present": None, "capability": None, "control": None,
             "request_redirect": None, "completion_redirect": None}
    capabilities = extended_capabilities(config or b"")
    if capabilities is None:
        return state
    state["readable"] = True
    offsets = [offset for capability, _version, offset in capabilities if capability == ACS_CAPABILITY_ID]
    state["present"] = bool(offsets)
    if offsets and offsets[0] + ACS_CONTROL_OFFSET + 2 <= len(config):
        state["capability"], state["control"] = struct.unpack_from("<HH", config, offsets[0] + 4)
        state["request_redirect"] = bool(state["control"] & ACS_P2P_REQUEST_REDIRECT)
        state["completion_redirect"] = bool(state["control"] & ACS_P2P_COMPLETION_REDIRECT)
    return state


def iommu_mode(in_group, group_type):
    """off (the device is in no IOMMU group), passthrough, translated, or unknown (a type the kernel does not
    show, before Linux 5.11, or one it added since)."""
    if not in_group:
        return "off"
    if group_type in IOMMU_PASSTHROUGH_TYPES:
        return "passthrough"
    if group_type in IOMMU_TRANSLATED_TYPES:
        return "translated"
    return "unknown"


def pci_path(resolved):
    """(root, [bridge addresses, top first], device address) of a resolved sysfs PCI device path.

    root is the host bridge folder (pci0000:16), or None where the path has none."""
    root, addresses = None, []
    for part in resolved.split("/"):
        if _PCI_ROOT.match(part):
            root, addresses = part, []
        elif _PCI_ADDRESS.match(part):
            addresses.append(part)
    if not addresses:
        return root, [], None
    return root, addresses[:-1], addresses[-1]


def bridges_between(first, second):
    """The bridges on the PCI path between two devices, each pci_path() output: the deepest bridge they share
    (where the traffic turns), then each side's own bridges below it, the first's first.

    Devices under different host bridges share none: both sides' bridges, up to their root ports."""
    root_a, path_a, _device_a = first
    root_b, path_b, _device_b = second
    shared = 0
    if root_a == root_b:
        for left, right in zip(path_a, path_b):
            if left != right:
                break
            shared += 1
    turn = path_a[shared - 1:shared] if shared else []
    return turn + path_a[shared:] + path_b[shared:]


def iommu_cmdline(cmdline):
    """The words of a kernel command line that set the IOMMU mode, in their order."""
    return [word for word in (cmdline or "").split() if _IOMMU_WORDS.match(word)]


# Readers: each takes the sysfs root (/sys on a host, a folder in tests).

def _device_folder(sysfs_root, address):
    return os.path.join(sysfs_root, "bus", "pci", "devices", address)


def read_device_path(sysfs_root, address):
    """pci_path() of a PCI function, resolved through the bus/pci/devices link; None where sysfs lacks it."""
    folder = _device_folder(sysfs_root, address)
    if not os.path.isdir(folder):
        return None
    return pci_path(os.path.realpath(folder))


def read_iommu(sysfs_root, address):
    """{"group", "type", "mode"} of a PCI function (iommu_mode); group is the group's number where the link
    names one. A function sysfs does not list is unknown."""
    folder = _device_folder(sysfs_root, address)
    if not os.path.isdir(folder):
        return {"group": None, "type": None, "mode": "unknown"}
    link = os.path.join(folder, "iommu_group")
    if not os.path.isdir(link):
        return {"group": None, "type": None, "mode": "off"}
    name = os.path.basename(os.path.realpath(link))
    group_type = read_text(os.path.join(link, "type"), strip=True)
    return {"group": name if name.isdigit() else None, "type": group_type, "mode": iommu_mode(True, group_type)}


def read_config(sysfs_root, address):
    """The bytes of a PCI function's config file (as many as this user may read), or None."""
    try:
        with open(os.path.join(_device_folder(sysfs_root, address), "config"), "rb") as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def read_bridge(sysfs_root, address):
    """One bridge on a GPU's path to its NIC: its address and acs_state(); "config_bytes" says how much was read."""
    config = read_config(sysfs_root, address)
    return {"pci_bus_id": address, "config_bytes": None if config is None else len(config),
            "acs": acs_state(config)}


def read_peermem(sysfs_root):
    """{"loaded", "initstate", "registry", "clients"}: nvidia_peermem's module state, whether the peer-memory
    registry (memory_peers) exists, and the clients it lists (None without the registry)."""
    module = os.path.join(sysfs_root, "module", PEERMEM_MODULE)
    registry = os.path.join(sysfs_root, "kernel", "mm", "memory_peers")
    try:
        clients = sorted(os.listdir(registry))
    except OSError:
        clients = None
    return {"loaded": os.path.isdir(module),
            "initstate": read_text(os.path.join(module, "initstate"), strip=True),
            "registry": clients is not None,
            "clients": clients}


def _nearest_pci_nic(gpu, nics_by_name):
    for name in gpu.get("nearest_nics") or []:
        nic = nics_by_name.get(name)
        if nic and nic.get("pci_bus_id"):
            return nic
    return None


def read_gpudirect(sysfs_root, proc_root, topology):
    """The gpu_gpudirect fact: for each GPU of the topology, its IOMMU, its nearest RDMA NIC's, and every bridge
    between them with its ACS; nvidia_peermem; the IOMMU words of the kernel command line.

    A node without RDMA devices gets only "rdma_devices": [] (nothing else applies); None without GPUs."""
    gpus = (topology or {}).get("gpus") or []
    if not gpus:
        return None
    nics = [nic for nic in (topology.get("nics") or []) if nic.get("pci_bus_id")]
    fact = {"rdma_devices": [nic["name"] for nic in nics], "gpus": [], "peermem": None, "iommu_cmdline": None}
    if not nics:
        return fact
    cmdline = read_text(os.path.join(proc_root, "cmdline"), strip=True)
    fact["iommu_cmdline"] = iommu_cmdline(cmdline) if cmdline is not None else None
    fact["peermem"] = read_peermem(sysfs_root)
    nics_by_name = dict((nic["name"], nic) for nic in nics)
    for gpu in gpus:
        entry = {"index": gpu["index"], "pci_bus_id": gpu["pci_bus_id"],
                 "iommu": read_iommu(sysfs_root, gpu["pci_bus_id"]), "nic": None, "bridges": None}
        nic = _nearest_pci_nic(gpu, nics_by_name)
        if nic:
            entry["nic"] = {"name": nic["name"], "pci_bus_id": nic["pci_bus_id"],
                            "iommu": read_iommu(sysfs_root, nic["pci_bus_id"])}
            paths = [read_device_path(sysfs_root, item["pci_bus_id"]) for item in (gpu, nic)]
            if None not in paths:
                entry["bridges"] = [read_bridge(sysfs_root, address) for address in bridges_between(*paths)]
        fact["gpus"].append(entry)
    return fact
