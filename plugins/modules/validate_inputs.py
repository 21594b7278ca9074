#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: validate_inputs
short_description: Check every gpuops.hardening role's inputs set for a host, before anything changes
version_added: "0.2.0"
author:
  - gpuops.hardening developers (@gpuops)
description:
  - Runs on the controller and sends nothing to the host. It checks the value of every input of every role in the
    collection that is set for the host (inventory, play vars, extra vars, role vars in scope), so that the first of
    the collection's roles in a play stops the play before any role has changed the node.
  - Types and choices come from each role's C(meta/argument_specs.yml), default values from C(defaults/main.yml),
    profile values from C(__<role>_profiles) in C(vars/main.yml), and ranges and rules across inputs from the
    collection's C(plugin_utils/input_rules). C(gpuops_profile) picks the profile; the C(validate) role's files
    hold its choices and default.
  - Every message names the variable, the value it got and what is allowed.
  - Each role of the collection calls it first, and the C(gpuops.hardening.validate) role calls it for all roles.
options:
  role:
    description:
      - The role whose resolved inputs are returned in RV(inputs). Every role is validated either way.
      - When omitted, RV(roles) holds every role's inputs.
      - The C(audit) role only reads; it fails unless the task runs in check mode.
    type: str
  all_roles:
    description: Return RV(roles) as well when O(role) is given.
    type: bool
    default: false
extends_documentation_fragment:
  - gpuops.hardening.controller
notes:
  - "Variables set inline on a later role's entry in a play (its C(vars) in the play's C(roles) list) are not visible
    while an earlier role runs, so they are checked when that role starts. Put such values in inventory, play
    vars or extra vars, or list C(gpuops.hardening.validate) first with the same vars, to have them checked before
    the first change."
"""

EXAMPLES = r"""
- name: Validate every gpuops.hardening input before the first change
  gpuops.hardening.validate_inputs:
    role: thp
  register: __thp_validation

- name: Use the resolved, type-converted values
  ansible.builtin.debug:
    msg: "THP enabled will be {{ __thp_validation.inputs.thp_enabled }}"
"""

RETURN = r"""
profile:
  description: The collection-wide profile in force for the host, or null when C(gpuops_profile) is invalid.
  returned: always
  type: str
  sample: training
inputs:
  description:
    - Every input of O(role), resolved (host value, else the profile's, else the default) and converted to its type,
      plus C(gpuops_profile). Role-specific resolution applies, for example the sysctl role's C(sysctl_settings)
      holds the profile's settings with the user's merged over them.
  returned: when O(role) is given
  type: dict
  sample: {thp_enabled: always, thp_defrag: defer+madvise, thp_khugepaged_defrag: true, gpuops_profile: training}
roles:
  description: The same as RV(inputs), for every role, by role name.
  returned: when O(role) is not given, or O(all_roles) is true
  type: dict
plan:
  description:
    - The host's plan for one M(gpuops.hardening.node) call, built from the resolved inputs
      (C(plugins/plugin_utils/node_plan.py)), in the tuning guide's order. Each feature has C(name), C(role),
      C(tags), C(engine) and C(args).
    - Without O(role) (and with O(role=audit)), the whole node's plan, every node role's features, then those of
      C(slurm_gres) when the host is in the inventory group C(slurm_nodes) and of C(kubelet_topology) when it is in
      C(kubernetes_nodes). With another O(role), that role's own (C(slurm_gres)'s with the memlock feature that
      gives slurmd its limit).
  returned: when every input is valid, without O(role) or with O(role) audit or a role the node call runs
  type: list
  elements: dict
  sample: [{name: thp, role: thp, tags: [thp, thp_apply], engine: thp, args: {enabled: always}}]
errors:
  description: One message per invalid input.
  returned: when an input is invalid
  type: list
  elements: str
  sample: ['thp role: value of thp_defrag must be one of: always, defer, defer+madvise, madvise, never, got: sometimes']
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec=dict(role=dict(type="str"), all_roles=dict(type="bool", default=False)), supports_check_mode=True)
    module.fail_json(msg="gpuops.hardening.validate_inputs runs on the controller as an action plugin; "
                         "call it as a task, not as a module on the host.")


if __name__ == "__main__":
    main()
