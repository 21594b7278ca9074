# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NVIDIA driver's Xid lines in the kernel log (``dmesg``), as events per GPU.

Pure parsing, no judgement (that is plugin_utils/xid_catalog.py and the audit's hardware checks). The driver
prints each Xid as NVIDIA/open-gpu-kernel-modules src/nvidia/src/kernel/gpu/rc/kernel_rc.c (krcReportXid) writes it:

    NVRM: Xid (PCI:%04x:%02x:%02x): %d, pid=%s, name=%s, <message>     (the process, when one is known)
    NVRM: Xid (PCI:%04x:%02x:%02x): %d, <message>                      (none known, e.g. Xid 79)
    NVRM: Xid (PCI:%04x:%02x:%02x GPU-I:%02u GPU-CI:%02u): ...         (attributed to a MIG instance)

``pid`` may print as ``'<unknown>'`` and ``name`` as ``<unknown>``. Drivers before the ``PCI:`` prefix print
``NVRM: Xid (0000:01:00): 31, ...``. Before a GPU's first Xid the driver logs ``NVRM: GPU at PCI:0000:2b:00: GPU-...``
once (_krcLogUuidOnce), which names a GPU that nvidia-smi may no longer list. util-linux ``dmesg`` puts
``[%5ld.%06ld] `` (seconds since boot) in front of each line by default (sys-utils/dmesg.c); other formats
(``--ctime``, journald's) leave the time unknown.

The lines since boot are those still in the kernel's ring buffer: they stay after a GPU reset until a reboot (or
``dmesg --clear``), and a busy log may already have pushed old ones out (journald keeps its own copy).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from .pci_bus_id import sysfs_bus_id

_STAMP = re.compile(r"^\s*\[\s*(\d+\.\d+)\]")
_XID = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<bus>[0-9a-fA-F]{1,8}:[0-9a-fA-F]{1,2}:[0-9a-fA-F]{1,2})"
    r"(?: GPU-I:(?P<gpu_instance>\d+))?(?: GPU-CI:(?P<compute_instance>\d+))?\): (?P<xid>\d+),\s?"
    r"(?:pid=(?P<pid>[^,]*), name=(?P<name>.*?), )?(?P<message>.*?)\s*$")
_UUID = re.compile(r"NVRM: GPU at (?:PCI:)?([0-9a-fA-F]{1,8}:[0-9a-fA-F]{1,2}:[0-9a-fA-F]{1,2}): (GPU-[0-9a-fA-F-]+)")
_UNKNOWN = ("<unknown>", "'<unknown>'", "")


def xid_bus_id(bus):
    """The driver's ``0000:2b:00`` (domain, bus, device) as sysfs names the GPU's function 0: ``0000:2b:00.0``."""
    return sysfs_bus_id("%s.0" % bus)


def _known(value):
    value = (value or "").strip()
    return None if value in _UNKNOWN else value


def _pid(value):
    value = _known(value)
    return int(value) if value and value.isdigit() else None


def _instance(value):
    return int(value) if value is not None else None


def parse_xid_line(line):
    """One event from a kernel log line, or None when the line holds no Xid.

    {"pci_bus_id": sysfs spelling, "xid": code, "seconds": since boot or None, "pid": int or None,
    "name": process name or None, "gpu_instance", "compute_instance": MIG ids or None, "message": the rest}.
    """
    match = _XID.search(line or "")
    if not match:
        return None
    stamp = _STAMP.match(line)
    return {
        "pci_bus_id": xid_bus_id(match.group("bus")),
        "xid": int(match.group("xid")),
        "seconds": float(stamp.group(1)) if stamp else None,
        "pid": _pid(match.group("pid")),
        "name": _known(match.group("name")),
        "gpu_instance": _instance(match.group("gpu_instance")),
        "compute_instance": _instance(match.group("compute_instance")),
        "message": match.group("message"),
    }


def parse_xid_events(text):
    """Every Xid event of a ``dmesg`` output, in the log's order."""
    events = (parse_xid_line(line) for line in (text or "").splitlines())
    return [event for event in events if event is not None]


def gpu_uuids(text):
    """{sysfs bus id: GPU UUID} from the driver's ``NVRM: GPU at PCI:...: GPU-...`` lines."""
    found = {}
    for line in (text or "").splitlines():
        match = _UUID.search(line)
        if match:
            found[xid_bus_id(match.group(1))] = match.group(2)
    return found


def summarise(events):
    """One entry per Xid code, by code: {"xid", "count", "first_seconds", "last_seconds", and the last event's
    "message", "pid" and "name"}. Bounded by the codes seen, however long the log is."""
    by_code = {}
    for event in events:
        entry = by_code.get(event["xid"])
        if entry is None:
            entry = by_code[event["xid"]] = {"xid": event["xid"], "count": 0, "first_seconds": event["seconds"]}
        entry["count"] += 1
        entry.update(last_seconds=event["seconds"], message=event["message"], pid=event["pid"], name=event["name"])
    return [by_code[code] for code in sorted(by_code)]


def with_xids(health, text):
    """health with each GPU's "xid" set to summarise() of its events; returns the events on bus ids that match none
    of these GPUs, per bus id: [{"pci_bus_id", "uuid" (from the driver's log, or None), "xid": summaries}].

    text None (the log could not be read): every GPU's "xid" is None, never an empty list, and nothing is returned.
    """
    if text is None:
        for gpu in health:
            gpu["xid"] = None
        return []
    events = parse_xid_events(text)
    listed = dict((sysfs_bus_id(gpu["pci_bus_id"]), gpu) for gpu in health)
    for gpu in health:
        gpu["xid"] = summarise([event for event in events if event["pci_bus_id"] == sysfs_bus_id(gpu["pci_bus_id"])])
    uuids = gpu_uuids(text)
    others = sorted(set(event["pci_bus_id"] for event in events) - set(listed))
    return [{"pci_bus_id": bus, "uuid": uuids.get(bus),
             "xid": summarise([event for event in events if event["pci_bus_id"] == bus])} for bus in others]
