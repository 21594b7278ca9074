# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A GPU's MIG profile table as the planner reads it, from the emulated mig -lgip and -lgipp."""

from __future__ import annotations

from ansible_collections.gpuops.hardening.plugins.module_utils import nvidia_smi
from ansible_collections.gpuops.hardening.plugins.module_utils.mig_plan import gpu_profiles
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import enable_mig


def emulated_profiles(tmp_path, profile):
    """GPU 0's table on an emulated node of that hardware profile, with MIG on."""
    state = api.new_state(profile)
    enable_mig(state)
    path = str(tmp_path / "state.json")
    api.write_state(state, path)
    listings = []
    for action in ("-lgip", "-lgipp"):
        rc, out, err = api.run("nvidia-smi", ["mig", "-i", "0", action], path)
        assert rc == 0, err
        listings.append(out)
    return gpu_profiles(nvidia_smi.parse_gpu_instance_profiles(listings[0]),
                        nvidia_smi.parse_gpu_instance_placements(listings[1]), 0)
