# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""numa_binding: the nvidia-smi timeout's range and the launcher's path."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.hardening.plugins.plugin_utils.input_rules.common import bad, seconds_errors, unchanged

REMOVED = {}
_ABSOLUTE_FILE = re.compile(r"^/\S*[^/\s]$")


def errors(inputs, profile_entry):  # pylint: disable=unused-argument
    found = seconds_errors(inputs, "numa_binding_nvidia_smi_timeout")
    path = inputs.get("numa_binding_launcher_path")
    if isinstance(path, str) and not _ABSOLUTE_FILE.match(path):
        found.append(bad("numa_binding_launcher_path", path,
                         "an absolute file path without spaces, such as /usr/local/bin/gpu-numa-exec"))
    return found


resolve = unchanged
