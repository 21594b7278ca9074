# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: driver_supports_mig
author: gpuops.hardening developers
version_added: 0.3.0
short_description: Whether an NVIDIA driver supports MIG on a GPU model
description:
  - True when the driver version O(_input) is at least the MIG minimum driver of the GPU model
    O(model_name), from the deployment considerations of the NVIDIA MIG user guide.
  - A model that is not in that table, or a version that cannot be read, is an error, never false.
positional: model_name
options:
  _input:
    description: The driver version nvidia-smi reports, such as V(570.124.06).
    type: string
    required: true
  model_name:
    description: The GPU's product name as nvidia-smi prints it, such as V(NVIDIA H100 80GB HBM3).
    type: string
    required: true
seealso:
  - plugin: gpuops.hardening.mig_driver_floor
    plugin_type: filter
'''

EXAMPLES = r'''
- name: Refuse MIG on a driver too old for the GPU
  ansible.builtin.assert:
    that:
      - gpu_topology.driver_version is gpuops.hardening.driver_supports_mig(gpu_topology.gpus[0].name)
'''

RETURN = r'''
_value:
  description: Whether the driver is at least the GPU model's MIG minimum driver.
  type: boolean
'''

from ansible.errors import AnsibleError

from ansible_collections.gpuops.hardening.plugins.plugin_utils import driver_compat
from ansible_collections.gpuops.hardening.plugins.plugin_utils.jinja_plugins import raising


class TestModule:
    """Whether an NVIDIA driver supports MIG on a GPU model."""

    def tests(self):
        return {"driver_supports_mig": raising(AnsibleError, driver_compat.driver_supports_mig)}
