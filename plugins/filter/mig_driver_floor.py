# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: mig_driver_floor
author: gpuops.hardening developers
version_added: 0.3.0
short_description: Minimum NVIDIA driver for MIG on a GPU model
description:
  - Returns the oldest NVIDIA driver that supports Multi-Instance GPU on the GPU model named by O(_input),
    as listed in the deployment considerations of the NVIDIA MIG user guide.
  - The model is matched on whole words of the product name, so V(NVIDIA GH200 480GB) is a GH200 (whose
    GPU the MIG guide lists as an H100) and never an H200, and V(NVIDIA H20) is never an H200.
  - A model that is not in the table fails with a message naming the known GPU families.
positional: _input
options:
  _input:
    description: The GPU's product name as nvidia-smi prints it, such as V(NVIDIA H100 80GB HBM3).
    type: string
    required: true
seealso:
  - plugin: gpuops.hardening.driver_supports_mig
    plugin_type: test
'''

EXAMPLES = r'''
- name: Show the driver MIG needs on the first GPU
  ansible.builtin.debug:
    msg: "{{ gpu_topology.gpus[0].name | gpuops.hardening.mig_driver_floor }}"  # 525.85.12 on an H100
'''

RETURN = r'''
_value:
  description: The minimum driver version, such as V(525.85.12).
  type: string
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.hardening.plugins.plugin_utils import driver_compat
from ansible_collections.gpuops.hardening.plugins.plugin_utils.jinja_plugins import raising


class FilterModule:
    """The NVIDIA driver floor of MIG on a GPU model."""

    def filters(self):
        return {"mig_driver_floor": raising(AnsibleFilterError, lambda model_name: driver_compat.mig_driver_floor(model_name)[1])}
