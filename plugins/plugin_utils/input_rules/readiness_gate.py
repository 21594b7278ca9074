# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""readiness_gate: verdicts from the audit's READINESS (all but ready), node names each scheduler takes, an
absolute kubeconfig, a kubectl host and a timeout in the collection's range."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_hardware_checks import READINESS
from ansible_collections.gpuops.hardening.plugins.plugin_utils.input_rules.common import bad, seconds_errors, unchanged

REMOVED = {}

# Every verdict but the one that means the node may take work.
DRAIN_CHOICES = tuple(verdict for verdict in READINESS if verdict != "ready")
# A node name is one word of scontrol's NodeName=, which a comma would make a list.
SLURM_NAME = re.compile(r"^[^\s,=]+$")
# A Node object's name is a DNS subdomain (Kubernetes, "Object Names and IDs": RFC 1123).
KUBERNETES_NAME = re.compile(r"^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _verdict_errors(verdicts):
    found = []
    if not isinstance(verdicts, list):
        return found
    for verdict in verdicts:
        if verdict not in DRAIN_CHOICES:
            found.append(bad("readiness_gate_drain_verdicts", verdict, "readiness verdicts of the audit but ready: %s"
                             % ", ".join(DRAIN_CHOICES)))
    return found


def errors(inputs, profile_entry):  # pylint: disable=unused-argument
    found = _verdict_errors(inputs.get("readiness_gate_drain_verdicts"))
    slurm_name = inputs.get("readiness_gate_slurm_node_name")
    if isinstance(slurm_name, str) and slurm_name and not SLURM_NAME.match(slurm_name):
        found.append(bad("readiness_gate_slurm_node_name", slurm_name,
                         "one Slurm node name (no spaces, ',' or '='), or empty for the short host name"))
    kube_name = inputs.get("readiness_gate_kubernetes_node_name")
    if isinstance(kube_name, str) and kube_name and not KUBERNETES_NAME.match(kube_name):
        found.append(bad("readiness_gate_kubernetes_node_name", kube_name,
                         "a Kubernetes node name (lower-case letters, digits, '-' and '.'), or empty for the inventory name"))
    kubeconfig = inputs.get("readiness_gate_kubeconfig")
    if isinstance(kubeconfig, str) and kubeconfig and not kubeconfig.startswith("/"):
        found.append(bad("readiness_gate_kubeconfig", kubeconfig, "an absolute path, or empty for kubectl's own"))
    delegate = inputs.get("readiness_gate_kubectl_delegate_to")
    if isinstance(delegate, str) and not delegate.strip():
        found.append(bad("readiness_gate_kubectl_delegate_to", delegate, "the inventory name of the host that runs kubectl"))
    found.extend(seconds_errors(inputs, "readiness_gate_timeout"))
    return found


resolve = unchanged
