# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""CPU and node lists."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import cpulist


@pytest.mark.parametrize("text, expected", [
    ("0-3,8,10-11", [0, 1, 2, 3, 8, 10, 11]),
    ("6-7", [6, 7]),
    ("0", [0]),
    ("  0-1\n", [0, 1]),
    ("", []),
    ("\n", []),
    ("3,1,2", [1, 2, 3]),
    ("0-1,1-2", [0, 1, 2]),
    ("0-7:2/4", [0, 1, 4, 5]),
])
def test_parse(text, expected):
    assert cpulist.parse_cpulist(text) == expected


@pytest.mark.parametrize("text, expected", [
    # The kernel's own example (Documentation/admin-guide/kernel-parameters.rst).
    ("0-1023:2/256", [0, 1, 256, 257, 512, 513, 768, 769]),
    ("0-31:1/2", list(range(0, 32, 2))),  # every other CPU: one SMT sibling per core
    ("0-9:2/4", [0, 1, 4, 5, 8, 9]),  # the last group is cut at the range's end
    ("0-3:1/2,8,16-19:2/2", [0, 2, 8, 16, 17, 18, 19]),
    ("0-7:0/4", []),
])
def test_parse_strided_groups(text, expected):
    assert cpulist.parse_cpulist(text) == expected


# The kernel (bitmap_parselist) wants both numbers of a stride: 0-31:2 is no list.
@pytest.mark.parametrize("text", ["0-31:2", "0-7:1/0", "0-7:/4", "5:1/2"])
def test_parse_rejects_bad_strides(text):
    with pytest.raises(ValueError):
        cpulist.parse_cpulist(text)


@pytest.mark.parametrize("text", ["-31,64-95", "N/A", "3-1", "0-", "a", "0,,1", "0-7:5/4", None])
def test_parse_rejects(text):
    with pytest.raises(ValueError):
        cpulist.parse_cpulist(text)
    assert cpulist.try_parse_cpulist(text) is None


@pytest.mark.parametrize("numbers, expected", [
    ([0, 1, 2, 5], "0-2,5"),
    ([5, 0, 2, 1, 1], "0-2,5"),
    ([], ""),
    ([7], "7"),
    (list(range(0, 56)) + list(range(112, 168)), "0-55,112-167"),
])
def test_format(numbers, expected):
    assert cpulist.format_cpulist(numbers) == expected


@pytest.mark.parametrize("text, expected", [
    ("f", [0, 1, 2, 3]),
    ("00000000,00000003", [0, 1]),
    ("1,00000000", [32]),
    ("0\n", []),
])
def test_mask(text, expected):
    assert cpulist.parse_cpumask(text) == expected


@pytest.mark.parametrize("text", ["xyz", "", None])
def test_mask_rejects(text):
    with pytest.raises(ValueError):
        cpulist.parse_cpumask(text)
