# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's play of every node role lists them as node_plan.NODE_ROLES does, so that it and site.yml compare alike."""

from __future__ import annotations

import os

from ansible_collections.gpuops.hardening.plugins.plugin_utils.node_plan import NODE_ROLES
from ansible_collections.gpuops.hardening.plugins.plugin_utils.role_inputs import read_yaml_file

PLAY = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "molecule", "default", "plays", "every_role.yml")


def test_the_play_lists_every_node_role_in_order():
    (play,) = read_yaml_file(PLAY)
    assert [entry["role"] for entry in play["roles"]] == ["gpuops.hardening.%s" % role for role in NODE_ROLES]
