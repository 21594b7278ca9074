#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: kubelet_config
short_description: Merge settings into the kubelet's config file, resetting the CPU and memory manager state the kubelet would reject
version_added: "0.3.0"
description:
  - Loads the kubelet's config file (a C(KubeletConfiguration), C(kubelet.config.k8s.io/v1beta1)), lays O(settings) over
    it and writes it back only when a value differs. Every other key stays as it was; a map setting (C(kubeReserved),
    C(evictionHard), ...) merges key by key, so C(kubeReserved.cpu) stays when only C(kubeReserved.memory) is set.
  - Before any change, checks the merged file against the field names and JSON types of C(KubeletConfiguration)
    (an unknown field is a warning, as the kubelet itself only warns), the Static memory manager's rule that the
    C(reservedMemory) limits add up to C(kubeReserved) + C(systemReserved) + the hard eviction threshold, and the node
    itself, read from sysfs - C(reservedSystemCPUs) must name CPUs the node has, C(reservedMemory) NUMA nodes it has.
  - When C(cpuManagerPolicy) or C(memoryManagerPolicy) changes and the manager's state file (C(cpu_manager_state),
    C(memory_manager_state) in O(root_dir)) exists, the kubelet would refuse to start. The module then stops the
    service, writes the file, removes exactly those state files and starts the service again. Otherwise a changed file
    restarts a running service, because the kubelet reads its file only at start.
  - The same holds, under an unchanged C(static) CPU manager policy, for a change of C(reservedSystemCPUs),
    C(kubeReserved.cpu) or C(systemReserved.cpu), and under an unchanged C(Static) memory manager policy, for a change
    of C(reservedMemory) or the memory of C(kubeReserved), C(systemReserved) or C(evictionHard). The manager checks
    its state file against them at start, and the kubelet does not start on a mismatch.
  - The write is atomic, with a backup of the previous file.
author:
  - gpuops.hardening developers (@gpuops)
extends_documentation_fragment:
  - gpuops.hardening.host
  - gpuops.hardening.host.lock
options:
  path:
    description: The kubelet's config file (its C(--config)); created with C(apiVersion) and C(kind) when absent.
    type: path
    default: /var/lib/kubelet/config.yaml
  root_dir:
    description: The kubelet's root directory (its C(--root-dir)), which holds the managers' state files.
    type: path
    default: /var/lib/kubelet
  settings:
    description: Top-level C(KubeletConfiguration) keys and their values.
    type: dict
    required: true
  service:
    description:
      - The kubelet's systemd unit. An empty string leaves the service alone (nothing stopped, started or restarted;
        state files are then still removed on a policy or reservation change).
    type: str
    default: kubelet
  reset_state:
    description:
      - V(true) stops the service, removes the state file of each manager whose policy or reservation changes, and
        starts it again.
      - V(false) fails before any change when such a change meets an existing state file.
    type: bool
    default: true
  labels:
    description: What to call each settings key in messages (the role passes its variable names).
    type: dict
    default: {}
  backup:
    description: Keep a timestamped copy of the file before it is replaced.
    type: bool
    default: true
  drain:
    description:
      - For a play that drains the node before a state reset (the kubelet_topology role with
        C(kubelet_topology_drain)). When the change would remove a state file, nothing is changed and
        RV(waits_for_drain) is true; the play drains the node with C(kubectl) on O(drain.delegate_to), calls
        again without O(drain), and uncordons the node. In check mode the result predicts the whole reset.
      - Unset, a state reset happens in this call.
    type: dict
    suboptions:
      node:
        description: The node's Kubernetes name.
        type: str
        required: true
      delegate_to:
        description: The inventory host that runs C(kubectl drain) and C(kubectl uncordon).
        type: str
        required: true
      timeout:
        description: Seconds the drain may take.
        type: int
        default: 600
attributes:
  check_mode:
    description: Reads and checks everything and reports the changes, state files and service action it would make.
    support: full
  diff_mode:
    description: One diff entry per changed top-level key.
    support: full
notes:
  - A YAML rewrite drops the file's comments; the backup keeps them.
  - The real kubelet never ran in this collection's tests; see the role's README.
requirements:
  - PyYAML (python3-yaml) on the node, and systemd.
"""

EXAMPLES = r"""
- name: CPU, topology and memory managers
  gpuops.hardening.kubelet_config:
    settings:
      cpuManagerPolicy: static
      reservedSystemCPUs: "0-1"
      topologyManagerPolicy: single-numa-node
      topologyManagerScope: container
      memoryManagerPolicy: Static
      kubeReserved: {memory: 512Mi}
      systemReserved: {memory: 512Mi}
      evictionHard: {memory.available: 100Mi}
      reservedMemory: [{numaNode: 0, limits: {memory: 1124Mi}}]
"""

RETURN = r"""
path:
  description: The config file.
  returned: always
  type: str
changes:
  description: Each top-level key that changes (or would, in check mode), with its value before and after.
  returned: always
  type: list
  elements: dict
  sample: [{"key": "cpuManagerPolicy", "before": "none", "after": "static"}]
policy_changes:
  description: Each manager whose policy changes, by its state file, with the old and new policy.
  returned: always
  type: list
  elements: dict
  sample: [{"state_file": "cpu_manager_state", "before": "none", "after": "static"}]
reservation_changes:
  description: Each manager whose static policy stays while a reservation its state file depends on changes.
  returned: always
  type: list
  elements: dict
  sample: [{"state_file": "cpu_manager_state", "keys": ["reservedSystemCPUs"]}]
state_files_removed:
  description: The state files removed (or that would be, in check mode).
  returned: always
  type: list
  elements: str
  sample: [/var/lib/kubelet/cpu_manager_state]
service_action:
  description:
    - C(none), C(restarted) (the file changed) or C(stopped_and_started) (state files removed).
    - A service that was not running is left so; its next start reads the new file.
  returned: always
  type: str
waits_for_drain:
  description: With O(drain), outside check mode, whether the change waits for the node's drain (nothing changed).
  returned: always
  type: bool
backup_file:
  description: The backup of the previous file, or null.
  returned: always
  type: str
unknown_fields:
  description: Top-level keys that C(KubeletConfiguration) does not have (each also a warning).
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import kubelet_config as engine
from ansible_collections.gpuops.hardening.plugins.module_utils.feature_module import run_engine


def main():
    module = AnsibleModule(argument_spec=engine.ARGUMENT_SPEC, supports_check_mode=True, **engine.SPEC_RULES)
    run_engine(module, engine)


if __name__ == "__main__":
    main()
