# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure THP helpers."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import thp


@pytest.mark.parametrize("text, expected", [
    ("always [madvise] never\n", ("madvise", ["always", "madvise", "never"])),
    ("[always] madvise never", ("always", ["always", "madvise", "never"])),
    ("always defer [defer+madvise] madvise never\n", ("defer+madvise", ["always", "defer", "defer+madvise", "madvise", "never"])),
    ("always madvise [never]", ("never", ["always", "madvise", "never"])),
    ("1\n", ("1", [])),
    ("", (None, [])),
])
def test_parse_choice(text, expected):
    assert thp.parse_choice(text) == expected


@pytest.mark.parametrize("text, expected", [("1\n", True), ("0", False), ("[1] 0", True), ("yes", None)])
def test_parse_khugepaged_defrag(text, expected):
    assert thp.parse_khugepaged_defrag(text) is expected


@pytest.mark.parametrize("cmdline, expected", [
    ("root=/dev/vda ro", None),
    ("root=/dev/vda transparent_hugepage=never quiet", "never"),
    ("transparent_hugepage=never transparent_hugepage=madvise", "madvise"),
    ("notransparent_hugepage=never", None),
    ("transparent_hugepage=always\n", "always"),
])
def test_cmdline_value(cmdline, expected):
    assert thp.cmdline_value(cmdline) == expected


def test_cmdline_conflict_names_both_values():
    message = thp.cmdline_conflict("quiet transparent_hugepage=never", "always")
    assert "transparent_hugepage=never" in message and "enabled=always" in message


@pytest.mark.parametrize("cmdline, wanted", [("quiet", "always"), ("transparent_hugepage=madvise", "madvise"), ("transparent_hugepage=never", None)])
def test_no_conflict(cmdline, wanted):
    assert thp.cmdline_conflict(cmdline, wanted) is None


def test_format_value():
    assert thp.format_value("khugepaged_defrag", True) == "1"
    assert thp.format_value("khugepaged_defrag", False) == "0"
    assert thp.format_value("enabled", "madvise") == "madvise"
