# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hardware area's Xid checks: each GPU's Xid lines in the kernel log since boot (the gpu_health fact's "xid",
the gpu_kernel_log fact), judged by xid_catalog, and one finding for the Xids of PCI addresses nvidia-smi does not list.

One finding per GPU, the worst of its codes wins: an IGNORE code alone passes, an application's fault (RESTART_APP)
warns with the node still ready, the rest FAIL (reset, reboot) or WARN (degraded) as xid_catalog.BUCKETS says. A
kernel log that could not be read is a SKIP with the reason: the Xids are unknown, never none.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_checks import FAIL, PASS, SKIP, WARN, check
from ansible_collections.gpuops.hardening.plugins.plugin_utils.xid_catalog import APPLICATION_BUCKETS, judge

AREA = "hardware"
EXPECTED = "no Xid that needs action"
UNLISTED_CHECK = "hardware.xid.unlisted"


def _when(entry):
    first, last = entry["first_seconds"], entry["last_seconds"]
    if first is None or last is None:
        return "time unknown"
    if first == last:
        return "at %.1f s after boot" % first
    return "%.1f s to %.1f s after boot" % (first, last)


def _by(entry):
    if entry["pid"] is None and entry["name"] is None:
        return ""
    return ", last by %s" % " ".join(part for part in (
        "pid %s" % entry["pid"] if entry["pid"] is not None else "", entry["name"] or "") if part)


def _judged(entries, severity):
    """Each code's entry with its judgement, worst first (severity: a readiness verdict's rank)."""
    judged = [dict(entry, judgement=judge(entry["xid"], entry["message"])) for entry in entries]
    return sorted(judged, key=lambda item: (-severity(item["judgement"]["readiness"]), item["xid"]))


def _verdict(judged, severity):
    """(verdict, readiness) of a GPU's judged codes, worst first: as the other hardware checks, what a reset or
    worse clears FAILs and a degraded node WARNs."""
    worst = judged[0]["judgement"]["readiness"]
    if severity(worst) >= severity("reset"):
        return FAIL, worst
    if severity(worst) > severity("ready"):
        return WARN, worst
    if any(item["judgement"]["bucket"] in APPLICATION_BUCKETS for item in judged):
        return WARN, "ready"
    return PASS, "ready"


def _finding(check_id, title, entries, severity):
    """entries: each code's summary (kernel_xid.summarise), with "where" in front of its text when set."""
    judged = _judged(entries, severity)
    verdict, readiness = _verdict(judged, severity)
    actual = "; ".join("%sXid %d x%d, %s%s" % (
        item.get("where", ""), item["xid"], item["count"], _when(item), _by(item)) for item in judged)
    reason = " | ".join("%sXid %d: %s; action: %s" % (
        item.get("where", ""), item["xid"], item["judgement"]["meaning"], item["judgement"]["action"])
        for item in judged)
    return {"check": check(check_id, AREA, title, verdict, EXPECTED, actual, reason), "readiness": readiness}


def _gpu(gpu, entries, problem, severity):
    check_id = "hardware.gpu%s.xid" % gpu["index"]
    title = "GPU %s Xid errors" % gpu["index"]
    if entries is None:
        return {"check": check(check_id, AREA, title, SKIP, EXPECTED, "unknown", "the kernel log was not read (%s): "
                               "the Xids are unknown" % problem), "readiness": "ready"}
    if not entries:
        return {"check": check(check_id, AREA, title, PASS, EXPECTED, "none", "no Xid in the kernel log since boot"),
                "readiness": "ready"}
    return _finding(check_id, title, entries, severity)


def _unlisted(address):
    """An unlisted address's code summaries, each naming the address (and the UUID the driver logged for it)."""
    where = "%s%s: " % (address["pci_bus_id"], " (%s)" % address["uuid"] if address.get("uuid") else "")
    return [dict(entry, where=where) for entry in address["xid"]]


def xid_findings(health, kernel_log, severity):
    """The Xid findings of the node's GPUs ({"check", "readiness"} each, as audit_hardware_checks.assess gives).

    kernel_log: the gpu_kernel_log fact ({"read", "problem", "unlisted"}); severity: a readiness verdict's rank."""
    read = bool(kernel_log.get("read"))
    problem = kernel_log.get("problem") or "the facts hold no kernel log"
    found = [_gpu(gpu, gpu.get("xid") if read else None, problem, severity) for gpu in health]
    entries = [entry for address in (kernel_log.get("unlisted") or []) if read for entry in _unlisted(address)]
    if entries:
        finding = _finding(UNLISTED_CHECK, "Xid errors of GPUs nvidia-smi does not list", entries, severity)
        finding["check"]["reason"] = ("on PCI addresses nvidia-smi does not list (a GPU fallen off the bus "
                                      "leaves its list): " + finding["check"]["reason"])
        found.append(finding)
    return found
