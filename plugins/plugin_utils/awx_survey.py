# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""AWX survey specs for the collection's job templates, derived from the roles' own files.

A job template (playbooks/awx/job_templates.yml) names the role variables its
survey asks for and the question to show. Everything else comes from the roles:
the AWX question type and choices from meta/argument_specs.yml, the default from
the profile the template runs with (vars/main.yml, defaults/main.yml), unless the
template gives its own. AWX has no bool question: a bool is a multiplechoice of
"true" and "false", which the roles' validation converts back.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.hardening.plugins.plugin_utils.role_inputs import (
    COLLECTION_ROLE,
    PROFILE_VARIABLE,
    RoleFiles,
    check_types,
    effective_values,
)

BOOL_CHOICES = ["true", "false"]
# Argument types -> the AWX question type that sends a value of that type.
SCALAR_TYPES = {"str": "text", "path": "text", "int": "integer", "float": "float"}


def question_type(option):
    """(AWX question type, choices or None) for one argument spec option; ValueError where none fits."""
    kind = option.get("type", "str")
    if kind == "bool":
        return "multiplechoice", list(BOOL_CHOICES)
    if kind in ("str", "path") and option.get("choices"):
        return "multiplechoice", [str(choice) for choice in option["choices"]]
    if kind == "list" and option.get("elements") == "str" and option.get("choices"):
        return "multiselect", [str(choice) for choice in option["choices"]]
    if kind in SCALAR_TYPES and not option.get("choices"):
        return SCALAR_TYPES[kind], None
    raise ValueError("a %s%s cannot be a survey question" % (kind, " with choices" if option.get("choices") else ""))


def awx_default(awx_type, value):
    """A typed value as a survey default: bools as their choice, multiselect lines joined."""
    if isinstance(value, bool):
        return BOOL_CHOICES[0] if value else BOOL_CHOICES[1]
    if awx_type == "multiselect":
        return "\n".join(value)
    if awx_type == "text":
        return str(value)
    return value


def answer(question):
    """The extra var AWX sends for a question launched with its default."""
    if question["type"] == "multiselect":
        return question["default"].split("\n") if question["default"] else []
    return question["default"]


def owners(roles):
    """{variable: RoleFiles} for every input of every role."""
    return dict((name, role) for role in roles.values() for name in role.options)


# Ansible's documentation markup, such as C(/etc), which AWX would show as it is.
DOC_MARKUP = re.compile(r"\b[A-Z]\(([^()]*)\)")


def _description(option):
    text = option.get("description") or ""
    return DOC_MARKUP.sub(r"\1", " ".join(text) if isinstance(text, list) else text)


def survey_spec(template, roles):
    """The AWX survey_spec of one job template from the data file; ValueError naming the first bad question."""
    fixed = template.get("extra_vars") or {}
    profile = fixed.get(PROFILE_VARIABLE, roles[COLLECTION_ROLE].defaults[PROFILE_VARIABLE])
    by_variable = owners(roles)
    spec = []
    for question in template.get("survey") or []:
        variable = question["variable"]
        where = "%s: %s" % (template["name"], variable)
        if variable not in by_variable:
            raise ValueError("%s: no role has this input" % where)
        role = by_variable[variable]
        option = role.options[variable]
        try:
            awx_type, choices = question_type(option)
        except ValueError as error:
            raise ValueError("%s: %s" % (where, error)) from error
        value = question["default"] if "default" in question else effective_values(role, fixed, profile)[variable]
        errors, converted = check_types(RoleFiles(role.name, {variable: option}), {variable: value})
        if errors:
            raise ValueError("%s: default %r: %s" % (where, value, "; ".join(errors)))
        default = awx_default(awx_type, converted[variable])
        item = {
            "question_name": question["question"],
            "question_description": _description(option),
            "variable": variable,
            "type": awx_type,
            # AWX refuses an empty answer to a required question; an empty default is a valid answer here.
            "required": default != "",
            "default": default,
        }
        if choices is not None:
            item["choices"] = choices
        spec.append(item)
    return {"name": template["name"], "description": template.get("description", ""), "spec": spec}


def launch_extra_vars(template, spec):
    """The extra vars of a job launched with every survey default: the template's own, then the answers."""
    extra_vars = dict(template.get("extra_vars") or {})
    extra_vars.update((question["variable"], answer(question)) for question in spec["spec"])
    return extra_vars
