# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The memlock role's templates render to files the module's parsers read back as meant."""

from __future__ import annotations

import os

import jinja2
import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import memlock
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import last_setting

ROLE_TEMPLATES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "memlock", "templates")


def _render(name, **variables):
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(ROLE_TEMPLATES), keep_trailing_newline=True, trim_blocks=True)
    env.filters["comment"] = lambda text: "#\n# %s\n#" % text
    return env.get_template(name).render(ansible_managed="Ansible managed", **variables)


@pytest.mark.parametrize("domain, with_root, expected_domains", [
    ("*", True, ["*", "root"]),
    ("@gpu", True, ["@gpu", "root"]),
    ("*", False, ["*"]),
    ("root", True, ["root"]),
])
def test_role_limits_template_parses_back(domain, with_root, expected_domains):
    text = _render("limits.conf.j2", memlock_limits_domain=domain, memlock_limits_root=with_root, memlock_limit=65536)
    assert memlock.limits_domains(text) == expected_domains
    found = memlock.effective_login_limits([("f", text)], expected_domains)
    assert all(values["soft"] == values["hard"] == 65536 for values in found.values())


def test_role_systemd_templates_set_the_limit():
    manager = _render("system.conf.d-memlock.conf.j2", __memlock_systemd_value="infinity")
    service = _render("service-memlock.conf.j2", __memlock_systemd_value="65536K")
    assert last_setting(manager, "Manager", "DefaultLimitMEMLOCK") == "infinity"
    assert last_setting(service, "Service", "LimitMEMLOCK") == "65536K"
