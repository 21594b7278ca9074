# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The driver_supports_cuda and driver_supports_mig tests: registered names, answers, errors."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleError

# The modules, not their TestModule classes, so that pytest does not collect the classes.
from ansible_collections.gpuops.hardening.plugins.test import driver_supports_cuda, driver_supports_mig

# One file per test, so that each carries its own documentation.
TESTS = {**driver_supports_cuda.TestModule().tests(), **driver_supports_mig.TestModule().tests()}


def test_each_file_registers_the_test_it_is_named_after():
    assert list(driver_supports_cuda.TestModule().tests()) == ["driver_supports_cuda"]
    assert list(driver_supports_mig.TestModule().tests()) == ["driver_supports_mig"]


@pytest.mark.parametrize("driver, cuda, answer", [("570.124.06", "12.8", True), ("525.60.13", "12.8", True),
                                                  ("525.60.13", "13.0", False), ("450.80.02", "12", False)])
def test_driver_supports_cuda(driver, cuda, answer):
    assert TESTS["driver_supports_cuda"](driver, cuda) is answer


@pytest.mark.parametrize("driver, model, answer", [("570.124.06", "NVIDIA A100-SXM4-80GB", True),
                                                   ("525.60.13", "NVIDIA H100 80GB HBM3", False),
                                                   ("550.90.07", "NVIDIA H200", True),
                                                   ("550.90.07", "NVIDIA H20", True),
                                                   ("535.161.06", "NVIDIA H20", False)])
def test_driver_supports_mig(driver, model, answer):
    assert TESTS["driver_supports_mig"](driver, model) is answer


@pytest.mark.parametrize("name, driver, other, words", [
    ("driver_supports_cuda", "570.124.06", "14.0", "known majors: 11, 12, 13"),
    ("driver_supports_cuda", "latest", "12.8", "invalid NVIDIA driver version"),
    ("driver_supports_mig", "570.124.06", "NVIDIA L40S", "not in the MIG driver table"),
])
def test_errors_are_raised_never_false(name, driver, other, words):
    with pytest.raises(AnsibleError, match=words):
        TESTS[name](driver, other)
