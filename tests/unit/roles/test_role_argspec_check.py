# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every run checks the inputs before the first change, and no run checks the same inputs twice in a row.

Each role's main.yml runs validate_inputs, then features.yml. The playbooks that run the validation play first
run its plan in one node call; the others, and roles that include a role, turn off the argument-spec task Ansible
would put before validate_inputs, which checks the same spec with the same validator. These tests hold what makes
that safe: every role starts with validate_inputs for itself, the plan runs only after a validation play, no role
gets its inputs handed over from outside, and the validator sees every key of the spec that validates and rejects
what Ansible's task rejects, in Ansible's words.
"""

from __future__ import annotations

import glob
import os
import re

import pytest
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.gpuops.hardening.plugins.plugin_utils.role_inputs import (
    COLLECTION_ROLE,
    check_types,
    load_roles,
    read_yaml_file,
)

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")
ROLES = load_roles(os.path.join(ROOT, "roles"))
# The entry points each role's argument spec covers (load_roles keeps only main's options).
SPEC_ENTRY_POINTS = {name: set(read_yaml_file(os.path.join(ROOT, "roles", name, "meta", "argument_specs.yml"))["argument_specs"])
                     for name in ROLES}
ROLE_INCLUDES = ("ansible.builtin.import_role", "ansible.builtin.include_role")
# The keys of an argument spec option that only document it.
DOCUMENTATION_KEYS = {"description", "default", "version_added"}
VALIDATING_KEYS = {"type", "elements", "choices", "required", "options", "no_log"}


def collection_files():
    return sorted(glob.glob(os.path.join(ROOT, "playbooks", "*.yml")) + glob.glob(os.path.join(ROOT, "roles", "*", "tasks", "*.yml")))


def tasks_in(node):
    """Every task in a playbook or task file: the plays' tasks and the blocks' tasks included."""
    if isinstance(node, list):
        for item in node:
            yield from tasks_in(item)
    elif isinstance(node, dict):
        yield node
        for key in ("tasks", "pre_tasks", "post_tasks", "handlers", "block", "rescue", "always"):
            yield from tasks_in(node.get(key) or [])


def collection_role_uses():
    """(file, task or play, the role's entry, how) for every use of one of the collection's roles."""
    for path in collection_files():
        for task in tasks_in(read_yaml_file(path) or []):
            for entry in task.get("roles") or []:
                yield path, task, entry, "roles"
            for action in ROLE_INCLUDES:
                if action in task and str(task[action].get("name", "")).startswith("gpuops.hardening."):
                    yield path, task, task[action], action


def has_argument_spec(entry):
    """Whether Ansible puts its argument-spec task first: the entry point (main, or tasks_from) has a spec."""
    role = ROLES.get(str(entry.get("name", entry.get("role", ""))).replace("gpuops.hardening.", ""))
    if role is None:
        return True
    return os.path.splitext(entry.get("tasks_from", "main"))[0] in SPEC_ENTRY_POINTS[role.name]


def test_every_use_of_a_collection_role_skips_the_repeated_check():
    uses = list(collection_role_uses())
    assert len(uses) >= 10, "the playbooks and roles use the collection's roles; the parser found too few"
    wrong = ["%s: %s" % (os.path.relpath(path, ROOT), entry) for path, dummy, entry, how in uses
             if has_argument_spec(entry) and (how == "roles" or entry.get("rolespec_validate") is not False)]
    assert not wrong, "list roles through import_role/include_role with rolespec_validate: false: %s" % wrong


FEATURES = "features.yml"
TUNING_ROLES = sorted(role for role in ROLES if os.path.exists(os.path.join(ROOT, "roles", role, "tasks", FEATURES)))


@pytest.mark.parametrize("role", TUNING_ROLES)
def test_main_is_the_check_then_the_features(role):
    main = read_yaml_file(os.path.join(ROOT, "roles", role, "tasks", "main.yml"))
    assert [list(task)[1:] for task in main] == [["ansible.builtin.import_tasks", "tags"], ["ansible.builtin.import_tasks"]]
    assert [task["ansible.builtin.import_tasks"] for task in main] == ["validate.yml", FEATURES]


def node_call_uses():
    """(playbook, plays, index of the play, the import) for every play that runs the validation play's plan."""
    for path in glob.glob(os.path.join(ROOT, "playbooks", "*.yml")):
        plays = read_yaml_file(path) or []
        for index, play in enumerate(plays):
            for task in tasks_in(play.get("tasks") or []):
                entry = task.get("ansible.builtin.import_role") or {}
                if entry.get("tasks_from") == "node.yml" and "validate_inputs.plan" in str(task.get("vars")):
                    yield path, plays, index, task


def test_the_plan_is_run_only_after_the_validation_play():
    uses = list(node_call_uses())
    assert len(uses) >= 3, "site.yml, mig.yml and mps.yml run the validation play's plan"
    for path, plays, index, dummy in uses:
        assert any(play.get("ansible.builtin.import_playbook") == "validate.yml" for play in plays[:index]), \
            "%s runs the node plan without the validation play before it" % path


def test_no_role_gets_its_inputs_handed_over_from_outside():
    """Each role reads the result of its own validate_inputs; a playbook hands over the plan, never a role's inputs."""
    for path in collection_files() + glob.glob(os.path.join(ROOT, "roles", "*", "vars", "*.yml")):
        with open(path, encoding="utf-8") as handle:
            assert not re.search(r"__\w+_checked\b", handle.read()), path


@pytest.mark.parametrize("role", sorted(ROLES))
def test_every_role_validates_its_own_inputs_first(role):
    main = read_yaml_file(os.path.join(ROOT, "roles", role, "tasks", "main.yml"))
    assert main[0].get("ansible.builtin.import_tasks") == "validate.yml"
    assert main[0].get("tags") == ["always"], "the check runs whatever tags limit the run"
    first = read_yaml_file(os.path.join(ROOT, "roles", role, "tasks", "validate.yml"))[0]
    call = first["gpuops.hardening.validate_inputs"]
    assert (call or {}).get("role") == (None if role == COLLECTION_ROLE else role)


def spec_keys(options):
    for option in options.values():
        yield set(option)
        yield from spec_keys(option.get("options") or {})


@pytest.mark.parametrize("role", sorted(ROLES))
def test_the_validator_sees_every_key_that_validates(role):
    keys = set().union(*spec_keys(ROLES[role].options))
    assert keys <= VALIDATING_KEYS | DOCUMENTATION_KEYS, "a key validate_inputs does not pass on: %s" % (
        keys - VALIDATING_KEYS - DOCUMENTATION_KEYS)


# Values of every shape: each option rejects some of them, by its type or its choices.
PROBES = ("none-of-the-choices", "many", 3.5, -1, ["x"], {"a": 1}, True, None)
# Types to which most values convert (a mapping becomes its text), so a probe may pass both checks.
LENIENT_TYPES = ("str", "path", "raw")


@pytest.mark.parametrize("role,name", [(role, name) for role in sorted(ROLES) for name in sorted(ROLES[role].options)])
def test_each_value_fails_as_ansibles_own_task_would(role, name):
    option = ROLES[role].options[name]
    rejected = 0
    for value in PROBES:
        ours, dummy = check_types(ROLES[role], {name: value})
        theirs = ArgumentSpecValidator(ROLES[role].options).validate({name: value}, validate_role_argument_spec=True)
        assert bool(ours) == bool(theirs.error_messages), "%s=%r" % (name, value)
        if value is not None:
            # Ansible's task templates a default into a None first, and says "got: " where we say "got: None".
            assert ours == list(theirs.error_messages), "%s=%r" % (name, value)
        rejected += bool(ours)
    assert rejected or (option.get("type", "str") in LENIENT_TYPES and not option.get("choices"))
