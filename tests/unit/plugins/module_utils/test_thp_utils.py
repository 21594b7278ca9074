# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure THP helpers."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.gpuops.hardening.plugins.module_utils import thp
from ansible_collections.gpuops.hardening.plugins.modules import thp as thp_module


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
    message = thp.cmdline_conflict("quiet transparent_hugepage=never", "always", unit_managed=True)
    assert "transparent_hugepage=never" in message and "enabled=always" in message


@pytest.mark.parametrize("cmdline, wanted", [("quiet", "always"), ("transparent_hugepage=madvise", "madvise"), ("transparent_hugepage=never", None)])
def test_no_conflict(cmdline, wanted):
    assert thp.cmdline_conflict(cmdline, wanted, unit_managed=True) is None


def test_documented_choices_are_the_constant():
    documentation = yaml.safe_load(thp_module.DOCUMENTATION)
    for name, choices in thp.CHOICES.items():
        assert documentation["options"][name]["choices"] == list(choices)


def test_render_unit_applies_only_given_values():
    text = thp.render_unit({"enabled": "madvise", "khugepaged_defrag": False})
    assert thp.is_managed_unit(text)
    assert "Description=Transparent hugepages for GPU workloads\n" in text
    assert [line for line in text.splitlines() if line.startswith("ExecStart=")] == [
        "ExecStart=/bin/sh -c 'echo madvise > /sys/kernel/mm/transparent_hugepage/enabled'",
        "ExecStart=/bin/sh -c 'echo 0 > /sys/kernel/mm/transparent_hugepage/khugepaged/defrag'",
    ]
    for line in ("Type=oneshot", "WantedBy=basic.target", "DefaultDependencies=no",
                 "ConditionPathIsReadWrite=/sys/kernel/mm/transparent_hugepage/enabled",
                 "Before=basic.target docker.service containerd.service kubelet.service slurmd.service "
                 "nvidia-persistenced.service"):
        assert line in text.splitlines()


@pytest.mark.parametrize("text, expected", [
    (None, False), ("", False), ("[Unit]\nDescription=own\n", False),
    (thp.UNIT_MARKER + "\n[Unit]\n", True),
])
def test_is_managed_unit(text, expected):
    assert thp.is_managed_unit(text) is expected


def test_format_value():
    assert thp.format_value("khugepaged_defrag", True) == "1"
    assert thp.format_value("khugepaged_defrag", False) == "0"
    assert thp.format_value("enabled", "madvise") == "madvise"
