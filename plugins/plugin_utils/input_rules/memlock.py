# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""memlock: the limit's form, the pam_limits domain and the unit names."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.hardening.plugins.module_utils.memlock import parse_limit
from ansible_collections.gpuops.hardening.plugins.module_utils.pam_limits import valid_domain
from ansible_collections.gpuops.hardening.plugins.plugin_utils.input_rules.common import bad

REMOVED = {}

_SERVICE_UNIT = re.compile(r"^[A-Za-z0-9:_.@\\-]+\.service$")


def errors(inputs, profile_entry):  # pylint: disable=unused-argument
    found = []
    if "memlock_limit" in inputs:
        try:
            parse_limit(inputs["memlock_limit"])
        except ValueError as exc:
            found.append("memlock_limit: %s" % exc)
    domain = inputs.get("memlock_limits_domain")
    if isinstance(domain, str) and not valid_domain(domain):
        found.append(bad("memlock_limits_domain", domain,
                         "* (everyone but root), a user name, @group, or a uid/gid range such as 1000: or @1000:2000"))
    units = inputs.get("memlock_service_units")
    if isinstance(units, list) and not all(_SERVICE_UNIT.match(unit) for unit in units):
        found.append(bad("memlock_service_units", units, "a list of service unit names such as docker.service"))
    return found


def resolve(inputs, profile_entry):  # pylint: disable=unused-argument
    resolved = dict(inputs)
    resolved["memlock_limit"] = str(parse_limit(inputs["memlock_limit"]))
    return resolved
