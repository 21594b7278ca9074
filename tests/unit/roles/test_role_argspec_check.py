# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every run checks the inputs before the first change, and no run checks the same inputs twice in a row.

Each role's main.yml runs validate_inputs, then features.yml. The playbooks that run the validation play first
import each role at features.yml with that play's result; the others, and roles that include a role, turn off the
argument-spec task Ansible would put before validate_inputs, which checks the same spec with the same validator.
These tests hold what makes that safe: every role starts with validate_inputs for itself, features.yml is imported
only after a validation play and with its result, and the validator sees every key of the spec that validates and
rejects what Ansible's task rejects, in Ansible's words.
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


def test_features_are_imported_only_after_the_validation_play_with_its_result():
    uses = [(path, task, entry) for path, task, entry, how in collection_role_uses() if entry.get("tasks_from") == FEATURES]
    assert len(uses) >= 9, "site.yml imports every tuning role at its features"
    for path, task, entry in uses:
        plays = read_yaml_file(path)
        using = next(index for index, play in enumerate(plays) if any(
            item.get("ansible.builtin.import_role") == entry for item in tasks_in(play.get("tasks") or [])))
        assert any(play.get("ansible.builtin.import_playbook") == "validate.yml" for play in plays[:using]), \
            "%s imports %s at features.yml without the validation play before it" % (path, entry["name"])
        role = entry["name"].replace("gpuops.hardening.", "")
        # Not under the name the role registers its own check's result with: a registered variable outranks a
        # task's vars, so one an earlier run of the role left in the same playbook run would win.
        assert "__%s_validation" % role not in task["vars"], path
        given = task["vars"]["__%s_checked" % role]
        assert given["inputs"] == "{{ validate_inputs.roles.%s }}" % role, path
        # What the role reads of its own check's result, the play hands over from the validation play's.
        assert set(given) == validation_keys_read(role), path
        if "roles" in given:
            assert given["roles"] == "{{ validate_inputs.roles }}", path


def validation_keys_read(role):
    """The keys of the check's result (handed over, or the role's own) the role's vars and tasks read."""
    read = set()
    for path in glob.glob(os.path.join(ROOT, "roles", role, "*", "*.yml")):
        with open(path, encoding="utf-8") as handle:
            read.update(re.findall(r"\(__%s_checked \| default\(__%s_validation\)\)\.(\w+)" % (role, role), handle.read()))
    return read


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
