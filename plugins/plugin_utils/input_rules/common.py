# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Message wording shared by every role's rules."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_baseline import check_name


def shown(value):
    """A value as the user would write it in YAML or JSON."""
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def bad(name, value, allowed):
    return "%s: got %s; allowed: %s" % (name, shown(value), allowed)


# Every per-command timeout input of the collection.
SECONDS_RANGE = (1, 600)


def seconds_errors(inputs, name):
    """The error for an integer input of seconds outside SECONDS_RANGE (none for other types: the spec reports those)."""
    low, high = SECONDS_RANGE
    value = inputs.get(name)
    if isinstance(value, int) and not low <= value <= high:
        return [bad(name, value, "an integer from %d to %d (seconds)" % SECONDS_RANGE)]
    return []


def baseline_name_errors(inputs, *names):
    """The errors for baseline names that are not plain file names (the rule the report applies to them)."""
    found = []
    for name in names:
        value = inputs.get(name)
        if isinstance(value, str) and value and check_name(value):
            found.append(bad(name, value, check_name(value)))
    return found


def no_rules(inputs, profile_entry):  # pylint: disable=unused-argument
    return []


def unchanged(inputs, profile_entry):  # pylint: disable=unused-argument
    return inputs
