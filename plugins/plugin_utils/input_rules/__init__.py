# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ranges and rules across inputs, one module per role.

Each module offers:
  REMOVED   {variable: what to set instead}, for inputs an earlier release had;
  errors(inputs, profile_entry)  one message per broken rule, naming the
            variable, the value it got and what is allowed;
  resolve(inputs, profile_entry)        the inputs the role's tasks use, once all rules pass.
Types and choices are not checked here: meta/argument_specs.yml holds them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.plugin_utils.input_rules import (
    audit,
    baseline,
    container_runtime,
    fabricmanager,
    kubelet_topology,
    memlock,
    mig,
    mps,
    numa_binding,
    persistenced,
    readiness_gate,
    slurm_gres,
    sysctl,
    thp,
)

RULES = {
    "audit": audit,
    "baseline": baseline,
    "container_runtime": container_runtime,
    "fabricmanager": fabricmanager,
    "kubelet_topology": kubelet_topology,
    "memlock": memlock,
    "mig": mig,
    "mps": mps,
    "numa_binding": numa_binding,
    "persistenced": persistenced,
    "readiness_gate": readiness_gate,
    "slurm_gres": slurm_gres,
    "sysctl": sysctl,
    "thp": thp,
}
