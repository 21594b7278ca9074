# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Resolve and check the inputs of the collection's roles, without Ansible's runtime.

Each role states its inputs in three places, one job each:
  meta/argument_specs.yml  types and choices;
  defaults/main.yml        default values;
  vars/main.yml            ``__<role>_profiles``: per profile, the values of inputs left unset.
Ranges and rules across inputs live in ``input_rules/<role>.py``. The action plugin
``gpuops.hardening.validate_inputs`` reads the files and the host's variables and calls
:func:`check_role` for every role.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.gpuops.hardening.plugins.plugin_utils.input_rules import RULES

# The role whose argument spec holds the collection-wide inputs (gpuops_profile).
COLLECTION_ROLE = "validate"
PROFILE_VARIABLE = "gpuops_profile"


class RoleFiles(object):
    """What a role's files say about its inputs."""

    def __init__(self, name, options, defaults=None, profiles=None, variables=None):
        self.name = name
        self.options = options or {}
        self.defaults = defaults or {}
        self.profiles = profiles or {}
        # vars/main.yml: the profiles and the role's fixed values (paths, notes) its node plan uses.
        self.variables = variables or {}

    def profile_entry(self, profile):
        return self.profiles.get(profile) or {}


# libyaml's parser where PyYAML was built with it: every role's validate.yml reads every role's files, and it
# parses them ten times faster than the pure-Python one (and than Ansible's loader, which tags every value).
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml_file(path):
    """One YAML file, parsed with PyYAML's safe loader: the inputs read from the roles' files are plain data."""
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=_SAFE_LOADER)  # nosec B506: a safe loader


def load_roles(roles_dir, read_yaml=read_yaml_file):
    """RoleFiles for every role below roles_dir that has an argument spec; read_yaml(path) parses one file."""
    def read(*parts):
        path = os.path.join(roles_dir, *parts)
        return (read_yaml(path) or {}) if os.path.isfile(path) else {}

    roles = {}
    for name in sorted(os.listdir(roles_dir)):
        specs = read(name, "meta", "argument_specs.yml").get("argument_specs") or {}
        if "main" not in specs:
            continue
        options = specs["main"].get("options") or {}
        defaults = read(name, "defaults", "main.yml")
        # Only the collection role keeps defaults in its spec (gpuops_profile is no role variable).
        defaults.update((option, spec["default"]) for option, spec in options.items() if "default" in spec)
        variables = read(name, "vars", "main.yml")
        roles[name] = RoleFiles(name, options=options, defaults=defaults,
                                profiles=variables.get("__%s_profiles" % name), variables=variables)
    return roles


def _validator_spec(options):
    """The argument spec without the documentation keys the validator does not know."""
    keep = ("type", "elements", "choices", "required", "options", "no_log")
    return dict((name, dict((key, value) for key, value in option.items() if key in keep))
                for name, option in options.items())


def effective_values(role, given, profile):
    """Each input's value: set for the host, else the profile's, else the role default."""
    values = {}
    entry = role.profile_entry(profile)
    for name in role.options:
        if name in given:
            values[name] = given[name]
        elif name in entry:
            values[name] = entry[name]
        elif name in role.defaults:
            values[name] = role.defaults[name]
    return values


def check_types(role, values):
    """Type and choice errors (Ansible's own wording) and the values converted to their types."""
    result = ArgumentSpecValidator(_validator_spec(role.options)).validate(values, validate_role_argument_spec=True)
    return list(result.error_messages), result.validated_parameters


def check_role(role, given, profile):
    """(errors, inputs) for one role; inputs hold every input resolved and converted, plus the profile."""
    errors, inputs = check_types(role, effective_values(role, given, profile))
    rules = RULES.get(role.name)
    if rules is not None:
        errors.extend(rules.errors(inputs, role.profile_entry(profile)))
        if not errors:
            inputs = rules.resolve(inputs, role.profile_entry(profile))
    inputs[PROFILE_VARIABLE] = profile
    return ["%s role: %s" % (role.name, message) for message in errors], inputs


def removed_inputs():
    """{variable: what to set instead} for inputs an earlier release had."""
    removed = {}
    for rules in RULES.values():
        removed.update(rules.REMOVED)
    return removed


def input_names(roles):
    """Every variable name check_collection looks at."""
    names = set(removed_inputs())
    for role in roles.values():
        names.update(role.options)
    return names


def check_collection(roles, given):
    """(errors, profile, inputs by role) for the whole collection, the collection-wide inputs first."""
    removed = removed_inputs()
    errors = ["%s: no longer an input; set %s instead" % (name, removed[name]) for name in sorted(removed) if name in given]
    collection = roles.get(COLLECTION_ROLE)
    profile = None
    if collection is not None:
        shared_errors, shared = check_types(collection, effective_values(collection, given, None))
        errors.extend(shared_errors)
        if not shared_errors:
            profile = shared.get(PROFILE_VARIABLE)
    inputs = {}
    for name in sorted(roles):
        if name == COLLECTION_ROLE:
            continue
        role_errors, inputs[name] = check_role(roles[name], given, profile)
        errors.extend(role_errors)
    return errors, profile, inputs
