# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: driver_supports_cuda
author: gpuops.hardening developers
version_added: 0.3.0
short_description: Whether an NVIDIA driver runs a CUDA version
description:
  - True when the driver version O(_input) is at least the minimum driver of the CUDA major release of
    O(cuda_version), from the CUDA Toolkit release notes; such a driver runs that CUDA version at least
    under CUDA minor-version compatibility.
  - A CUDA major that is not in that table, or a version that cannot be read, is an error, never false.
positional: cuda_version
options:
  _input:
    description: The driver version nvidia-smi reports, such as V(570.124.06).
    type: string
    required: true
  cuda_version:
    description: A CUDA version, V(MAJOR) or V(MAJOR.MINOR), such as V(12.8). Quote it in YAML.
    type: string
    required: true
seealso:
  - plugin: gpuops.hardening.cuda_driver_floor
    plugin_type: filter
'''

EXAMPLES = r'''
- name: Refuse a node whose driver cannot run CUDA 12.8 applications
  ansible.builtin.assert:
    that:
      - gpu_topology.driver_version is gpuops.hardening.driver_supports_cuda('12.8')
'''

RETURN = r'''
_value:
  description: Whether the driver is at least the CUDA major's minimum driver.
  type: boolean
'''

from ansible.errors import AnsibleError

from ansible_collections.gpuops.hardening.plugins.plugin_utils import driver_compat
from ansible_collections.gpuops.hardening.plugins.plugin_utils.jinja_plugins import raising


class TestModule:
    """Whether an NVIDIA driver runs a CUDA version."""

    def tests(self):
        return {"driver_supports_cuda": raising(AnsibleError, driver_compat.driver_supports_cuda)}
