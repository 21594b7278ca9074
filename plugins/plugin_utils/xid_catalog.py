# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What each Xid a compute node meets means, and what it takes to clear it: data, with its sources.

Source: NVIDIA's Xid catalogue for Ampere and newer GPUs, "Analyzing Xid Errors with the Xid Catalog"
(https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html): each code's "Resolution Bucket (Immediate
Action)" is BUCKET below; the meanings are ours, written from its Description and Trigger Conditions. Cross-checked
against NVIDIA/NVSentinel's mapping (distros/kubernetes/nvsentinel/charts/gpu-health-monitor/xiderrorsmapping.csv),
which agrees on every code here but 61, where it says UNEXPECTED_ERR_REPORT_ISSUE and the catalogue CONTACT_SUPPORT
(both degrade the node below).

Xid 154 names the recovery action the driver now wants for the Xids before it, in its message, e.g. "GPU recovery
action changed from 0x0 (None) to 0x2 (Node Reboot Required)"; the catalogue lists None, Drain P2P, Drain and
Reset, GPU Reset Required and Node Reboot Required (RECOVERY_ACTIONS). A message without a known one degrades.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

CATALOGUE = "NVIDIA's Xid catalogue (docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html)"

# code: (meaning, the catalogue's immediate-action bucket)
XIDS = {
    8: ("the GPU stopped processing a channel (an idle timeout)", "RESTART_APP"),
    13: ("graphics engine exception, most often the application's own fault: an out-of-bounds access, an illegal "
         "instruction", "RESTART_APP"),
    31: ("GPU memory page fault: most often an illegal address in the application", "RESTART_APP"),
    43: ("the GPU stopped an application after a fault in its software; the GPU stays healthy", "IGNORE"),
    45: ("the driver cleaned up an application's channels after Ctrl-C, a kill, a GPU reset or an earlier Xid",
         "WORKFLOW_XID_45"),
    46: ("the GPU stopped processing", "RESET_GPU"),
    48: ("double-bit (uncorrectable) ECC error", "WORKFLOW_XID_48"),
    54: ("auxiliary power is not connected to the GPU board", "CHECK_MECHANICALS"),
    61: ("internal micro-controller breakpoint, not expected on Ampere and later", "CONTACT_SUPPORT"),
    62: ("internal micro-controller halt", "RESET_GPU"),
    63: ("GPU memory remapping event: a row remap or page retirement recorded", "IGNORE"),
    64: ("GPU memory remapping failure", "RESET_GPU"),
    68: ("video decoder NVDEC0 exception", "RESTART_APP"),
    69: ("graphics engine class error", "RESTART_APP"),
    74: ("NVLink error: a link to another GPU or an NVSwitch failed", "WORKFLOW_NVLINK_ERR"),
    78: ("vGPU start error", "UPDATE_SWFW"),
    79: ("the GPU has fallen off the bus: the driver cannot reach it over PCIe", "RESTART_BM"),
    92: ("high rate of single-bit (corrected) ECC errors", "IGNORE"),
    94: ("contained memory error: one application was stopped, the others run on", "RESTART_APP"),
    95: ("uncontained memory error: every application on the GPU is affected", "RESET_GPU"),
    109: ("context switch timeout", "RESET_GPU"),
    110: ("security fault", "RESET_GPU"),
    119: ("GSP RPC timeout: the GPU's system processor did not answer the driver", "RESET_GPU"),
    120: ("GSP error: code on the GPU's system processor failed", "RESET_GPU"),
    136: ("link training failed", "RESET_GPU"),
    140: ("uncorrectable ECC error the driver could not map out", "RESET_GPU"),
    143: ("GPU initialisation error", "RESET_GPU"),
    151: ("key rotation error in confidential computing", "RESTART_VM"),
    154: ("the driver changed the recovery action it wants for earlier Xids", "XID_154"),
    155: ("NVLink software-defined error: a link taken down on purpose", "RESET_GPU"),
    156: ("resource retirement event", "RESET_GPU"),
    157: ("resource retirement failure: no spare left, work may see the same Xid again", "IGNORE"),
    158: ("GPU fatal timeout", "RESET_GPU"),
}

# The catalogue's bucket -> (readiness, what to do). The one table the Xid checks take their verdicts from.
BUCKETS = {
    "IGNORE": ("ready", "nothing: logged for information"),
    "WORKFLOW_XID_45": ("ready", "follow the Xid it came with; alone on an NVSwitch system, restart Fabric Manager"),
    "RESTART_APP": ("ready", "restart the application; the node needs nothing"),
    "RESET_GPU": ("reset", "drain the node and reset the GPU (or reboot)"),
    "WORKFLOW_XID_48": ("reset", "drain the node and reset the GPU; if the error is in SRAM and its threshold is "
                                 "exceeded, run the field diagnostic"),
    "WORKFLOW_NVLINK_ERR": ("reset", "drain the node and reset the GPU (or reboot); if it comes back, service "
                                     "the link or the GPU at its other end"),
    "RESTART_BM": ("reboot", "drain the node and reboot it"),
    "RESTART_VM": ("reboot", "drain the node and restart its VM"),
    "CHECK_MECHANICALS": ("degraded", "check the board's power cables and seating"),
    "UPDATE_SWFW": ("degraded", "update the driver and the GPU firmware"),
    "UNEXPECTED_ERR_REPORT_ISSUE": ("degraded", "report it to NVIDIA support"),
    "CONTACT_SUPPORT": ("degraded", "contact NVIDIA support"),
}
# Buckets whose finding is a WARN although the node stays ready: the application, not the GPU, has to act.
APPLICATION_BUCKETS = ("RESTART_APP", "WORKFLOW_XID_45")

# Xid 154's named actions (the catalogue's list) -> readiness.
RECOVERY_ACTIONS = {
    "None": "ready",
    "Drain P2P": "degraded",
    "Drain and Reset": "reset",
    "GPU Reset Required": "reset",
    "Node Reboot Required": "reboot",
}
_RECOVERY_TO = re.compile(r"\bto\s+(?:0x[0-9a-fA-F]+\s+)?\(([^)]*)\)")


def recovery_action(message):
    """The action an Xid 154 message changed to ("Node Reboot Required"), or None when it names none we know."""
    match = _RECOVERY_TO.search(message or "")
    action = match.group(1).strip() if match else None
    return action if action in RECOVERY_ACTIONS else None


def judge(code, message=None):
    """{"meaning", "bucket", "readiness", "action"} for one Xid code; message: its last line's text (for 154)."""
    if code == 154:
        action = recovery_action(message)
        if action is None:
            return {"meaning": XIDS[154][0], "bucket": "XID_154", "readiness": "degraded",
                    "action": "the message names no recovery action this catalogue knows: read it, and ask "
                              "nvidia-smi -q for the GPU's recovery action"}
        return {"meaning": XIDS[154][0], "bucket": "XID_154", "readiness": RECOVERY_ACTIONS[action],
                "action": "the driver asks: %s" % action}
    if code not in XIDS:
        return {"meaning": "not in the shipped catalogue", "bucket": None, "readiness": "degraded",
                "action": "look it up in %s" % CATALOGUE}
    meaning, bucket = XIDS[code]
    readiness, action = BUCKETS[bucket]
    return {"meaning": meaning, "bucket": bucket, "readiness": readiness, "action": action}
