# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""container_runtime's engine list has one source, the engine's ENGINES: the role's choices and the rule's
message are held to it."""

from __future__ import annotations

import os

from ansible_collections.gpuops.hardening.plugins.module_utils.container_runtime import ENGINES
from ansible_collections.gpuops.hardening.plugins.plugin_utils.input_rules import container_runtime as rules
from ansible_collections.gpuops.hardening.plugins.plugin_utils.role_inputs import load_roles

ROLES = load_roles(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles"))


def test_the_role_s_engine_choices_are_auto_and_the_engine_s():
    assert ROLES["container_runtime"].options["container_runtime_engines"]["choices"] == ["auto"] + list(ENGINES)


def test_a_bad_engine_list_names_every_engine_the_engine_knows():
    found = rules.errors({"container_runtime_engines": []}, {})
    assert len(found) == 1
    assert all(engine in found[0] for engine in ENGINES), found
