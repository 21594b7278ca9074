# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""dmesg: the kernel ring buffer's NVIDIA driver lines, from the state's "xid" fault.

Each entry {"gpu": index, "xid": 79, "message": "...", "time": seconds since boot,
optional "pid" and "name"} becomes the driver's line, as NVIDIA/open-gpu-kernel-modules
src/nvidia/src/kernel/gpu/rc/kernel_rc.c prints it (krcReportXid):
    NVRM: Xid (PCI:%04x:%02x:%02x): %d, pid=%s, name=%s, <message>
Xid 79 comes from another path, without the process; the capture in
NVIDIA/open-gpu-kernel-modules issue 1151 reads
    NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.
so an entry without "pid" is printed that way. Before a GPU's first Xid the driver
logs its UUID once (_krcLogUuidOnce): "NVRM: GPU at PCI:0000:2b:00: GPU-...".
The time stamp is util-linux dmesg's default "[%5ld.%06ld] " (sys-utils/dmesg.c).

The fault kernel_log: "restricted" is a caller without CAP_SYSLOG under kernel.dmesg_restrict=1:
util-linux dmesg's err(EXIT_FAILURE, "read kernel buffer failed") on the EPERM of klogctl/read,
which prints "dmesg: read kernel buffer failed: Operation not permitted" and exits 1."""

from . import pci

USAGE = "gpuemu dmesg: only a plain `dmesg` (no options) is emulated\n"
RESTRICTED = "dmesg: read kernel buffer failed: Operation not permitted\n"


def _pci(gpu):
    domain, bus, device, _function = pci.split(gpu["pci_bus_id"])
    return "PCI:%04x:%02x:%02x" % (domain, bus, device)


def _stamp(seconds):
    whole = int(seconds)
    return "[%5d.%06d] " % (whole, int(round((seconds - whole) * 1000000)))


def lines(state):
    by_index = dict((gpu["index"], gpu) for gpu in state["gpus"])
    logged = set()
    out = []
    for event in sorted(state.get("faults", {}).get("xid", []), key=lambda e: e.get("time", 0)):
        gpu = by_index[event["gpu"]]
        stamp = _stamp(event.get("time", 0))
        if gpu["index"] not in logged:
            logged.add(gpu["index"])
            out.append("%sNVRM: GPU at %s: %s" % (stamp, _pci(gpu), gpu["uuid"]))
        who = ""
        if "pid" in event:
            who = "pid=%s, name=%s, " % (event["pid"], event.get("name", "<unknown>"))
        out.append("%sNVRM: Xid (%s): %d, %s%s" % (stamp, _pci(gpu), event["xid"], who, event["message"]))
    return out


def main(argv, state, stdout, stderr):
    if argv:
        stderr.write(USAGE)
        return 1
    if (state or {}).get("faults", {}).get("kernel_log") == "restricted":
        stderr.write(RESTRICTED)
        return 1
    stdout.write("".join(line + "\n" for line in lines(state or {"gpus": []})))
    return 0
