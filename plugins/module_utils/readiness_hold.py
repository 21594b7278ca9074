# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the readiness gate does with a node's scheduler hold (a Slurm drain, a Kubernetes cordon).

A hold is the gate's own when its mark (Slurm's Reason=, the cordon annotation) starts with MARK_PREFIX:
only those are ever changed or released. A hold without that mark, or any other mark on the node, is an
operator's, and the gate leaves the node as it is whatever the verdict.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

MARK_PREFIX = "gpuops:"

KEEP = "keep"        # nothing to do
HOLD = "hold"        # drain or cordon, with the gate's mark
UPDATE = "update"    # the gate's hold stays, its mark changes (other checks, another verdict)
RELEASE = "release"  # resume or uncordon, and the mark removed


def ours(mark):
    """Whether a mark is the gate's own."""
    return isinstance(mark, str) and mark.startswith(MARK_PREFIX)


def check_ids(reasons):
    """The check ids of the readiness reasons ('<check id>: <reason> (<verdict>)'), each once, in order."""
    found = []
    for reason in reasons or []:
        check = str(reason).split(": ", 1)[0].strip()
        if check and check not in found:
            found.append(check)
    return found


def hold_mark(verdict, reasons):
    """The gate's mark for this verdict: 'gpuops: reset: hardware.gpu0.row_remap_pending, ...'."""
    return "%s %s: %s" % (MARK_PREFIX, verdict, ", ".join(check_ids(reasons)) or "no check named")


def decide(verdict, hold_verdicts, held, mark, wanted_mark):
    """(action, why) for a node held or not, with its current mark (None without one).

    verdict None (the audit could not read the GPUs) changes nothing: the node is left as it is."""
    if mark is not None and not ours(mark):
        return KEEP, "held or marked by someone else (%s): left as it is" % mark
    if held and mark is None:
        return KEEP, "held by someone else, without a reason: left as it is"
    if verdict is None:
        return KEEP, "the readiness verdict is unknown (the GPUs' health was not read): left as it is"
    if verdict in hold_verdicts:
        if held and mark == wanted_mark:
            return KEEP, "already held by the gate for %s" % verdict
        return (UPDATE if held else HOLD), "the verdict %s holds the node" % verdict
    if ours(mark):
        return RELEASE, "the verdict %s releases the gate's hold" % verdict
    return KEEP, "the verdict %s needs no hold" % verdict
