# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter awx_survey_spec; its documentation is in awx_survey_spec.yml beside this one."""

from __future__ import annotations

import os

import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.hardening.plugins.plugin_utils import awx_survey
from ansible_collections.gpuops.hardening.plugins.plugin_utils.role_inputs import load_roles

ROLES_DIR = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "roles"))


def _read_yaml(path):
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def awx_survey_spec(template):
    """A job template of playbooks/awx/job_templates.yml -> its AWX survey_spec."""
    try:
        return awx_survey.survey_spec(template, load_roles(ROLES_DIR, _read_yaml))
    except (KeyError, ValueError) as error:
        raise AnsibleFilterError("awx_survey_spec: %s" % error) from error


class FilterModule:
    """AWX surveys from the roles' argument specs."""

    def filters(self):
        return {"awx_survey_spec": awx_survey_spec}
