# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: input_errors
short_description: Validate role inputs and describe every bad value
version_added: "0.1.0"
author:
  - gpuops.hardening developers (@gpuops)
description:
  - Takes a list of checks, one per variable, and returns one message per failed check.
  - Each message names the variable, the value it got, and what is allowed, so an assert can
    stop a role before its first change with a message an operator can act on.
  - The roles' C(tasks/assert.yml) files use it with M(ansible.builtin.assert).
options:
  _input:
    description:
      - The checks. Each is a dict with C(name) and C(value), and any of C(type) (V(bool), V(int), V(str),
        V(dict), V(list)), C(choices), C(min), C(max), C(pattern) (a regular expression the value must match
        in full), C(valid) (a precomputed boolean for cross-field rules) and C(allowed) (text that replaces
        the generated description of what is allowed).
    type: list
    elements: dict
    required: true
"""

EXAMPLES = r"""
- name: Check THP variables
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
    quiet: true
  vars:
    __errors: "{{ checks | gpuops.hardening.input_errors }}"
    checks:
      - {name: thp_enabled, value: "{{ thp_enabled }}", choices: [always, madvise, never]}
      - {name: sysctl_swappiness, value: 300, type: int, min: 0, max: 100}
"""

RETURN = r"""
_value:
  description:
    - "One message per failed check, for example C(sysctl_swappiness: got 300; allowed: an integer from 0 to 100)."
  type: list
  elements: str
"""

import json
import re

from ansible.errors import AnsibleFilterError
from ansible.module_utils.six import string_types

TYPE_NAMES = {"bool": "true or false", "int": "an integer", "str": "a string", "dict": "a mapping", "list": "a list"}


def _is_type(value, wanted):
    if wanted == "bool":
        return isinstance(value, bool)
    if wanted == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if wanted == "str":
        return isinstance(value, string_types)
    if wanted == "dict":
        return isinstance(value, dict)
    if wanted == "list":
        return isinstance(value, list)
    raise AnsibleFilterError("input_errors: unknown type %r" % wanted)


def _describe_allowed(check):
    if "allowed" in check:
        return check["allowed"]
    if "choices" in check:
        return ", ".join(str(choice) for choice in check["choices"])
    parts = [TYPE_NAMES.get(check.get("type"), "a value")]
    if "min" in check and "max" in check:
        parts.append("from %s to %s" % (check["min"], check["max"]))
    elif "min" in check:
        parts.append("of at least %s" % check["min"])
    elif "max" in check:
        parts.append("of at most %s" % check["max"])
    if "pattern" in check:
        parts.append("matching %s" % check["pattern"])
    return " ".join(parts)


def _shown(value):
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def _check_passes(check, value):
    if "type" in check and not _is_type(value, check["type"]):
        return False
    if "choices" in check and value not in check["choices"]:
        return False
    if "min" in check and not (_is_type(value, "int") and value >= check["min"]):
        return False
    if "max" in check and not (_is_type(value, "int") and value <= check["max"]):
        return False
    if "pattern" in check and not (isinstance(value, string_types) and re.fullmatch(check["pattern"], value)):
        return False
    if "valid" in check and not check["valid"]:
        return False
    return True


def input_errors(checks):
    """Messages for every check that fails; an empty list when all pass."""
    if not isinstance(checks, list):
        raise AnsibleFilterError("input_errors expects a list of checks, got %s" % type(checks).__name__)
    errors = []
    for check in checks:
        name = check.get("name", "?")
        try:
            value = check.get("value")
        except Exception as exc:  # pylint: disable=broad-except
            # A value templated from another bad input (a profile name, say) cannot be shown.
            errors.append("%s: could not be evaluated (%s); allowed: %s" % (name, exc, _describe_allowed(check)))
            continue
        if not _check_passes(check, value):
            errors.append("%s: got %s; allowed: %s" % (name, _shown(value), _describe_allowed(check)))
    return errors


class FilterModule(object):
    """gpuops.hardening input validation filters."""

    def filters(self):
        return {"input_errors": input_errors}
