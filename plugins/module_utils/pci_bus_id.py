# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCI bus ids in the one spelling sysfs uses, whoever printed them.

nvidia-smi prints ``00000000:3B:00.0`` (8-digit domain, capitals), sysfs names
devices ``0000:3b:00.0``, and ``topo`` and other tools print ``3B:00.0``
(no domain). Every comparison of bus ids goes through sysfs_bus_id().

Standard library only: the gpu-numa-exec launcher loads this file as it is.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_BUS_ID = re.compile(r"^(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])$")


def sysfs_bus_id(bus_id):
    """Any spelling of a PCI address to sysfs's ``0000:3b:00.0``; None if malformed.

    A missing domain is domain 0. sysfs uses at least 4 domain digits, lower
    case; domains above ffff (VMD, some hypervisors) keep all their digits.
    """
    match = _BUS_ID.match((bus_id or "").strip())
    if not match:
        return None
    domain = int(match.group(1) or "0", 16)
    return "%04x:%02x:%02x.%x" % (
        domain, int(match.group(2), 16), int(match.group(3), 16), int(match.group(4), 16))
