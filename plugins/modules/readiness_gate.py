#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: readiness_gate
short_description: Drain or cordon a GPU node by its readiness verdict, and release only its own hold
version_added: "2.0.0"
description:
  - Reads the node from its scheduler and holds it when O(verdict) is one of O(hold_verdicts), releases the hold
    when the verdict no longer asks for it, and otherwise leaves the node as it is.
  - C(slurm) drains the node with C(scontrol update NodeName=<name> State=DRAIN Reason=<mark>) and resumes it with
    C(State=RESUME), reading it with C(scontrol show node -o <name>) before and after.
  - C(kubernetes) annotates the node with C(gpuops.io/readiness-cordon=<mark>), taints it
    C(gpuops.io/readiness=<verdict>:NoSchedule) and cordons it with kubectl; releasing uncordons it and removes the
    taint and the annotation.
  - The mark starts with C(gpuops:) and names the verdict and the checks behind it. A hold is the module's own only
    when its mark (Slurm's reason, the annotation) starts with C(gpuops:); any other drain, reason or cordon is an
    operator's, and the module never resumes, uncordons or re-marks that node, whatever the verdict (a warning
    says so when the verdict would hold it).
  - An unknown verdict (null, the GPUs' health was not read) leaves the node as it is.
author:
  - gpuops.hardening developers (@gpuops)
options:
  scheduler:
    description: The scheduler whose hold is converged.
    type: str
    choices: [slurm, kubernetes]
    required: true
  node_name:
    description:
      - The node's name in the scheduler.
      - Empty for C(slurm) is the short host name of the host the module runs on; C(kubernetes) needs it.
    type: str
    default: ""
  verdict:
    description: The node's readiness verdict (the audit's C(readiness.verdict)); null leaves the node as it is.
    type: str
  reasons:
    description: "The readiness reasons, each C(<check id>: <reason> (<verdict>)); the mark names their check ids."
    type: list
    elements: str
    default: []
  hold_verdicts:
    description: The verdicts that hold the node; any other releases the module's own hold.
    type: list
    elements: str
    required: true
  kubeconfig:
    description: kubectl's C(--kubeconfig); unset, kubectl finds its own.
    type: path
  timeout:
    description: Seconds each scontrol or kubectl command may run; one that runs longer fails the module, naming it.
    type: int
    default: 60
  timeout_variable:
    description: The variable that sets O(timeout), named in a timeout's message.
    type: str
attributes:
  check_mode:
    description: Reads the node and says what it would run (RV(commands)) and the state it would leave; runs no change.
    support: full
  diff_mode:
    description: The node's hold before and after.
    support: full
notes:
  - It changes the scheduler's view of the node, not the node's files, so it takes no node lock.
  - Run it on a host whose scontrol may update nodes (root on a node of the cluster) or whose kubectl may patch
    nodes; the readiness_gate role runs Slurm's on the node itself and kubectl on its delegate.
requirements:
  - scontrol (Slurm) or kubectl on the host it runs on.
"""

EXAMPLES = r"""
- name: Drain the node while its GPUs need a reset, resume it once they are ready
  gpuops.hardening.readiness_gate:
    scheduler: slurm
    verdict: "{{ ansible_facts.gpuops_audit.readiness.verdict }}"
    reasons: "{{ ansible_facts.gpuops_audit.readiness.reasons }}"
    hold_verdicts: [reset, reboot, replace]
"""

RETURN = r"""
scheduler:
  description: The scheduler.
  returned: always
  type: str
node:
  description: The node's name in the scheduler.
  returned: always
  type: str
  sample: gpu-train-01
verdict:
  description: The verdict acted on, or null.
  returned: always
  type: str
mark:
  description: The mark a hold gets (Slurm's reason, the annotation's value), or null without a verdict.
  returned: always
  type: str
  sample: "gpuops: reset: hardware.gpu0.row_remap_pending"
action:
  description: C(hold), C(update) (the module's own hold, marked anew), C(release) or C(keep).
  returned: always
  type: str
why:
  description: Why, in one line; for C(keep) on an operator's hold, whose it is.
  returned: always
  type: str
commands:
  description: The commands run (in check mode, that would run), without the binary's path.
  returned: always
  type: list
  elements: list
before:
  description: The node's hold before, as one line (C(State=IDLE Reason=(none)), C(cordoned=no taint=(none) ...)).
  returned: always
  type: str
after:
  description: The same line after, read back from the scheduler (in check mode, what it would read).
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import readiness_gate as engine
from ansible_collections.gpuops.hardening.plugins.module_utils.node_host import FeatureFailed, NodeHost


def main():
    module = AnsibleModule(argument_spec=engine.ARGUMENT_SPEC, supports_check_mode=True, **engine.SPEC_RULES)
    host = NodeHost(module)
    try:
        result = engine.converge(module.params, host, module.check_mode)
    except FeatureFailed as failure:
        for warning in host.warnings:
            module.warn(warning)
        module.fail_json(msg=failure.msg, **failure.result)
    for warning in host.warnings:
        module.warn(warning)
    if not module._diff:
        result.pop("diff", None)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
