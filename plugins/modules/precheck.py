#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: precheck
short_description: Check every feature call this node last converged with, in one call
version_added: "1.1.0"
description:
  - The feature modules (O(modules)) record, on the node, the arguments of each call that ended without failure
    outside check mode, in C(/var/lib/gpuops-hardening/converged-calls.json), one record per use of a module; the
    next call of the same use replaces it.
  - This module runs every recorded call again, in check mode, in its own process, and returns what each would do.
    It reads only, in either mode, and holds the node lock while it reads (as a module that changes the node
    does), so that it never sees another run's change half made.
  - Register its result as C(gpuops_precheck) before the collection's roles run (C(playbooks/site.yml) does, in
    its first play). A later call of a feature module on the host, in the same play or a later one of the run, with
    exactly the recorded arguments, is then answered from that check when it would change nothing, by the module's
    action plugin on the controller, with no call on the node.
  - The answer stands only until a gpuops.hardening module changes the node or fails; from then on every call is
    made on the node, as without this module.
  - A node with no record (a fresh node, or one whose record was removed) gets an empty RV(features); every call is
    then made on the node.
author:
  - gpuops.hardening developers (@gpuops)
extends_documentation_fragment:
  - gpuops.hardening.host
  - gpuops.hardening.host.lock
options:
  modules:
    description: The feature modules whose recorded calls are checked; calls of the others are left out.
    type: list
    elements: str
    choices: [gpu_numa_facts, installed_files, memlock, mps, nvidia_mig, persistenced, swap_off, sysctl_settings, thp]
    default: [gpu_numa_facts, installed_files, memlock, mps, nvidia_mig, persistenced, swap_off, sysctl_settings, thp]
  gather_subset:
    description:
      - Also gather the host's facts of these subsets, as C(ansible.builtin.setup) does with the same value, from
        Ansible's own fact collectors, and return them as RV(ansible_facts).
      - The plays after it then need no fact gathering of their own; C(playbooks/site.yml) passes V(min) and gathers
        nothing else on its GPU nodes.
      - Empty gathers none.
    type: list
    elements: str
    default: []
  fact_path:
    description:
      - Where the local facts (C(ansible_local)) are read from, with O(gather_subset); the option of
        C(ansible.builtin.setup) of the same name.
    type: path
    default: /etc/ansible/facts.d
attributes:
  check_mode:
    description: Reads the same way in both modes; it never changes anything.
    support: full
  diff_mode:
    description: Returns no diff; it never changes anything.
    support: none
notes:
  - The O(timeout) option is accepted for the shared options' sake; each recorded call runs with its own timeout.
  - What a recorded call reads (files, live values, C(systemctl) and C(nvidia-smi)) is read once here, instead of
    once per call. With O(gather_subset), as C(site.yml) sets it, a no-op run of C(site.yml) makes this one call
    on each GPU node.
  - An C(nvidia-smi) query that several recorded calls make (C(-q -x), by C(gpu_numa_facts) and C(nvidia_mig)) is
    asked once, since the calls run in check mode and nothing changes between them.
  - A record stays until the same use of its module is called again; one that no role calls any more (the
    C(nvidia_mig) call of a node whose role now has C(mig_state=absent)) is still checked, which costs its reads
    and nothing else.
"""

EXAMPLES = r"""
- name: Check every feature converged on this node before, in one call
  gpuops.hardening.precheck:
  register: gpuops_precheck

- name: The same, and the facts a play would gather with gather_subset min
  gpuops.hardening.precheck:
    gather_subset: [min]
  register: gpuops_precheck
"""

RETURN = r"""
token:
  description: A new value each call. A changed or failed feature call sets the fact C(gpuops_precheck_stale) to it.
  returned: always
  type: str
  sample: 5b0e5e8c1f0f4f0c9d7e0d3c7a9b8e11
features:
  description: One item per recorded call of O(modules).
  returned: always
  type: list
  elements: dict
  contains:
    module:
      description: The feature module's name.
      type: str
      sample: thp
    args:
      description: The arguments the call was recorded with.
      type: dict
      sample: {enabled: always, defrag: defer+madvise, persist: true}
    use:
      description: The record's key; a module with several uses has the paths it manages in it.
      type: str
      sample: thp
    result:
      description: The call's result in check mode; C(changed) true when it would change the node.
      type: dict
      sample: {changed: false, failed: false, warnings: []}
ansible_facts:
  description: The facts of O(gather_subset), named as C(ansible.builtin.setup) names them; none when it is empty.
  returned: when O(gather_subset) is not empty
  type: dict
  sample: {ansible_os_family: Debian, ansible_distribution: Ubuntu, ansible_service_mgr: systemd}
in_sync:
  description: The modules of RV(features) whose check would change nothing.
  returned: always
  type: list
  elements: str
  sample: [memlock, swap_off, sysctl_settings, thp]
"""

import uuid

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec
from ansible_collections.gpuops.hardening.plugins.module_utils.precheck import FEATURES, check_recorded
from ansible_collections.gpuops.hardening.plugins.module_utils.run_lock import hold_node_lock
from ansible_collections.gpuops.hardening.plugins.module_utils.setup_facts import gather


def main():
    argument_spec = host_argument_spec()
    argument_spec.update(
        modules=dict(type="list", elements="str", choices=sorted(FEATURES), default=sorted(FEATURES)),
        gather_subset=dict(type="list", elements="str", default=[]),
        fact_path=dict(type="path", default="/etc/ansible/facts.d"),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    hold_node_lock(module, "gpuops.hardening.precheck", in_check_mode=True)
    # Facts first, as a process of their own would see the host: the checks below run modules in this process.
    facts = dict(ansible_facts=gather(module, module.params["gather_subset"])) if module.params["gather_subset"] else {}
    features = check_recorded(module.params["root"], set(module.params["modules"]))
    module.exit_json(
        changed=False,
        token=uuid.uuid4().hex,
        features=features,
        in_sync=sorted(set(entry["module"] for entry in features
                           if not entry["result"].get("changed") and not entry["result"].get("failed"))),
        **facts
    )


if __name__ == "__main__":
    main()
