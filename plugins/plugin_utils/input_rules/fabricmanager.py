# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fabricmanager: the ranges of the per-call timeout and of the wait for the fabric."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.plugin_utils.input_rules.common import bad, seconds_errors, unchanged

REMOVED = {}
# An 8-GPU board trains in well under a minute; an hour is a hang, not a wait.
WAIT_RANGE = (10, 3600)


def errors(inputs, profile_entry):  # pylint: disable=unused-argument
    found = seconds_errors(inputs, "fabricmanager_timeout")
    wait = inputs.get("fabricmanager_wait_seconds")
    if isinstance(wait, int) and not WAIT_RANGE[0] <= wait <= WAIT_RANGE[1]:
        found.append(bad("fabricmanager_wait_seconds", wait, "an integer from %d to %d (seconds)" % WAIT_RANGE))
    return found


resolve = unchanged
