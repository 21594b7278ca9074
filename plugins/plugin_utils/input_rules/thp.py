# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""thp: every input is a choice or a boolean, which the argument spec checks."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.plugin_utils.input_rules.common import no_rules, unchanged

REMOVED = {
    "thp_profile": "gpuops_profile (for this role alone: set it in the role's vars)",
}

errors = no_rules
resolve = unchanged
