# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One node as `scontrol show node -o NAME` prints it: its state flags and its reason.

The one-line layout is Slurm's own (src/api/node_info.c, slurm_sprint_node_table): fields as Key=value
separated by single spaces, State= as the base state with its flags joined by '+' (IDLE+DRAIN,
MIXED+DRAIN, DOWN+DRAIN+NOT_RESPONDING), and Reason= near the end, its text followed by
' [user@time]' when slurmctld recorded who set it. A reason holds spaces, so it is read from its
key to that stamp (or to one of the few optional fields Slurm prints after it), never split on spaces.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# The fields Slurm 22.05 to 24.x print after Reason= (Comment, Extra, cloud instance, reservation).
_AFTER_REASON = ("Comment", "Extra", "InstanceId", "InstanceType", "ReservationName")
_REASON = re.compile(r"(?:^|\s)Reason=(?P<text>.*?)(?: \[(?P<stamp>[^\[\]@\s]+@[^\[\]\s]+)\])?"
                     r"(?=\s(?:%s)=|\s*$)" % "|".join(_AFTER_REASON))
_STATE = re.compile(r"(?:^|\s)State=(\S+)")
_NAME = re.compile(r"(?:^|\s)NodeName=(\S+)")

# The state flags under which Slurm starts no new job on the node because someone asked (scontrol State=DRAIN).
DRAIN_FLAGS = ("DRAIN", "DRAINED", "DRAINING")


def parse_show_node(text):
    """{name, state, flags, reason, reason_stamp} of the first node line of text; None when it holds none.

    state is the base state (IDLE, MIXED, ALLOCATED, DOWN, ...); flags every '+' part after it, in order;
    reason the text as set, without the stamp; None when the node has no reason."""
    for line in (text or "").splitlines():
        name = _NAME.search(line)
        if not name:
            continue
        state = _STATE.search(line)
        parts = state.group(1).split("+") if state else ["UNKNOWN"]
        reason = _REASON.search(line)
        text_found = reason.group("text").strip() if reason else ""
        return {"name": name.group(1), "state": parts[0], "flags": parts[1:],
                "reason": text_found or None, "reason_stamp": reason.group("stamp") if reason else None}
    return None


def drained(node):
    """Whether the node is drained or draining (a DRAIN flag, or a base state of DRAINED or DRAINING)."""
    return any(part in DRAIN_FLAGS for part in [node["state"]] + list(node["flags"]))


def describe(node):
    """The node's state as one line, for diffs and messages: State=IDLE+DRAIN Reason=..."""
    state = "+".join([node["state"]] + list(node["flags"]))
    return "State=%s Reason=%s" % (state, node["reason"] if node["reason"] is not None else "(none)")
