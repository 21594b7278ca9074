# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""baseline: sizes, repeats and memory of 1 or more, a timeout in the collection's range, and baseline names
that are file names (the rule the report applies)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.plugin_utils.input_rules.common import bad, baseline_name_errors, seconds_errors, unchanged

REMOVED = {}


def _positive(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def errors(inputs, profile_entry):  # pylint: disable=unused-argument
    found = []
    sizes = inputs.get("baseline_sizes_mib")
    if isinstance(sizes, list):
        if not sizes:
            found.append(bad("baseline_sizes_mib", sizes, "a non-empty list of copy sizes in MiB, each 1 or more"))
        for size in sizes:
            if isinstance(size, int) and not _positive(size):
                found.append(bad("baseline_sizes_mib", size, "copy sizes in MiB, each 1 or more"))
    for name in ("baseline_repeats", "baseline_max_memory_mib"):
        value = inputs.get(name)
        if isinstance(value, int) and not _positive(value):
            found.append(bad(name, value, "an integer of 1 or more"))
    found.extend(seconds_errors(inputs, "baseline_timeout"))
    found.extend(baseline_name_errors(inputs, "baseline_save", "baseline_compare"))
    return found


resolve = unchanged
