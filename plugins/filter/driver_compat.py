# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters cuda_driver_floor and mig_driver_floor; their documentation is in the .yml files beside this one."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.hardening.plugins.plugin_utils import driver_compat


def cuda_driver_floor(cuda_version):
    """'12.4' -> '525.60.13'."""
    try:
        return driver_compat.cuda_driver_floor(cuda_version)
    except ValueError as error:
        raise AnsibleFilterError(str(error)) from error


def mig_driver_floor(model_name):
    """'NVIDIA H100 80GB HBM3' -> '525.85.12'."""
    try:
        return driver_compat.mig_driver_floor(model_name)[1]
    except ValueError as error:
        raise AnsibleFilterError(str(error)) from error


class FilterModule:
    """NVIDIA driver floors for CUDA and MIG."""

    def filters(self):
        return {
            "cuda_driver_floor": cuda_driver_floor,
            "mig_driver_floor": mig_driver_floor,
        }
