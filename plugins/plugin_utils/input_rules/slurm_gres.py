# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""slurm_gres: the timeout's range, the Type= word and the configuration folder."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.hardening.plugins.plugin_utils.input_rules.common import bad, seconds_errors, unchanged

REMOVED = {}
# One gres.conf word: no spaces, no '=' or '#', which would cut the line.
_TYPE = re.compile(r"^[A-Za-z0-9_.:+-]+$")


def errors(inputs, profile_entry):  # pylint: disable=unused-argument
    found = seconds_errors(inputs, "slurm_gres_nvidia_smi_timeout")
    gpu_type = inputs.get("slurm_gres_gpu_type")
    if gpu_type is not None and not _TYPE.match(str(gpu_type)):
        found.append(bad("slurm_gres_gpu_type", gpu_type,
                         "null or one word of letters, digits and _ . : + -, such as h100"))
    if gpu_type is not None and inputs.get("slurm_gres_autodetect") == "nvml":
        found.append(bad("slurm_gres_gpu_type", gpu_type,
                         "null when slurm_gres_autodetect is nvml, which takes the types from NVML"))
    config_dir = inputs.get("slurm_gres_config_dir")
    if isinstance(config_dir, str) and not config_dir.startswith("/"):
        found.append(bad("slurm_gres_config_dir", config_dir, "an absolute path, such as /etc/slurm"))
    return found


resolve = unchanged
