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
    C(memlock), C(persistenced), C(nvidia_mig), C(installed_files), C(mps) and C(gpu_numa_facts)) one after another
    in one process on the node, in the order of O(features), under one node lock.
  - Every feature's arguments are checked against its module's options before anything runs, so a bad one fails
    the call before the first change, naming the feature and the option.
  - The first feature that fails stops the call; the result names it (RV(failed_feature)) and the features after it
    do not run.
  - Every feature reads the node when it runs, so each sees what the features before it changed (a MIG layout,
    say). Nothing is kept between calls.
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
        choices: [sysctl_settings, swap_off, thp, memlock, persistenced, nvidia_mig, installed_files, mps, gpu_numa_facts]
      args:
        description: The module's arguments.
        type: dict
        default: {}
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
handlers:
  description:
    - What the caller must do after the call, by feature, as the roles' handlers do, for example memlock's
      re-exec of systemd or a restart of C(slurmd.service); each item has C(action) and, for a restart, C(unit).
  returned: always
  type: dict
  sample: {"memlock": [{"action": "daemon_reexec"}]}
legacy_record_removed:
  description: The path of gpuops.hardening 1.x's replay record, removed by this call (would be, in check mode).
  returned: when the node had one
  type: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import LOCK_TIMEOUT
from ansible_collections.gpuops.hardening.plugins.module_utils.node_call import ENGINES, PlanError, checked_plan, converge_node
from ansible_collections.gpuops.hardening.plugins.module_utils.run_lock import hold_node_lock


def main():
    module = AnsibleModule(
        argument_spec=dict(
            root=dict(type="path", default="/"),
            lock_timeout=dict(type="int", default=LOCK_TIMEOUT),
            features=dict(type="list", elements="dict", required=True, options=dict(
                name=dict(type="str", required=True),
                engine=dict(type="str", required=True, choices=list(ENGINES)),
                args=dict(type="dict", default={}),
            )),
        ),
        supports_check_mode=True,
    )
    try:
        plan = checked_plan(module.params["features"], module.params["root"], module.params["lock_timeout"])
    except PlanError as error:
        module.fail_json(msg=str(error), changed=False)
    hold_node_lock(module, "gpuops.hardening.node")
    result, warnings = converge_node(module, plan)
    for warning in warnings:
        module.warn(warning)
    if not module._diff:
        result.pop("diff")
    if result.get("failed"):
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
