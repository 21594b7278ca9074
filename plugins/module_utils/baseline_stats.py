# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Statistics of the GPU baseline: median, min and max of N runs, bandwidths and ratios."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

MIB = 1024 * 1024


def median(values):
    """The middle value; for an even count, the mean of the two middle ones."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median of no values")
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2.0


def summarize(values):
    """{"median", "min", "max", "runs"} of the values."""
    values = list(values)
    return {"median": median(values), "min": min(values), "max": max(values), "runs": len(values)}


def bandwidths(size_bytes, seconds):
    """GB/s (10^9 bytes a second, as NVIDIA quotes link rates) of each timed copy; a zero time is left out."""
    return [size_bytes / elapsed / 1e9 for elapsed in seconds if elapsed > 0]


def ratio(numerator, denominator):
    """numerator / denominator of two summaries' medians, or None when either is missing or zero."""
    if not numerator or not denominator or not denominator.get("median"):
        return None
    return numerator["median"] / denominator["median"]


def size_label(size_bytes):
    """1 MiB, 64 MiB, 1 GiB: the size as the report names it."""
    if size_bytes % (1024 * MIB) == 0:
        return "%d GiB" % (size_bytes // (1024 * MIB))
    if size_bytes % MIB == 0:
        return "%d MiB" % (size_bytes // MIB)
    return "%d B" % size_bytes


def figure_text(summary, unit, scale=1.0, digits=2):
    """'24.51 GB/s (min 24.10, max 24.62, 5 runs)' for a summary."""
    form = "%%.%df" % digits
    median_text, min_text, max_text = [form % (summary[key] * scale) for key in ("median", "min", "max")]
    return "%s %s (min %s, max %s, %d runs)" % (median_text, unit, min_text, max_text, summary["runs"])


def figure_median(text, unit, scale=1.0):
    """The median figure_text wrote, divided by its scale (what the figure was in base units), or None when
    text is not a figure in that unit ('not measured')."""
    words = (text or "").split(" ", 2)
    if len(words) < 2 or words[1] != unit:
        return None
    try:
        return float(words[0]) / scale
    except ValueError:
        return None
