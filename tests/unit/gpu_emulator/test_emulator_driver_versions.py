# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each profile's driver and CUDA version: a real pairing, and one the driver floor tables agree with."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import nvidia_smi
from ansible_collections.gpuops.hardening.plugins.plugin_utils.driver_compat import (
    driver_supports_cuda,
    driver_supports_mig,
    preflight_checks,
)
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api

# The pairs the emulator README names, with their source.
DRIVERS = {
    "dgx_h100": ("525.60.13", "12.0"),
    "l40s_4x": ("550.127.05", "12.4"),
    "a100_8x_mig": ("570.124.06", "12.8"),
    "gh200": ("560.35.03", "12.6"),
    "workstation_2gpu": ("535.183.01", "12.2"),
    "slurm_2node": ("550.54.15", "12.4"),
}


def test_every_profile_has_its_documented_pair_and_no_two_share_a_driver():
    assert set(DRIVERS) == set(api.PROFILES)
    for profile, pair in DRIVERS.items():
        state = api.new_state(profile)
        assert (state["driver_version"], state["cuda_version"]) == pair, profile
    assert len(set(driver for driver, _cuda in DRIVERS.values())) == len(DRIVERS)


@pytest.mark.parametrize("profile", sorted(DRIVERS))
def test_the_driver_meets_the_floor_of_the_cuda_major_it_reports(profile):
    state = api.new_state(profile)
    assert driver_supports_cuda(state["driver_version"], state["cuda_version"])


def test_the_mig_lab_node_is_above_its_mig_floor_and_the_h100_node_below():
    a100 = api.new_state("a100_8x_mig")
    assert all(driver_supports_mig(a100["driver_version"], gpu["model"]) for gpu in a100["gpus"])
    h100 = api.new_state("dgx_h100")
    assert not any(driver_supports_mig(h100["driver_version"], gpu["model"]) for gpu in h100["gpus"])


def test_the_preflight_on_the_emulated_h100_node_flags_its_old_driver(make_state, smi):
    path = make_state("dgx_h100")
    rc, out, _err = smi(path, "-q", "-x")
    assert rc == 0
    query = nvidia_smi.parse_query_xml(out)
    checks = preflight_checks(query["driver_version"], query["cuda_version"], query["gpus"], ["12.0", "12.4", "13.0"])
    verdicts = dict((check["id"], check["verdict"]) for check in checks)
    assert verdicts.pop("driver.cuda.12.0") == "PASS"
    assert verdicts.pop("driver.cuda.12.4") == "WARN"
    assert verdicts.pop("driver.cuda.13.0") == "FAIL"
    assert verdicts == dict(("driver.mig_floor.gpu%d" % index, "WARN") for index in range(8))
