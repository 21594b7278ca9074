# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One spelling for PCI bus ids."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils.pci_bus_id import sysfs_bus_id


@pytest.mark.parametrize("given, expected", [
    ("00000000:3B:00.0", "0000:3b:00.0"),  # nvidia-smi
    ("0000:3b:00.0", "0000:3b:00.0"),  # sysfs
    ("3B:00.0", "0000:3b:00.0"),  # topo and lspci without a domain
    (" 00000001:BA:00.1\n", "0001:ba:00.1"),
    ("10000:01:00.0", "10000:01:00.0"),  # VMD domain above ffff
    ("0:3:0.0", "0000:03:00.0"),
    ("3B:00.8", None),
    ("GPU-0", None),
    ("", None),
    (None, None),
])
def test_sysfs_bus_id(given, expected):
    assert sysfs_bus_id(given) == expected
