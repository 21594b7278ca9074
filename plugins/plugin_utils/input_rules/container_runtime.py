# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""container_runtime: Docker's size form, the engine list and the timeout. Whether an engine and the toolkit are
installed is the node's to say: the node call checks that first, before any change."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.module_utils.container_runtime import ENGINES, SIZE_RULE, valid_size
from ansible_collections.gpuops.hardening.plugins.plugin_utils.input_rules.common import bad, seconds_errors, unchanged

REMOVED = {}
# The role's choices are "auto" and these (held to roles/container_runtime/meta/argument_specs.yml by a unit test).
ENGINES_RULE = "[auto] alone, or a non-empty list of %s and %s" % (", ".join(ENGINES[:-1]), ENGINES[-1])


def errors(inputs, profile_entry):  # pylint: disable=unused-argument
    found = seconds_errors(inputs, "container_runtime_timeout")
    size = inputs.get("container_runtime_shm_size")
    if isinstance(size, str) and size and not valid_size(size):
        found.append(bad("container_runtime_shm_size", size, SIZE_RULE))
    engines = inputs.get("container_runtime_engines")
    if isinstance(engines, list) and (not engines or ("auto" in engines and len(engines) > 1)):
        found.append(bad("container_runtime_engines", engines, ENGINES_RULE))
    return found


resolve = unchanged
