# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""docs/reliability.md's bad-input table is the one tests/reliability/bad_inputs.yml generates,
and every role with inputs has cases in every mode."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "reliability"))
# pylint: disable=wrong-import-position
import bad_input_cases  # noqa: E402

from ansible_collections.gpuops.hardening.plugins.plugin_utils.role_inputs import load_roles, removed_inputs  # noqa: E402


def test_the_documented_table_is_generated_from_the_cases():
    with open(bad_input_cases.DOC, encoding="utf-8") as handle:
        document = handle.read()
    assert bad_input_cases.with_section(document, bad_input_cases.load_cases()) == document, \
        "docs/reliability.md is stale: run python tests/reliability/bad_input_cases.py"


def test_a_changed_case_makes_the_table_stale():
    with open(bad_input_cases.DOC, encoding="utf-8") as handle:
        document = handle.read()
    cases = bad_input_cases.load_cases()
    cases[0]["value"] = "another value"
    assert bad_input_cases.with_section(document, cases) != document


def test_every_role_with_inputs_has_cases_in_every_mode():
    roles = load_roles(os.path.join(bad_input_cases.REPO_ROOT, "roles"))
    cases = bad_input_cases.load_cases()
    for mode in bad_input_cases.MODES:
        covered = set(case["role"] for case in cases if mode in case["modes"])
        assert sorted(name for name, role in roles.items() if role.options and name not in covered) == [], mode


def test_cases_name_inputs_the_roles_have_or_had():
    roles = load_roles(os.path.join(bad_input_cases.REPO_ROOT, "roles"))
    known = set(name for role in roles.values() for name in role.options)
    assert [case["id"] for case in bad_input_cases.load_cases() if case["variable"] not in known | set(removed_inputs())] == []


def test_runs_share_no_group_and_alone_cases_run_alone():
    for mode in bad_input_cases.MODES:
        for _role, run in bad_input_cases.runs_of(bad_input_cases.load_cases(), mode):
            groups = [case["group"] for case in run]
            assert len(groups) == len(set(groups))
            assert len(run) == 1 or not any(case["alone"] for case in run)
