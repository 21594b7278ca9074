# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kernel CPU and node lists: ``0-15,32-47`` and hex masks, both ways.

The same list syntax names CPUs (``local_cpulist``), NUMA nodes (``6-7``) and
memory nodes (``Mems_allowed_list``), so the helpers here serve all of them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# One group: N, N-M, or the kernel's strided N-M:S/G form (used in boot options).
_GROUP = re.compile(r"^(\d+)(?:-(\d+)(?::(\d+)/(\d+))?)?$")


def parse_cpulist(text):
    """Expand ``0-3,8,10-11`` into a sorted list of ints.

    An empty string or one holding only whitespace is the empty list (a
    CPU-less NUMA node). Raises ValueError on anything malformed, such as
    ``-31,64-95`` (a value cut at its start) or ``N/A``.
    """
    if text is None:
        raise ValueError("no CPU list")
    text = text.strip()
    if not text:
        return []
    members = set()
    for group in text.split(","):
        group = group.strip()
        match = _GROUP.match(group)
        if not match:
            raise ValueError("malformed CPU list %r" % text)
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) is not None else first
        if last < first:
            raise ValueError("descending range %r in CPU list %r" % (group, text))
        if match.group(3) is not None:
            used, size = int(match.group(3)), int(match.group(4))
            if size == 0 or used > size:
                raise ValueError("bad stride %r in CPU list %r" % (group, text))
            for start in range(first, last + 1, size):
                members.update(n for n in range(start, min(start + used, last + 1)))
        else:
            members.update(range(first, last + 1))
    return sorted(members)


def try_parse_cpulist(text):
    """Like parse_cpulist, but None for anything that is not a valid list."""
    try:
        return parse_cpulist(text)
    except (ValueError, AttributeError):
        return None


def format_cpulist(numbers):
    """Compress ints into the kernel's list form: [0, 1, 2, 5] -> ``0-2,5``."""
    ordered = sorted(set(int(n) for n in numbers))
    groups = []
    index = 0
    while index < len(ordered):
        start = ordered[index]
        while index + 1 < len(ordered) and ordered[index + 1] == ordered[index] + 1:
            index += 1
        end = ordered[index]
        groups.append(str(start) if start == end else "%d-%d" % (start, end))
        index += 1
    return ",".join(groups)


def parse_cpumask(text):
    """Expand a sysfs hex mask (``ffff,00000000``; 32-bit words, high first)."""
    if text is None:
        raise ValueError("no CPU mask")
    words = text.strip().replace("0x", "").split(",")
    if not words or any(not re.match(r"^[0-9a-fA-F]+$", word) for word in words):
        raise ValueError("malformed CPU mask %r" % text)
    value = int("".join(word.zfill(8) for word in words), 16)
    members = []
    bit = 0
    while value:
        if value & 1:
            members.append(bit)
        value >>= 1
        bit += 1
    return members
