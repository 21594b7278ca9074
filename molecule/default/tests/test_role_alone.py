# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles used one by one in a user's own play and site.yml leave the same node state: on a node site.yml
converged, the roles alone find nothing to change, and site.yml finds nothing to change after the roles alone. No
role gathers facts."""

from __future__ import annotations

import os
import re

import pytest
from lab_playbook import run_playbook

testinfra_hosts = ["gpu-train", "gpu-infer", "gpu-mig"]

PLAYS = os.path.join("molecule", "default", "plays")
# The node roles in site.yml's order (plugins/plugin_utils/node_plan.py NODE_ROLES, which a unit test holds it to).
EVERY_ROLE = os.path.join(PLAYS, "every_role.yml")


def _changed(output, hostname):
    found = re.search(r"^%s\s*:\s*ok=\d+\s+changed=(\d+)\s" % re.escape(hostname), output, re.M)
    assert found, output[-4000:]
    return int(found.group(1))


@pytest.mark.parametrize("play", ["sysctl_alone.yml", "memlock_alone.yml", "every_role.yml"])
def test_the_roles_alone_find_nothing_to_change_on_a_node_site_yml_converged(host, play):
    hostname = host.backend.get_hostname()
    rc, output = run_playbook(os.path.join(PLAYS, play), hostname, flags=("--check",))
    assert rc == 0, output[-4000:]
    assert _changed(output, hostname) == 0, output[-4000:]
    assert "[WARNING]: file" not in output, output
    assert "TASK [Gathering Facts]" not in output and "ansible.builtin.setup" not in output, output


def test_site_yml_finds_nothing_to_change_after_the_roles_alone(host):
    hostname = host.backend.get_hostname()
    rc, output = run_playbook(EVERY_ROLE, hostname)
    assert rc == 0, output[-4000:]
    assert _changed(output, hostname) == 0, output[-4000:]
    rc, output = run_playbook("playbooks/site.yml", hostname, flags=("--check",))
    assert rc == 0 and _changed(output, hostname) == 0, output[-4000:]
