# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Message wording shared by every role's rules."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json


def shown(value):
    """A value as the user would write it in YAML or JSON."""
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def bad(name, value, allowed):
    return "%s: got %s; allowed: %s" % (name, shown(value), allowed)


def no_rules(inputs, given, profile_entry):  # pylint: disable=unused-argument
    return []


def unchanged(inputs, profile_entry):  # pylint: disable=unused-argument
    return inputs
