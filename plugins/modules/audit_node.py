#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: audit_node
short_description: Turn what the node call read in check mode into one node's audit checks
version_added: "0.3.0"
author:
  - gpuops.hardening developers (@gpuops)
description:
  - Runs on the controller and sends nothing to the host. It reads the result of the node's
    M(gpuops.hardening.node) call in check mode (O(node), one result per feature of O(plan), C(slurm_gres) and
    C(kubelet) included on the nodes of their inventory groups) and the C(gpu_topology) fact, and
    gives one verdict per check, C(PASS), C(FAIL), C(WARN) or C(SKIP), with the expected and the actual value and a
    one-line reason.
  - Every knob is judged as it takes effect, live and at the next boot, against what the node's profile and inputs
    expect. A feature or role that failed in check mode turns its role's checks into C(FAIL) with its message.
  - The driver/CUDA preflight checks the driver against the CUDA versions the node must run and each MIG-capable GPU
    against its MIG driver floor.
  - The C(gpuops.hardening.audit) role calls it; the document's schema is in the collection's C(docs/audit.md).
options:
  inputs:
    description: Every role's resolved inputs, as C(gpuops.hardening.validate_inputs) returns them without a role.
    type: dict
    required: true
  node:
    description: The result of the node's M(gpuops.hardening.node) call in check mode with C(keep_going).
    type: dict
    default: {}
  plan:
    description: The features of that call (C(gpuops.hardening.validate_inputs)' C(plan)), which name each feature's role.
    type: list
    elements: dict
    default: []
  role_errors:
    description: Role name to the message of the role's failure in check mode, for a role or call that failed as a whole.
    type: dict
    default: {}
  cuda_versions:
    description: The CUDA versions the node must run, such as C(12.4) or C(13.0).
    type: list
    elements: str
    default: []
  gpu_models:
    description:
      - The operator's per-model expectations for the hardware checks, over the shipped ones, by product name
        (the audit role's C(audit_gpu_models), validated there).
    type: dict
    default: {}
extends_documentation_fragment:
  - gpuops.hardening.controller
"""

EXAMPLES = r"""
- name: Judge what the roles read
  gpuops.hardening.audit_node:
    inputs: "{{ __audit_validation.roles }}"
    node: "{{ __audit_node }}"
    plan: "{{ __audit_validation.plan }}"
    role_errors: "{{ __audit_role_errors | default({}) }}"
    cuda_versions: ["12.4"]
"""

RETURN = r"""
ansible_facts:
  description: The node's audit document as C(gpuops_audit).
  returned: always
  type: complex
  contains:
    gpuops_audit:
      description: C(schema_version), C(node), C(profile), C(error), C(readiness), C(summary), C(checks), C(driver), C(topology).
      type: dict
      returned: always
      sample:
        schema_version: 1
        node: gpu-train
        profile: training
        error: null
        summary: {PASS: 40, FAIL: 1, WARN: 9, SKIP: 2}
        checks:
          - id: sysctl.boot.vm.swappiness
            area: sysctl
            title: vm.swappiness, at boot
            verdict: FAIL
            expected: "0"
            actual: 10 from /etc/sysctl.d/99-local.conf line 1
            reason: /etc/sysctl.d/99-local.conf line 1 sets 10, which overrides 0 at boot
summary:
  description: How many checks gave each verdict.
  returned: always
  type: dict
  sample: {PASS: 40, FAIL: 1, WARN: 9, SKIP: 2}
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec=dict(inputs=dict(type="dict", required=True), node=dict(type="dict", default={}),
                                              plan=dict(type="list", elements="dict", default=[]),
                                              role_errors=dict(type="dict", default={}),
                                              cuda_versions=dict(type="list", elements="str", default=[]),
                                              gpu_models=dict(type="dict", default={})),
                           supports_check_mode=True)
    module.fail_json(msg="gpuops.hardening.audit_node runs on the controller as an action plugin; call it as a task.")


if __name__ == "__main__":
    main()
