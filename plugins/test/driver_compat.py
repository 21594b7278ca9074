# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests driver_supports_cuda and driver_supports_mig; their documentation is in the .yml files beside this one."""

from __future__ import annotations

from ansible.errors import AnsibleError

from ansible_collections.gpuops.hardening.plugins.plugin_utils import driver_compat


def driver_supports_cuda(driver_version, cuda_version):
    """'570.124.06' is driver_supports_cuda('12.8'). An unknown CUDA major is an error, not False."""
    try:
        return driver_compat.driver_supports_cuda(driver_version, cuda_version)
    except ValueError as error:
        raise AnsibleError(str(error)) from error


def driver_supports_mig(driver_version, model_name):
    """'570.124.06' is driver_supports_mig('NVIDIA A100-SXM4-80GB'). An unknown model is an error, not False."""
    try:
        return driver_compat.driver_supports_mig(driver_version, model_name)
    except ValueError as error:
        raise AnsibleError(str(error)) from error


class TestModule:
    """NVIDIA driver support for CUDA versions and MIG."""

    def tests(self):
        return {
            "driver_supports_cuda": driver_supports_cuda,
            "driver_supports_mig": driver_supports_mig,
        }
