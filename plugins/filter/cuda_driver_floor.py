# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: cuda_driver_floor
author: gpuops.hardening developers
version_added: 0.3.0
short_description: Minimum NVIDIA driver for a CUDA version
description:
  - Returns the oldest Linux NVIDIA driver that runs applications built with any toolkit of the CUDA
    major release of O(_input), under CUDA minor-version compatibility.
  - The floors come from the CUDA Toolkit release notes (minimum required driver for CUDA minor version
    compatibility), kept as data in the collection's C(driver_compat) plugin utilities.
  - A CUDA major that is not in that table fails with a message naming the known majors.
positional: _input
options:
  _input:
    description: A CUDA version, V(MAJOR) or V(MAJOR.MINOR), such as V(12.4). Quote it in YAML.
    type: string
    required: true
seealso:
  - plugin: gpuops.hardening.driver_supports_cuda
    plugin_type: test
'''

EXAMPLES = r'''
- name: Show the driver CUDA 12.4 applications need
  ansible.builtin.debug:
    msg: "CUDA 12.4 needs driver {{ '12.4' | gpuops.hardening.cuda_driver_floor }}"  # 525.60.13
'''

RETURN = r'''
_value:
  description: The minimum driver version, such as V(525.60.13), or V(580) where only the branch is given.
  type: string
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.hardening.plugins.plugin_utils import driver_compat
from ansible_collections.gpuops.hardening.plugins.plugin_utils.jinja_plugins import raising


class FilterModule:
    """The NVIDIA driver floor of a CUDA version."""

    def filters(self):
        return {"cuda_driver_floor": raising(AnsibleFilterError, driver_compat.cuda_driver_floor)}
