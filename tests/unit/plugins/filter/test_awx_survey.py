# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AWX job templates of playbooks/awx against the roles' argument specs, and the answers AWX sends."""

from __future__ import annotations

import os
import re

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.hardening.plugins.filter import awx_survey_spec as filter_plugin
from ansible_collections.gpuops.hardening.plugins.plugin_utils.awx_survey import launch_extra_vars, question_type
from ansible_collections.gpuops.hardening.plugins.plugin_utils.node_plan import NODE_ROLES
from ansible_collections.gpuops.hardening.plugins.plugin_utils.role_inputs import (
    COLLECTION_ROLE,
    check_collection,
    effective_values,
    load_roles,
    read_yaml_file,
)

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..")
AWX_DIR = os.path.join(ROOT, "playbooks", "awx")
FILTERS = filter_plugin.FilterModule().filters()


ROLES = load_roles(os.path.join(ROOT, "roles"))
TEMPLATES = read_yaml_file(os.path.join(AWX_DIR, "job_templates.yml"))["gpuops_awx_job_templates"]
CONFIGURE = read_yaml_file(os.path.join(AWX_DIR, "configure.yml"))
SPECS = dict((template["name"], FILTERS["awx_survey_spec"](template)) for template in TEMPLATES)
QUESTIONS = [(template, question) for template in TEMPLATES for question in SPECS[template["name"]]["spec"]]
QUESTION_IDS = ["%s: %s" % (template["name"], question["variable"]) for template, question in QUESTIONS]


def playbook_roles(path):
    """The short names of the roles a playbook's plays run, through its imported playbooks."""
    roles = set()
    for play in read_yaml_file(path):
        if "ansible.builtin.import_playbook" in play:
            roles |= playbook_roles(os.path.join(os.path.dirname(path), play["ansible.builtin.import_playbook"]))
        for role in play.get("roles", []):
            roles.add(role["role"].split(".")[-1])
        for task in play.get("tasks") or []:
            if "ansible.builtin.import_role" in task:
                roles |= imported_roles(task)
    return roles


def imported_roles(task):
    """The roles an import runs: the role, or for the node call (the validate role's node.yml) those of its plan."""
    entry = task["ansible.builtin.import_role"]
    if entry.get("tasks_from") != "node.yml":
        return {entry["name"].split(".")[-1]}
    plan = task["vars"]["__gpuops_node_features"]
    chosen = re.search(r"selectattr\('role', 'equalto', '(\w+)'\)", plan)
    return {chosen.group(1)} if chosen else set(NODE_ROLES)


# What the job's inventory gives a node, which no survey asks for: a MIG layout for mig_state present.
NODE_VARS = {"mig_layouts": {"0": {"mig_enabled": True, "mig_devices": {"1g.10gb": 7}}}}


def launched(template):
    """The variables of a node in a job launched with the template's survey defaults."""
    return dict(NODE_VARS, **launch_extra_vars(template, SPECS[template["name"]]))


def option_of(variable):
    return next(role.options[variable] for role in ROLES.values() if variable in role.options)


def test_the_templates_are_the_five_jobs():
    assert [template["name"] for template in TEMPLATES] == [
        "gpuops harden (training)", "gpuops harden (inference)", "gpuops audit", "gpuops MIG reconfigure",
        "gpuops MPS on/off"]


@pytest.mark.parametrize("template", TEMPLATES, ids=[template["name"] for template in TEMPLATES])
def test_each_template_runs_a_playbook_of_the_checkout_that_validates_first(template):
    path = os.path.join(ROOT, template["playbook"])
    assert os.path.isfile(path), template["playbook"]
    first = read_yaml_file(path)[0]
    # site, mig and mps import validate.yml first; the audit role validates every role itself.
    assert first.get("ansible.builtin.import_playbook") == "validate.yml" or playbook_roles(path) == {"audit"}


@pytest.mark.parametrize("template, question", QUESTIONS, ids=QUESTION_IDS)
def test_each_question_is_an_input_of_a_role_the_playbook_runs(template, question):
    runs = playbook_roles(os.path.join(ROOT, template["playbook"]))
    assert any(question["variable"] in ROLES[role].options for role in runs), runs


# AWX question type -> the argument types whose values it sends.
AWX_TYPES = {"text": {"str", "path"}, "integer": {"int"}, "float": {"float"}, "multiplechoice": {"str", "bool"},
             "multiselect": {"list"}}


@pytest.mark.parametrize("template, question", QUESTIONS, ids=QUESTION_IDS)
def test_each_question_type_and_choices_fit_the_argument_spec(template, question):
    option = option_of(question["variable"])
    assert option["type"] in AWX_TYPES[question["type"]]
    if option["type"] == "bool":
        assert sorted(question["choices"]) == ["false", "true"]
    elif question["type"] == "multiplechoice":
        assert set(question["choices"]) == set(option["choices"]) and len(question["choices"]) == len(option["choices"])
    elif question["type"] == "multiselect":
        assert option["elements"] == "str" and set(question["choices"]) == set(option["choices"])
    else:
        assert "choices" not in question and "choices" not in option


@pytest.mark.parametrize("template, question", QUESTIONS, ids=QUESTION_IDS)
def test_each_default_is_a_valid_answer(template, question):
    assert question["question_name"] and question["question_description"]
    assert not re.search(r"\b[A-Z]\(", question["question_description"]), "documentation markup left"
    default = question["default"]
    assert question["required"] is (default != "")
    if question["type"] == "multiplechoice":
        assert default in question["choices"]
    elif question["type"] == "multiselect":
        assert set(default.split("\n")) <= set(question["choices"])
    elif question["type"] == "integer":
        assert isinstance(default, int) and not isinstance(default, bool)
    elif question["type"] == "text":
        assert isinstance(default, str)


@pytest.mark.parametrize("template", TEMPLATES, ids=[template["name"] for template in TEMPLATES])
def test_the_defaults_are_the_profile_values_unless_the_template_gives_its_own(template):
    """Launched with its defaults, a template applies what its profile says, plus its own answers."""
    errors, profile, inputs = check_collection(ROLES, launched(template))
    assert errors == []
    assert profile == (template.get("extra_vars") or {}).get("gpuops_profile", "training")
    own = dict((question["variable"], question["default"]) for question in template["survey"] if "default" in question)
    for role in ROLES.values():
        if role.name == COLLECTION_ROLE:
            continue
        expected = effective_values(role, own, profile)
        for question in template["survey"]:
            if question["variable"] in role.options:
                assert inputs[role.name][question["variable"]] == expected[question["variable"]], question


@pytest.mark.parametrize("template", TEMPLATES, ids=[template["name"] for template in TEMPLATES])
def test_the_answers_are_typed_as_awx_sends_them_and_converted_back(template):
    extra_vars = launched(template)
    typed = check_collection(ROLES, extra_vars)[2]
    for question in SPECS[template["name"]]["spec"]:
        kind = option_of(question["variable"])["type"]
        sent = extra_vars[question["variable"]]
        assert isinstance(sent, {"bool": str, "int": int, "str": str, "path": str, "float": float}[kind])
    # The same answers all as strings ("60", "false"), as -e key=value sends them, convert to the same values.
    as_text = dict((name, value if isinstance(value, (dict, list)) else str(value)) for name, value in extra_vars.items())
    errors, _profile, from_text = check_collection(ROLES, as_text)
    assert errors == [] and from_text == typed


def test_bool_answers_convert_to_bools_and_false_stays_false():
    inputs = check_collection(ROLES, {"audit_fail_on_fail": "false", "thp_khugepaged_defrag": "true", "mps_timeout": "60"})[2]
    assert inputs["audit"]["audit_fail_on_fail"] is False
    assert inputs["thp"]["thp_khugepaged_defrag"] is True
    assert inputs["mps"]["mps_timeout"] == 60


def test_the_audit_is_scheduled_and_fails_on_fail():
    audit = next(template for template in TEMPLATES if template["playbook"] == "playbooks/audit.yml")
    assert audit.get("schedule") is True
    assert launch_extra_vars(audit, SPECS[audit["name"]])["audit_fail_on_fail"] == "true"
    assert [template["name"] for template in TEMPLATES if template.get("schedule")] == [audit["name"]]


@pytest.mark.parametrize("option, expected", [
    ({"type": "str"}, ("text", None)),
    ({"type": "path"}, ("text", None)),
    ({"type": "int"}, ("integer", None)),
    ({"type": "float"}, ("float", None)),
    ({"type": "bool"}, ("multiplechoice", ["true", "false"])),
    ({"type": "str", "choices": ["a", "b"]}, ("multiplechoice", ["a", "b"])),
    ({"type": "list", "elements": "str", "choices": ["a", "b"]}, ("multiselect", ["a", "b"])),
])
def test_question_types(option, expected):
    assert question_type(option) == expected


@pytest.mark.parametrize("option", [{"type": "dict"}, {"type": "raw"}, {"type": "list", "elements": "str"},
                                    {"type": "int", "choices": [1, 2]}])
def test_types_no_question_fits_are_refused(option):
    with pytest.raises(ValueError, match="cannot be a survey question"):
        question_type(option)


def test_the_description_is_the_argument_spec_one_without_markup():
    spec = FILTERS["awx_survey_spec"]({"name": "t", "survey": [{"variable": "memlock_docker_daemon_json", "question": "q"}]})
    assert spec["spec"][0]["question_description"] == (
        "Merge memlock into Docker's default-ulimits in daemon.json; auto does it when Docker is installed or the file exists.")


def test_an_empty_text_default_is_an_optional_question():
    spec = FILTERS["awx_survey_spec"]({"name": "t", "survey": [{"variable": "mps_pinned_mem_limit", "question": "q"}]})
    assert (spec["spec"][0]["type"], spec["spec"][0]["default"], spec["spec"][0]["required"]) == ("text", "", False)


@pytest.mark.parametrize("survey, fragments", [
    ([{"variable": "thp_enabeld", "question": "q"}], ["bad: thp_enabeld", "no role has this input"]),
    ([{"variable": "mig_layouts", "question": "q"}], ["bad: mig_layouts", "a dict cannot be a survey question"]),
    ([{"variable": "thp_enabled", "question": "q", "default": "sometimes"}],
     ["bad: thp_enabled", "sometimes", "always, madvise, never"]),
    ([{"variable": "mps_timeout", "question": "q", "default": "soon"}], ["bad: mps_timeout", "soon"]),
])
def test_a_bad_survey_entry_fails_naming_template_and_variable(survey, fragments):
    with pytest.raises(AnsibleFilterError) as raised:
        FILTERS["awx_survey_spec"]({"name": "bad", "survey": survey})
    for fragment in fragments:
        assert fragment in str(raised.value)


def test_configure_builds_every_template_from_the_data_file():
    play = CONFIGURE[0]
    assert play["hosts"] == "localhost" and play["vars_files"] == ["job_templates.yml"]
    tasks = dict((next(key for key in task if key.startswith("awx.awx.")), task) for task in play["tasks"])
    assert sorted(tasks) == ["awx.awx.execution_environment", "awx.awx.group", "awx.awx.inventory",
                             "awx.awx.job_template", "awx.awx.project", "awx.awx.schedule"]
    job_template = tasks["awx.awx.job_template"]
    assert job_template["loop"] == "{{ gpuops_awx_job_templates }}"
    assert job_template["awx.awx.job_template"]["survey_spec"] == "{{ item | gpuops.hardening.awx_survey_spec }}"
    assert job_template["awx.awx.job_template"]["playbook"] == "{{ item.playbook }}"
    assert tasks["awx.awx.group"]["awx.awx.group"]["name"] == "gpu_nodes"
    assert play["vars"]["gpuops_awx_ee_image"] == "gpuops-hardening-ee:2.0.0"
    assert tasks["awx.awx.project"]["awx.awx.project"]["scm_url"] == "{{ gpuops_awx_scm_url }}"
    assert play["vars"]["gpuops_awx_scm_url"] == "https://github.com/gpuops/hardening"


def test_the_schedule_is_a_valid_rrule():
    rrule = CONFIGURE[0]["vars"]["gpuops_awx_schedule_rrule"]
    start, rule = rrule.split(" ")
    assert start.startswith("DTSTART:") and start.endswith("Z") and rule.startswith("RRULE:FREQ=")


def test_the_readme_table_names_each_template_its_playbook_and_its_questions():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        rows = dict((cells[1].strip(), cells[2:4]) for cells in (line.split("|") for line in handle)
                    if len(cells) > 4 and cells[1].strip() in SPECS)
    assert sorted(rows) == sorted(SPECS)
    for template in TEMPLATES:
        playbook, survey = rows[template["name"]]
        assert "`%s`" % template["playbook"] in playbook
        listed = re.findall(r"`(\w+)`", survey)
        if listed:
            assert listed == [question["variable"] for question in template["survey"]], template["name"]
