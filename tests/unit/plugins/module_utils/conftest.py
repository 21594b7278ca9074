# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulator's MIG profile tables, for the planner tests."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.tests.unit.plugins.module_utils.emulated_mig_tables import emulated_profiles


@pytest.fixture
def a100_80gb(tmp_path):
    """The table of an emulated a100_8x_mig node's A100-SXM4-80GB."""
    return emulated_profiles(tmp_path, "a100_8x_mig")


@pytest.fixture
def h100(tmp_path):
    """The table of an emulated dgx_h100 node's H100 80GB."""
    return emulated_profiles(tmp_path, "dgx_h100")
