# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""persistenced: the range of the per-call timeout."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.plugin_utils.input_rules.common import seconds_errors, unchanged

REMOVED = {}


def errors(inputs, profile_entry):  # pylint: disable=unused-argument
    return seconds_errors(inputs, "persistenced_timeout")


resolve = unchanged
