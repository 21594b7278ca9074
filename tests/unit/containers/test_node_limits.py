# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container lab's reading of what the machine grants, and the verdicts its audit test expects, on procfs and
sysfs text written here in the kernel's layout (proc(5))."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpuops.hardening.tests.containers import node_limits

COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# CapEff as a root process shows it without, then with, CAP_SYS_RESOURCE (bit 24).
WITHOUT_SYS_RESOURCE = "Name:\tcontainerd\nCapInh:\t0000000000000000\nCapEff:\t000001fffeffffff\n"
WITH_SYS_RESOURCE = "Name:\tcontainerd\nCapEff:\t000001ffffffffff\n"
LIMITS = ("Limit                     Soft Limit           Hard Limit           Units     \n"
          "Max open files            1048576              1048576              files     \n"
          "Max locked memory         %s              %s              bytes     \n")


def test_the_capability_bit_is_read_from_the_effective_set():
    assert not node_limits.holds_capability(WITHOUT_SYS_RESOURCE, node_limits.CAP_SYS_RESOURCE)
    assert node_limits.holds_capability(WITH_SYS_RESOURCE, node_limits.CAP_SYS_RESOURCE)
    with pytest.raises(ValueError):
        node_limits.holds_capability("Name:\tx\n", node_limits.CAP_SYS_RESOURCE)


def test_the_hard_memlock_limit_is_its_own_column():
    assert node_limits.hard_memlock(LIMITS % ("65536", "8388608")) == 8388608
    assert node_limits.hard_memlock(LIMITS % ("8388608", "unlimited")) is None


def test_unlimited_memlock_is_withheld_only_without_the_capability_and_under_a_finite_hard_limit():
    reason = node_limits.unlimited_memlock_withheld(WITHOUT_SYS_RESOURCE, LIMITS % ("8388608", "8388608"))
    assert "CAP_SYS_RESOURCE" in reason and "8192 KiB" in reason and node_limits.UNLIMITED_PASS_PROOF in reason
    assert node_limits.unlimited_memlock_withheld(WITH_SYS_RESOURCE, LIMITS % ("8388608", "8388608")) is None
    assert node_limits.unlimited_memlock_withheld(WITHOUT_SYS_RESOURCE, LIMITS % ("8388608", "unlimited")) is None


def test_the_named_unit_proof_exists():
    path, name = node_limits.UNLIMITED_PASS_PROOF.split("::")
    with open(os.path.join(COLLECTION_ROOT, path), encoding="utf-8") as handle:
        assert "def %s(" % name in handle.read()


@pytest.mark.parametrize("soft, hard, verdict", [("unlimited", "unlimited", "PASS"), ("8192", "8192", "FAIL"),
                                                 ("8192", "unlimited", "FAIL"), ("unlimited", "64", "FAIL")])
def test_the_memlock_verdict_needs_both_limits_unlimited(soft, hard, verdict):
    assert node_limits.memlock_verdict(soft, hard) == verdict


@pytest.mark.parametrize("rotational, verdict", [("1\n", "WARN"), ("0\n", "PASS"), ("", "PASS")])
def test_the_data_root_warns_only_on_a_rotational_disk(rotational, verdict):
    assert node_limits.data_root_verdict(rotational) == verdict
