# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPUDirect RDMA readiness, judged in the audit's hardware area from the gpu_gpudirect fact
(module_utils/gpudirect.py says where each value comes from and names the sources).

Each WARN leaves the node working, with peer-to-peer traffic slower or staged through host memory, so it
degrades the node's readiness:
- a translating IOMMU (DMA, DMA-FQ) in front of a GPU or its NIC: every peer-to-peer transfer is translated,
  or redirected (NVIDIA's NCCL troubleshooting guide); passthrough (``iommu=pt``) or no IOMMU pass. The
  collection never changes the kernel command line: the check says what it holds;
- ACS P2P Request or Completion Redirect on a bridge between a GPU and its nearest NIC sends their traffic up
  to the root complex (same guide, "PCI Access Control Services");
- nvidia_peermem not loaded, or not registered with the RDMA core: GPUDirect RDMA through it is off.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_checks import PASS, SKIP, WARN, check

AREA = "hardware"
ACS_FIX = ("turn ACS off for these ports in the BIOS, or clear it at each boot with "
           "setpci -s <bdf> ECAP_ACS+6.w=0")
IOMMU_FIX = ("put iommu=pt (Intel: intel_iommu=on iommu=pt) on the kernel command line and reboot; "
             "the collection does not change the command line")


def _finding(check_id, title, verdict, expected, actual, reason):
    return {"check": check("hardware." + check_id, AREA, title, verdict, expected, actual, reason),
            "readiness": "degraded" if verdict == WARN else "ready"}


def _device(name, address):
    return "%s (%s)" % (name, address)


def _iommu(gpu, cmdline):
    devices = [(_device("GPU %d" % gpu["index"], gpu["pci_bus_id"]), gpu["iommu"])]
    if gpu["nic"]:
        devices.append((_device(gpu["nic"]["name"], gpu["nic"]["pci_bus_id"]), gpu["nic"]["iommu"]))
    actual = ", ".join("%s: %s" % (name, iommu["type"] or iommu["mode"]) for name, iommu in devices)
    check_id, title = "gpu%d.iommu" % gpu["index"], "GPU %d IOMMU mode" % gpu["index"]
    translated = [name for name, iommu in devices if iommu["mode"] == "translated"]
    if translated:
        shown = " ".join(cmdline) if cmdline else "no IOMMU setting"
        return _finding(check_id, title, WARN, "passthrough or off", actual,
                        "%s behind a translating IOMMU, which slows or redirects peer-to-peer DMA: %s "
                        "(the command line has %s)" % (" and ".join(translated), IOMMU_FIX, shown))
    unknown = [name for name, iommu in devices if iommu["mode"] == "unknown"]
    if unknown:
        return _finding(check_id, title, SKIP, "passthrough or off", actual,
                        "the IOMMU mode of %s is unknown (sysfs shows no group type)" % " and ".join(unknown))
    return _finding(check_id, title, PASS, "passthrough or off", actual, "no IOMMU translation on the RDMA path")


def _redirects(acs):
    """The redirects a bridge has on, in lspci's words (ReqRedir+CmpltRedir)."""
    return "+".join(word for word, on in (("ReqRedir", acs["request_redirect"]),
                                          ("CmpltRedir", acs["completion_redirect"])) if on)


def _acs(gpu):
    check_id, title = "gpu%d.acs" % gpu["index"], "GPU %d PCI ACS to its NIC" % gpu["index"]
    if not gpu["nic"]:
        return _finding(check_id, title, SKIP, "no P2P redirect", "no NIC", "no RDMA NIC with a PCI address is "
                        "nearest to this GPU")
    nic = gpu["nic"]["name"]
    if gpu["bridges"] is None:
        return _finding(check_id, title, SKIP, "no P2P redirect", "unknown", "sysfs does not list GPU %d or %s"
                        % (gpu["index"], nic))
    redirecting = [bridge for bridge in gpu["bridges"] if bridge["acs"]["request_redirect"]
                   or bridge["acs"]["completion_redirect"]]
    if redirecting:
        named = ", ".join("%s (%s)" % (bridge["pci_bus_id"], _redirects(bridge["acs"])) for bridge in redirecting)
        return _finding(check_id, title, WARN, "no P2P redirect", named,
                        "ACS redirects peer-to-peer traffic between GPU %d and %s up to the root complex at %s: %s"
                        % (gpu["index"], nic, named, ACS_FIX))
    unread = [bridge for bridge in gpu["bridges"] if not bridge["acs"]["readable"]]
    if unread:
        return _finding(check_id, title, SKIP, "no P2P redirect", "unknown", "the config space of %s reads short "
                        "(only root reads past 64 bytes): run the audit as root" % ", ".join(
                            "%s (%s bytes)" % (bridge["pci_bus_id"], bridge["config_bytes"]) for bridge in unread))
    if not gpu["bridges"]:
        return _finding(check_id, title, PASS, "no P2P redirect", "no bridge", "no bridge lies between GPU %d and %s"
                        % (gpu["index"], nic))
    return _finding(check_id, title, PASS, "no P2P redirect", "%d bridge(s), none redirects" % len(gpu["bridges"]),
                    "no bridge between GPU %d and %s redirects peer-to-peer traffic" % (gpu["index"], nic))


def _peermem(peermem):
    title, expected = "nvidia_peermem", "loaded and registered"
    fix = "load it (modprobe nvidia-peermem) and list it in /etc/modules-load.d"
    if not peermem["loaded"]:
        return _finding("nvidia_peermem", title, WARN, expected, "not loaded",
                        "nvidia_peermem is not loaded, so the RDMA NICs cannot reach GPU memory through it: " + fix)
    if peermem["initstate"] not in (None, "live"):
        return _finding("nvidia_peermem", title, WARN, expected, peermem["initstate"],
                        "nvidia_peermem is %s, not live: %s" % (peermem["initstate"], fix))
    if peermem["registry"] and "nv_mem" not in peermem["clients"]:
        return _finding("nvidia_peermem", title, WARN, expected, "loaded, not registered",
                        "/sys/kernel/mm/memory_peers lists no nv_mem client (%s): reload nvidia-peermem after "
                        "the RDMA stack" % (", ".join(peermem["clients"]) or "none"))
    if peermem["registry"]:
        return _finding("nvidia_peermem", title, PASS, expected, "loaded, registered as nv_mem",
                        "loaded, and the RDMA core lists it in /sys/kernel/mm/memory_peers")
    return _finding("nvidia_peermem", title, PASS, expected, "loaded",
                    "loaded; it loads only once registered with the RDMA core (this kernel has no memory_peers "
                    "list to show it)")


def assess_gpudirect(gpudirect):
    """The GPUDirect findings ({"check", "readiness"}) of a gpu_gpudirect fact; none without it (no GPUs)."""
    if not gpudirect:
        return []
    if not gpudirect["rdma_devices"]:
        return [_finding("gpudirect", "GPUDirect RDMA", SKIP, "RDMA NICs", "none",
                         "no RDMA device on this node: GPUDirect RDMA does not apply")]
    found = []
    for gpu in gpudirect["gpus"]:
        found.append(_iommu(gpu, gpudirect["iommu_cmdline"]))
        found.append(_acs(gpu))
    found.append(_peermem(gpudirect["peermem"]))
    return found
