#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: node
short_description: Converge a node's features in one call, in order, under one node lock
version_added: "2.0.0"
description:
  - Runs the feature engines a plan names (the same code as the modules C(sysctl_settings), C(swap_off), C(thp),
    C(memlock), C(persistenced), C(fabricmanager), C(nvidia_mig), C(installed_files), C(mps), C(container_runtime),
    C(gpu_numa_facts), C(slurm_gres) and C(kubelet_config), and C(mig_boot) and C(container_facts)) one after
    another in one process on the node, in the order of O(features), under one node lock.
  - C(container_facts) has no module of its own; it is the audit's read-only look at the container runtimes, and
    only the audit's plan names it.
  - C(mig_boot) has no module of its own; it puts in place the service that creates the MIG layout again at boot,
    recording the layout that the C(nvidia_mig) feature named by its C(layout_feature) resolved earlier in the same
    call. Its options are in C(plugins/module_utils/engines/mig_boot.py); the mig role sets them.
  - Every feature's arguments are checked against its module's options before anything runs, so a bad one fails
    the call before the first change, naming the feature and the option.
  - Outside check mode, the C(fabricmanager), C(nvidia_mig) and C(kubelet_config) features and the C(mps) features
    with C(state=present) in their arguments first run in check mode against the node as it is. A Fabric Manager at
    another version than the driver's, missing or masked, a layout a GPU cannot take, GPU sets on unknown GPUs or
    GPUs in MIG mode, a missing client account, running work in the way or kubelet settings the node's CPUs and NUMA
    nodes cannot hold fail the call there, naming the feature, before any feature changes the node.
  - A C(slurm_gres) feature without C(gpus) describes the GPUs of the C(gpu_numa_facts) feature its
    C(topology_feature) names, when that ran earlier in the same call, else reads them itself.
  - The first feature that fails stops the call; the result names it (RV(failed_feature)) and the features after it
    do not run, unless O(keep_going) is set.
  - Every feature reads the node when it runs, so each sees what the features before it changed (a MIG layout,
    say). Nothing is kept between calls. Within the call, a feature's first nvidia-smi reads may be answered by
    the same reads made earlier in the call while no command, file write or feature has changed the node since;
    polls after a change always run nvidia-smi.
  - A call outside check mode in which no feature failed ends by setting the modification time of
    C(/var/lib/gpuops-hardening/last-converge) (a file of fixed content) to now; the audit's metrics report it as
    the time of the last converge. This bookkeeping does not make the call changed.
  - Supports check mode, diff mode and C(async), for changes that outlast an SSH or AWX idle limit (a MIG change,
    a swapoff).
author:
  - gpuops.hardening developers (@gpuops)
extends_documentation_fragment:
  - gpuops.hardening.host.lock
options:
  root:
    description:
      - The directory the host's file system is read and written under, for every feature.
      - Tests point it at a prepared tree; on a real host leave it at C(/).
    type: path
    default: /
  keep_going:
    description:
      - Run every feature even when one fails, each failure kept in its own result and listed in
        RV(failed_features); the call itself does not fail. For reading a node in check mode (the audit); a
        converge stops at the first failure.
    type: bool
    default: false
  timings:
    description:
      - Also return RV(timings), each feature's seconds in this call, and RV(nvidia_smi_reads_shared) (the
        collection's benchmark reads them).
    type: bool
    default: false
  features:
    description:
      - The plan, in the order the features run. A feature's arguments are those of the module of the same name as
        its O(features[].engine), without O(root) and O(lock_timeout), which the call sets once.
      - The action plugin reads and renders, on the controller, the C(src) and C(template) files of an
        C(installed_files) feature, as the C(installed_files) module's own action plugin does.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: The feature's name in the result (RV(features)); unique within the plan.
        type: str
        required: true
      engine:
        description: The module whose work this feature does.
        type: str
        required: true
        choices: [sysctl_settings, swap_off, thp, memlock, persistenced, fabricmanager, nvidia_mig, mig_boot,
                  installed_files, mps, container_runtime, gpu_numa_facts, slurm_gres, kubelet_config, container_facts]
      args:
        description: The module's arguments.
        type: dict
        default: {}
      role:
        description: The role the feature belongs to (the plan gpuops.hardening.validate_inputs builds); not sent to the node.
        type: str
      tags:
        description:
          - The feature runs only when the play's tags select one of these (C(--tags), C(--skip-tags)), as a task
            with these tags would. The action plugin filters on the controller; unset, the feature always runs.
        type: list
        elements: str
"""

EXAMPLES = r"""
- name: Converge the kernel's VM settings and THP in one call
  gpuops.hardening.node:
    features:
      - name: sysctl
        engine: sysctl_settings
        args:
          settings:
            vm.swappiness: 0
      - name: thp
        engine: thp
        args:
          enabled: always
          defrag: defer+madvise
  register: node_state
"""

RETURN = r"""
features:
  description:
    - Each feature's result by its name, as its module returns it (without C(diff)), in the order they ran. A
      feature that failed has C(failed) and C(msg); the features after it are missing.
  returned: always
  type: dict
  sample: {"thp": {"changed": false, "live_applied": true}}
failed_feature:
  description: The name of the feature that failed, or null.
  returned: always
  type: str
failed_features:
  description: The features that failed, in plan order; with O(keep_going), more than one.
  returned: always
  type: list
  elements: str
handlers:
  description:
    - What the play does after the call, in plan order, each naming its C(feature) and C(action)
      (C(daemon_reexec), C(daemon_reload), C(restart) with C(unit), C(install) with C(packages), C(reboot) with
      C(msg)). The collection's playbooks and roles run them (C(roles/validate/tasks/handlers.yml)).
  returned: always
  type: list
  elements: dict
  sample: [{"feature": "memlock", "action": "daemon_reexec"}]
timings:
  description: Each feature's seconds in this call, by name.
  returned: when O(timings) is set
  type: dict
  sample: {"sysctl_settings": 0.012, "thp": 0.004}
nvidia_smi_reads_shared:
  description: How many nvidia-smi reads of the features were answered by the same read made earlier in the call.
  returned: when O(timings) is set
  type: int
  sample: 6
ansible_facts:
  description: The facts the features set, for example C(gpu_topology) from a C(gpu_numa_facts) feature.
  returned: when a feature sets facts
  type: dict
legacy_record_removed:
  description: The path of gpuops.hardening 1.x's replay record, removed by this call (would be, in check mode).
  returned: when the node had one
  type: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils import converge_stamp
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import LOCK_TIMEOUT
from ansible_collections.gpuops.hardening.plugins.module_utils.node_call import ENGINES, PlanError, checked_plan, converge_node
from ansible_collections.gpuops.hardening.plugins.module_utils.run_lock import hold_node_lock


def main():
    module = AnsibleModule(
        argument_spec=dict(
            root=dict(type="path", default="/"),
            lock_timeout=dict(type="int", default=LOCK_TIMEOUT),
            keep_going=dict(type="bool", default=False),
            timings=dict(type="bool", default=False),
            features=dict(type="list", elements="dict", required=True, options=dict(
                name=dict(type="str", required=True),
                engine=dict(type="str", required=True, choices=list(ENGINES)),
                args=dict(type="dict", default={}),
                role=dict(type="str"),
                tags=dict(type="list", elements="str"),
            )),
        ),
        supports_check_mode=True,
    )
    try:
        plan = checked_plan(module.params["features"], module.params["root"], module.params["lock_timeout"])
    except PlanError as error:
        module.fail_json(msg=str(error), changed=False)
    hold_node_lock(module, "gpuops.hardening.node")
    result, warnings = converge_node(module, plan, keep_going=module.params["keep_going"],
                                     timings=module.params["timings"])
    if not module.check_mode and not result["failed_features"]:
        try:
            converge_stamp.record(module.params["root"])
        except OSError as error:
            warnings.append("the time of this converge was not recorded in %s: %s" % (converge_stamp.STAMP_PATH, error))
    for warning in warnings:
        module.warn(warning)
    if not module._diff:
        result.pop("diff")
    if result.get("failed"):
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
