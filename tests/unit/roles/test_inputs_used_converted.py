# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles and playbooks read their inputs only as validated and converted, never as given.

AWX sends a bool survey answer as "true" or "false" and `-e name=value` sends
every value as a string; `when: mps_force_restart` would take "false" as true.
The validate_inputs action converts each input to its argument spec type; every
expression must read that result (__<role>_inputs.<name>, validate_inputs.roles.<role>.<name>).
"""

from __future__ import annotations

import glob
import os
import re

import pytest

from ansible_collections.gpuops.hardening.plugins.plugin_utils.role_inputs import load_roles, read_yaml_file

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")


INPUTS = sorted(name for role in load_roles(os.path.join(ROOT, "roles")).values() for name in role.options)
# A name read as a variable: not an attribute (inputs.name) nor part of a longer name.
RAW_USE = re.compile(r"(?<![\w.])(%s)(?![\w])" % "|".join(INPUTS))
JINJA = re.compile(r"{{.*?}}|{%.*?%}", re.S)
# Keys whose string value is a bare Jinja expression.
EXPRESSION_KEYS = ("when", "that", "failed_when", "changed_when", "until", "loop", "with_items")
STRING_LITERAL = re.compile(r"'[^']*'|\"[^\"]*\"")


def expressions(node, key=None):
    """Every Jinja expression in a parsed YAML document."""
    if isinstance(node, dict):
        for name, value in node.items():
            yield from expressions(value, name)
    elif isinstance(node, list):
        for item in node:
            yield from expressions(item, key)
    elif isinstance(node, str):
        if key in EXPRESSION_KEYS and "{{" not in node:
            yield node
        else:
            yield from JINJA.findall(node)


def files():
    paths = []
    for pattern in ("roles/*/tasks/*.yml", "roles/*/handlers/*.yml", "roles/*/vars/*.yml", "roles/*/templates/*",
                    "playbooks/*.yml"):
        paths += glob.glob(os.path.join(ROOT, pattern))
    return sorted(paths)


def raw_uses(path):
    if path.endswith(".yml"):
        found = [expression for document in [read_yaml_file(path)] for expression in expressions(document)]
    else:
        with open(path, encoding="utf-8") as handle:
            found = JINJA.findall(handle.read())
    return [expression for expression in found if RAW_USE.search(STRING_LITERAL.sub("", expression))]


def test_the_check_sees_a_raw_use():
    assert list(expressions({"when": "mps_force_restart", "msg": "{{ __mps_inputs.mps_timeout }} {{ mig_force }}"}))
    assert RAW_USE.search("mps_force_restart") and RAW_USE.search("not (mig_force)")
    assert not RAW_USE.search("__mps_inputs.mps_force_restart") and not RAW_USE.search("__mig_force_x")


@pytest.mark.parametrize("path", files(), ids=lambda path: os.path.relpath(path, ROOT))
def test_no_expression_reads_an_input_as_given(path):
    assert raw_uses(path) == []
