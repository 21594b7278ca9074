# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The baseline naming rule as a filter, for plays that check a name before they run."""

from __future__ import annotations

from ansible_collections.gpuops.hardening.plugins.filter.audit_baseline_name import FilterModule
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_baseline import NAME_RULE

FILTER = FilterModule().filters()["audit_baseline_name"]


def test_a_good_name_has_no_problem():
    assert FILTER("before-persistence") is None


def test_a_bad_name_gets_the_rule():
    assert FILTER("../etc/passwd") == NAME_RULE
