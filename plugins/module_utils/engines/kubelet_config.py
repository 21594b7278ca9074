# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet_config engine: the kubelet's CPU, topology and memory managers in its config file, with the state
reset a policy change needs.

converge(spec, host, check_mode) -> result, for the gpuops.hardening.kubelet_config module and the node call.
With drain, a change that resets the kubelet's state is not made: the result says it waits for the drain, which
the play runs from another host, and the play then runs the feature again without drain (handlers()).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.gpuops.hardening.plugins.module_utils import kubelet_config
from ansible_collections.gpuops.hardening.plugins.module_utils.cpulist import try_parse_cpulist
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import (
    host_argument_spec,
    read_text,
    under_root,
)
from ansible_collections.gpuops.hardening.plugins.module_utils.kubelet_schema import API_VERSION, KIND, SOURCE, type_errors
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import ensure_content, remove_path
from ansible_collections.gpuops.hardening.plugins.module_utils.sysfs_topology import read_numa_nodes
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import Systemctl

try:
    import yaml
    HAS_YAML = True
except ImportError:
    HAS_YAML = False

ACTIVE_STATES = ("active", "activating", "reloading")


def load_config(feature, path):
    """(text, parsed map) of the file; (None, {}) when it is absent."""
    text = read_text(path)
    if text is None:
        return None, {}
    try:
        parsed = yaml.safe_load(text)
    except yaml.YAMLError as error:
        feature.fail_json(msg="%s is not valid YAML, nothing was changed: %s" % (path, error))
    if parsed is None:
        return text, {}
    if not isinstance(parsed, dict):
        feature.fail_json(msg="%s must hold a YAML map (a KubeletConfiguration), nothing was changed" % path)
    return text, parsed


def node_topology(root):
    """(CPU ids, NUMA node ids) of the node, from sysfs; a host without NUMA nodes in sysfs is one node 0."""
    sysfs = under_root(root, "/sys")
    nodes = read_numa_nodes(sysfs)
    if nodes:
        return sorted(cpu for node in nodes for cpu in node["cpus"]), [node["id"] for node in nodes]
    online = try_parse_cpulist(read_text(os.path.join(sysfs, "devices", "system", "cpu", "online"), strip=True))
    return online or [], [0]


def check(feature, merged):
    """Fail before any change on a type error, a reservation that does not add up, or a misfit with the node."""
    labels = feature.params["labels"]
    errors, unknown = type_errors(merged)
    if errors:
        feature.fail_json(msg="the merged kubelet config would not decode as %s (%s), nothing was changed: %s"
                          % (KIND, SOURCE, "; ".join(errors)))
    for name in unknown:
        feature.warn("%s: %s has no field %r; the kubelet ignores it with a warning" % (feature.params["path"], KIND, name))
    errors = [kubelet_config.memory_reservation_error(merged, labels)]
    cpus, numa_nodes = node_topology(feature.params["root"])
    errors = [error for error in errors if error] + kubelet_config.node_errors(merged, cpus, numa_nodes, labels)
    if errors:
        feature.fail_json(msg="kubelet settings do not fit this node, nothing was changed: " + "; ".join(errors))
    return unknown


def service_state(feature):
    """(Systemctl, whether the unit exists, whether it runs); (None, False, False) without a service."""
    if not feature.params["service"]:
        return None, False, False
    systemctl = Systemctl(feature, timeout=feature.params["timeout"])
    shown = systemctl.show([feature.params["service"]], ["LoadState", "ActiveState"])
    state = shown[0] if shown else {}
    return systemctl, state.get("LoadState") == "loaded", state.get("ActiveState") in ACTIVE_STATES


def reset_reasons(result):
    """What makes the kubelet reject its state files: each changed policy and reservation key."""
    policies = ["the %s policy" % item["state_file"].split("_")[0] for item in result["policy_changes"]]
    return policies + [key for item in result["reservation_changes"] for key in item["keys"]]


def key_diffs(path, changes):
    """One diff entry per changed key: the key's YAML before and after."""
    def shown(key, value):
        return "" if value is None else yaml.safe_dump({key: value}, default_flow_style=False, sort_keys=False)
    return [{"before_header": "%s: %s" % (path, key), "after_header": "%s: %s" % (path, key),
             "before": shown(key, before), "after": shown(key, after)} for key, before, after in changes]


NAME = 'kubelet_config'
ARGUMENT_SPEC = host_argument_spec()
ARGUMENT_SPEC.update(
    path=dict(type="path", default="/var/lib/kubelet/config.yaml"),
    root_dir=dict(type="path", default="/var/lib/kubelet"),
    settings=dict(type="dict", required=True),
    service=dict(type="str", default="kubelet"),
    reset_state=dict(type="bool", default=True),
    labels=dict(type="dict", default={}),
    backup=dict(type="bool", default=True),
    drain=dict(type="dict", options=dict(
        node=dict(type="str", required=True),
        delegate_to=dict(type="str", required=True),
        timeout=dict(type="int", default=600),
    )),
)
SPEC_RULES = {}


def handlers(spec, result):
    """What the play does for a state reset that waits for the drain: drain, converge again, uncordon."""
    if not result.get("waits_for_drain"):
        return []
    return [dict(spec["drain"], action="drain")]


def converge(spec, host, check_mode):
    """Converge this feature on the node as spec says (check_mode: only say what would change); returns the result."""
    feature = host.feature(NAME, spec, check_mode)
    if not HAS_YAML:
        feature.fail_json(msg=missing_required_lib("PyYAML (the python3-yaml package)"))
    params = feature.params
    path = under_root(params["root"], params["path"])
    result = dict(changed=False, path=params["path"], changes=[], policy_changes=[], reservation_changes=[],
                  state_files_removed=[], service_action="none", backup_file=None, unknown_fields=[],
                  waits_for_drain=False)

    text, current = load_config(feature, path)
    base = dict(current) if current else {"apiVersion": API_VERSION, "kind": KIND}
    merged = kubelet_config.merge(base, params["settings"])
    result["unknown_fields"] = check(feature, merged)
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
        feature.fail_json(msg="the kubelet would reject %s and not start, as %s change; nothing was changed. Set "
                          "reset_state (kubelet_topology_reset_state in the role) to true to stop the kubelet, "
                          "remove them and start it again"
                          % (", ".join(to_remove), " and ".join(reset_reasons(result))), **result)
    result["state_files_removed"] = [os.path.join(params["root_dir"], name) for name in to_remove]
    if not changes:
        return result
    if to_remove and params["drain"] and not feature.check_mode:
        # Nothing changes before the node is drained; check mode predicts the whole reset the play then makes.
        result["waits_for_drain"] = True
        return result

    systemctl, unit_exists, running = service_state(feature)
    content = yaml.safe_dump(merged, default_flow_style=False, sort_keys=False)
    if to_remove and running:
        systemctl.stop(params["service"])
    written, dummy = ensure_content(feature, path, content, mode=None, backup=params["backup"])
    result["backup_file"] = written["backup_file"]
    if not feature.check_mode:
        for name in to_remove:
            remove_path(feature, os.path.join(state_dir, name))
    if running:
        if to_remove:
            systemctl.start(params["service"])
            result["service_action"] = "stopped_and_started"
        else:
            systemctl.start(params["service"], restart=True)
            result["service_action"] = "restarted"
    elif params["service"] and not unit_exists:
        feature.warn("%s.service is not installed; the kubelet reads %s when it first starts"
                     % (params["service"], params["path"]))
    result["changed"] = True
    if feature._diff:
        result["diff"] = key_diffs(params["path"], changes)
    return result
