# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cuda_driver_floor and mig_driver_floor filters: registered names, values, errors."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.hardening.plugins.filter import cuda_driver_floor, mig_driver_floor

# One file per filter, so that each carries its own documentation.
FILTERS = {**cuda_driver_floor.FilterModule().filters(), **mig_driver_floor.FilterModule().filters()}


def test_each_file_registers_the_filter_it_is_named_after():
    assert list(cuda_driver_floor.FilterModule().filters()) == ["cuda_driver_floor"]
    assert list(mig_driver_floor.FilterModule().filters()) == ["mig_driver_floor"]


@pytest.mark.parametrize("version, floor", [("12.4", "525.60.13"), ("11.8", "450.80.02"), ("13.0", "580")])
def test_cuda_driver_floor(version, floor):
    assert FILTERS["cuda_driver_floor"](version) == floor


@pytest.mark.parametrize("name, floor", [("NVIDIA H100 80GB HBM3", "525.85.12"), ("NVIDIA GH200 480GB", "525.85.12"),
                                         ("NVIDIA H200 NVL", "550.90.07"), ("NVIDIA A30", "460.73.01")])
def test_mig_driver_floor_returns_the_floor_alone(name, floor):
    assert FILTERS["mig_driver_floor"](name) == floor


@pytest.mark.parametrize("name, value, words", [
    ("cuda_driver_floor", "14.2", "known majors: 11, 12, 13"),
    ("cuda_driver_floor", "12.4.1", "invalid CUDA version"),
    ("mig_driver_floor", "NVIDIA L40S", "not in the MIG driver table"),
])
def test_errors_are_filter_errors_with_the_message(name, value, words):
    with pytest.raises(AnsibleFilterError, match=words):
        FILTERS[name](value)
