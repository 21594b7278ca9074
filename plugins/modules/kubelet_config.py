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

import os

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.gpuops.hardening.plugins.module_utils import kubelet_config
from ansible_collections.gpuops.hardening.plugins.module_utils.cpulist import try_parse_cpulist
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import (
    host_argument_spec,
    read_text,
    under_root,
)
from ansible_collections.gpuops.hardening.plugins.module_utils.kubelet_schema import API_VERSION, KIND, SOURCE, type_errors
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import ensure_content, remove_path
from ansible_collections.gpuops.hardening.plugins.module_utils.run_lock import hold_node_lock
from ansible_collections.gpuops.hardening.plugins.module_utils.sysfs_topology import read_numa_nodes
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import Systemctl

try:
    import yaml
    HAS_YAML = True
except ImportError:
    HAS_YAML = False

ACTIVE_STATES = ("active", "activating", "reloading")


def load_config(module, path):
    """(text, parsed map) of the file; (None, {}) when it is absent."""
    text = read_text(path)
    if text is None:
        return None, {}
    try:
        parsed = yaml.safe_load(text)
    except yaml.YAMLError as error:
        module.fail_json(msg="%s is not valid YAML, nothing was changed: %s" % (path, error))
    if parsed is None:
        return text, {}
    if not isinstance(parsed, dict):
        module.fail_json(msg="%s must hold a YAML map (a KubeletConfiguration), nothing was changed" % path)
    return text, parsed


def node_topology(root):
    """(CPU ids, NUMA node ids) of the node, from sysfs; a host without NUMA nodes in sysfs is one node 0."""
    sysfs = under_root(root, "/sys")
    nodes = read_numa_nodes(sysfs)
    if nodes:
        return sorted(cpu for node in nodes for cpu in node["cpus"]), [node["id"] for node in nodes]
    online = try_parse_cpulist(read_text(os.path.join(sysfs, "devices", "system", "cpu", "online"), strip=True))
    return online or [], [0]


def check(module, merged):
    """Fail before any change on a type error, a reservation that does not add up, or a misfit with the node."""
    labels = module.params["labels"]
    errors, unknown = type_errors(merged)
    if errors:
        module.fail_json(msg="the merged kubelet config would not decode as %s (%s), nothing was changed: %s"
                             % (KIND, SOURCE, "; ".join(errors)))
    for name in unknown:
        module.warn("%s: %s has no field %r; the kubelet ignores it with a warning" % (module.params["path"], KIND, name))
    errors = [kubelet_config.memory_reservation_error(merged, labels)]
    cpus, numa_nodes = node_topology(module.params["root"])
    errors = [error for error in errors if error] + kubelet_config.node_errors(merged, cpus, numa_nodes, labels)
    if errors:
        module.fail_json(msg="kubelet settings do not fit this node, nothing was changed: " + "; ".join(errors))
    return unknown


def service_state(module):
    """(Systemctl, whether the unit exists, whether it runs); (None, False, False) without a service."""
    if not module.params["service"]:
        return None, False, False
    systemctl = Systemctl(module, timeout=module.params["timeout"])
    shown = systemctl.show([module.params["service"]], ["LoadState", "ActiveState"])
    state = shown[0] if shown else {}
    return systemctl, state.get("LoadState") == "loaded", state.get("ActiveState") in ACTIVE_STATES


def reset_reasons(result):
    """What makes the kubelet reject its state files: each changed policy and reservation key."""
    return (["the %s policy" % item["state_file"].split("_")[0] for item in result["policy_changes"]]
            + [key for item in result["reservation_changes"] for key in item["keys"]])


def key_diffs(path, changes):
    """One diff entry per changed key: the key's YAML before and after."""
    def shown(key, value):
        return "" if value is None else yaml.safe_dump({key: value}, default_flow_style=False, sort_keys=False)
    return [{"before_header": "%s: %s" % (path, key), "after_header": "%s: %s" % (path, key),
             "before": shown(key, before), "after": shown(key, after)} for key, before, after in changes]


def main():
    argument_spec = host_argument_spec()
    argument_spec.update(
        path=dict(type="path", default="/var/lib/kubelet/config.yaml"),
        root_dir=dict(type="path", default="/var/lib/kubelet"),
        settings=dict(type="dict", required=True),
        service=dict(type="str", default="kubelet"),
        reset_state=dict(type="bool", default=True),
        labels=dict(type="dict", default={}),
        backup=dict(type="bool", default=True),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_YAML:
        module.fail_json(msg=missing_required_lib("PyYAML (the python3-yaml package)"))
    hold_node_lock(module, "gpuops.hardening.kubelet_config")
    params = module.params
    path = under_root(params["root"], params["path"])
    result = dict(changed=False, path=params["path"], changes=[], policy_changes=[], reservation_changes=[],
                  state_files_removed=[], service_action="none", backup_file=None, unknown_fields=[])

    text, current = load_config(module, path)
    base = dict(current) if current else {"apiVersion": API_VERSION, "kind": KIND}
    merged = kubelet_config.merge(base, params["settings"])
    result["unknown_fields"] = check(module, merged)
    changes = kubelet_config.key_changes(current if text is not None else {}, merged)
    result["changes"] = [dict(key=key, before=before, after=after) for key, before, after in changes]

    state_dir = under_root(params["root"], params["root_dir"])
    existing = [name for name, dummy, dummy in kubelet_config.STATE_FILES if os.path.exists(os.path.join(state_dir, name))]
    result["policy_changes"] = [dict(state_file=name, before=old, after=new)
                                for name, old, new in kubelet_config.changed_policies(current, merged)]
    result["reservation_changes"] = [dict(state_file=name, keys=keys)
                                     for name, keys in kubelet_config.changed_reservations(current, merged)]
    to_remove = kubelet_config.state_files_to_remove(current, merged, existing)
    if to_remove and not params["reset_state"]:
        module.fail_json(msg="the kubelet would reject %s and not start, as %s change; nothing was changed. Set "
                             "reset_state (kubelet_topology_reset_state in the role) to true to stop the kubelet, "
                             "remove them and start it again"
                             % (", ".join(to_remove), " and ".join(reset_reasons(result))), **result)
    result["state_files_removed"] = [os.path.join(params["root_dir"], name) for name in to_remove]
    if not changes:
        module.exit_json(**result)

    systemctl, unit_exists, running = service_state(module)
    content = yaml.safe_dump(merged, default_flow_style=False, sort_keys=False)
    if to_remove and running:
        systemctl.stop(params["service"])
    written, dummy = ensure_content(module, path, content, mode=None, backup=params["backup"])
    result["backup_file"] = written["backup_file"]
    if not module.check_mode:
        for name in to_remove:
            remove_path(module, os.path.join(state_dir, name))
    if running:
        if to_remove:
            systemctl.start(params["service"])
            result["service_action"] = "stopped_and_started"
        else:
            systemctl.start(params["service"], restart=True)
            result["service_action"] = "restarted"
    elif params["service"] and not unit_exists:
        module.warn("%s.service is not installed; the kubelet reads %s when it first starts"
                    % (params["service"], params["path"]))
    result["changed"] = True
    if module._diff:
        result["diff"] = key_diffs(params["path"], changes)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
