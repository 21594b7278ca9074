# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""readiness_gate's inputs: the verdicts come from the audit's READINESS, every bad value is named with what is
allowed, and the defaults pass."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import readiness_gate as engine
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_hardware_checks import READINESS
from ansible_collections.gpuops.hardening.plugins.plugin_utils.input_rules import readiness_gate as rules
from ansible_collections.gpuops.hardening.plugins.plugin_utils.role_inputs import check_collection, load_roles

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..")
ROLES = load_roles(os.path.join(ROOT, "roles"))


def _errors(given):
    return "; ".join(check_collection(ROLES, given)[0])


def test_the_verdicts_that_drain_are_the_audits_but_ready():
    assert rules.DRAIN_CHOICES == tuple(verdict for verdict in READINESS if verdict != "ready")
    # The spec keeps no second list: the rule is the one place.
    assert "choices" not in ROLES["readiness_gate"].options["readiness_gate_drain_verdicts"]
    assert set(ROLES["readiness_gate"].defaults["readiness_gate_drain_verdicts"]) <= set(rules.DRAIN_CHOICES)


def test_the_defaults_pass_and_drain_on_reset_reboot_and_replace():
    errors, _profile, inputs = check_collection(ROLES, {})
    assert errors == []
    assert inputs["readiness_gate"]["readiness_gate_drain_verdicts"] == ["reset", "reboot", "replace"]


def test_degraded_is_an_opt_in():
    errors, _profile, inputs = check_collection(ROLES, {"readiness_gate_drain_verdicts": ["degraded", "reset"]})
    assert errors == [] and inputs["readiness_gate"]["readiness_gate_drain_verdicts"] == ["degraded", "reset"]


@pytest.mark.parametrize("given, fragments", [
    ({"readiness_gate_drain_verdicts": ["ready"]},
     ['readiness_gate role: readiness_gate_drain_verdicts: got "ready"', "degraded, reset, reboot, replace"]),
    ({"readiness_gate_drain_verdicts": ["broken"]}, ['readiness_gate_drain_verdicts: got "broken"']),
    ({"readiness_gate_slurm_node_name": "gpu-1,gpu-2"}, ['readiness_gate_slurm_node_name: got "gpu-1,gpu-2"', "one Slurm node name"]),
    ({"readiness_gate_kubernetes_node_name": "GPU_7"}, ['readiness_gate_kubernetes_node_name: got "GPU_7"', "a Kubernetes node name"]),
    ({"readiness_gate_kubeconfig": "admin.conf"}, ['readiness_gate_kubeconfig: got "admin.conf"', "an absolute path"]),
    ({"readiness_gate_kubectl_delegate_to": " "}, ["readiness_gate_kubectl_delegate_to: got \" \""]),
    ({"readiness_gate_timeout": 0}, ["readiness_gate_timeout: got 0", "from 1 to 600"]),
])
def test_bad_inputs_name_the_variable_the_value_and_what_is_allowed(given, fragments):
    message = _errors(given)
    for fragment in fragments:
        assert fragment in message, message


def test_the_role_and_the_module_say_the_same_taint_and_mark():
    with open(os.path.join(ROOT, "roles", "readiness_gate", "meta", "argument_specs.yml"), encoding="utf-8") as handle:
        text = handle.read()
    assert "%s=<verdict>:%s" % (engine.TAINT_KEY, engine.TAINT_EFFECT) in text and '"gpuops:"' in text
