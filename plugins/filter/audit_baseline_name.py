# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: audit_baseline_name
author: gpuops.hardening developers
version_added: 0.4.0
short_description: Why a string cannot name an audit baseline
description:
  - Returns null when O(_input) can name a baseline file of M(gpuops.hardening.audit_report), else the naming rule,
    so that a play can reject a bad name before it runs anything on a node, with the same rule the report applies.
positional: _input
options:
  _input:
    description: The proposed baseline name, such as V(before-thp).
    type: string
    required: true
'''

EXAMPLES = r'''
- name: Check the baseline's name before measuring
  ansible.builtin.assert:
    that: (baseline_save | gpuops.hardening.audit_baseline_name) is none
    fail_msg: "baseline_save: got {{ baseline_save }}; allowed: {{ baseline_save | gpuops.hardening.audit_baseline_name }}"
'''

RETURN = r'''
_value:
  description: Null for a good name; otherwise what is allowed.
  type: string
'''

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_baseline import check_name


class FilterModule:
    """The audit's baseline naming rule, for plays."""

    def filters(self):
        return {"audit_baseline_name": check_name}
