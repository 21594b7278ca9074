# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sysctl: setting keys and values, the kernel's ranges and its paired dirty-page keys."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.hardening.plugins.module_utils.sysctl_d import PAIRED_KEYS, merge_settings, valid_key
from ansible_collections.gpuops.hardening.plugins.plugin_utils.input_rules.common import bad

REMOVED = {
    "sysctl_profile": "gpuops_profile (for this role alone: set it in the role's vars)",
}

# What the kernel accepts for keys this role knows (mm/ and kernel/ sysctl tables);
# other keys go to the kernel as given, and a value it refuses fails the apply.
RANGES = {
    "vm.swappiness": (0, 200),
    "kernel.numa_balancing": (0, 3),
    "vm.zone_reclaim_mode": (0, 7),
    "vm.max_map_count": (1, 2147483647),
    "vm.dirty_background_bytes": (0, None),
    "vm.dirty_bytes": (8192, None),
    "vm.dirty_background_ratio": (0, 100),
    "vm.dirty_ratio": (0, 100),
    "vm.overcommit_memory": (0, 2),
    "kernel.nmi_watchdog": (0, 1),
}
_INTEGER = re.compile(r"^-?[0-9]+$")


def _profile_settings(profile_entry):
    return profile_entry.get("settings") or {}


def _range_text(key, limits):
    low, high = limits
    if high is None:
        return "%s: an integer of at least %d" % (key, low)
    return "%s: an integer from %d to %d" % (key, low, high)


def _out_of_range(settings):
    bad_values, texts = {}, []
    for key, limits in RANGES.items():
        if key not in settings:
            continue
        text = str(settings[key]).strip()
        low, high = limits
        if not _INTEGER.match(text) or int(text) < low or (high is not None and int(text) > high):
            bad_values[key] = settings[key]
            texts.append(_range_text(key, limits))
    return bad_values, texts


def _dirty_errors(settings):
    # Managing both keys of a pair would flip them on every run: each write zeroes the other.
    managed = dict((key, settings[key]) for key in PAIRED_KEYS if key in settings)
    both = [key for key, partner in PAIRED_KEYS.items() if key in settings and partner in settings]
    background, limit = settings.get("vm.dirty_background_bytes"), settings.get("vm.dirty_bytes")
    inverted = background is not None and limit is not None and int(background) >= int(limit)
    if not both and not inverted:
        return []
    return [bad("sysctl_settings", managed,
                "vm.dirty_bytes or vm.dirty_ratio, and vm.dirty_background_bytes or vm.dirty_background_ratio, "
                "not both of a pair (the kernel zeroes one when the other is written; set the other to null); "
                "vm.dirty_background_bytes below vm.dirty_bytes")]


def _one_line(value):
    return isinstance(value, str) and value.strip() != "" and "\n" not in value


def _settable(value):
    """None (unset), one line of text, or an integer (not a bool)."""
    return value is None or _one_line(value) or (isinstance(value, int) and not isinstance(value, bool))


def _settings_errors(user, profile_entry):
    bad_keys = sorted(str(key) for key in user if not (isinstance(key, str) and valid_key(key)))
    bad_values = dict((key, value) for key, value in user.items() if not _settable(value))
    found = []
    if bad_keys:
        found.append(bad("sysctl_settings", bad_keys,
                         "sysctl keys such as vm.swappiness or vm/swappiness (at least two parts, no globs, no . or .. parts)"))
    if bad_values:
        found.append(bad("sysctl_settings", bad_values,
                         "values that are integers or one-line strings, or null to stop managing a key"))
    if found:
        return found
    merged = merge_settings(_profile_settings(profile_entry), user)
    out_of_range, texts = _out_of_range(merged)
    if out_of_range:
        found.append(bad("sysctl_settings", out_of_range, "; ".join(texts)))
    in_range = dict((key, value) for key, value in merged.items() if key not in out_of_range)
    return found + _dirty_errors(in_range)


def errors(inputs, profile_entry):  # pylint: disable=unused-argument
    found = []
    margin = inputs.get("sysctl_swapoff_margin_mib")
    if isinstance(margin, int) and margin < 0:
        found.append(bad("sysctl_swapoff_margin_mib", margin, "an integer of at least 0 (MiB)"))
    user = inputs.get("sysctl_settings")
    if isinstance(user, dict):
        found.extend(_settings_errors(user, profile_entry))
    return found


def resolve(inputs, profile_entry):
    """sysctl_settings becomes what the node gets: the profile's settings with the user's merged over them."""
    resolved = dict(inputs)
    resolved["sysctl_settings"] = merge_settings(_profile_settings(profile_entry), inputs.get("sysctl_settings") or {})
    return resolved
