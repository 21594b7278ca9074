# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: awx_survey_spec
author: gpuops.hardening developers
version_added: 1.0.0
short_description: AWX survey spec of a job template, from the roles' argument specs
description:
  - Turns one job template of C(playbooks/awx/job_templates.yml) into the O(awx.awx.job_template#module:survey_spec)
    AWX expects.
  - Each question names a role variable. Its AWX type and choices come from that role's C(meta/argument_specs.yml)
    (V(text) for a string or path, V(integer), V(float), V(multiplechoice) for a string with choices,
    V(multiselect) for a list with element choices); AWX has no bool question, so a bool is a V(multiplechoice)
    of V(true) and V(false).
  - Its default is the template's own where it gives one, else the value the role takes under the template's
    C(gpuops_profile) (or the collection's default profile).
  - A variable no role has, a type no question fits and a default the role refuses fail with a message naming
    the template and the variable.
positional: _input
options:
  _input:
    description: A job template, with C(name), C(description), C(extra_vars) and C(survey), a list of
      C(variable), C(question) and optionally C(default).
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Create a job template with its survey
  awx.awx.job_template:
    name: "{{ item.name }}"
    playbook: "{{ item.playbook }}"
    survey_enabled: true
    survey_spec: "{{ item | gpuops.hardening.awx_survey_spec }}"
  loop: "{{ gpuops_awx_job_templates }}"
'''

RETURN = r'''
_value:
  description: The survey spec, with C(name), C(description) and C(spec), one question per survey entry.
  type: dict
'''

import os

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.hardening.plugins.plugin_utils import awx_survey
from ansible_collections.gpuops.hardening.plugins.plugin_utils.role_inputs import load_roles

ROLES_DIR = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "roles"))


def awx_survey_spec(template):
    """A job template of playbooks/awx/job_templates.yml -> its AWX survey_spec."""
    try:
        return awx_survey.survey_spec(template, load_roles(ROLES_DIR))
    except (KeyError, ValueError) as error:
        raise AnsibleFilterError("awx_survey_spec: %s" % error) from error


class FilterModule:
    """AWX surveys from the roles' argument specs."""

    def filters(self):
        return {"awx_survey_spec": awx_survey_spec}
