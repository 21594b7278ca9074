# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's verdicts on the kubelet's policies, against the kubelet_topology role's settings.

The state is what the node call's kubelet feature (gpuops.hardening.kubelet_config's engine)
reported in check mode: the keys whose value in the kubelet's file differs
from the role's settings, and the state files a policy or reservation change would remove.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_checks import (
    FAIL,
    PASS,
    check,
    failure,
    not_collected,
    ran,
)

AREA = "kubelet"
# One check per manager; each names the kubelet keys it covers and its state file (none for the topology manager).
CHECKS = (
    ("kubelet.cpu_manager", "kubelet CPU manager", ("cpuManagerPolicy", "reservedSystemCPUs"), "cpu_manager_state"),
    ("kubelet.topology_manager", "kubelet topology manager", ("topologyManagerPolicy", "topologyManagerScope"), None),
    ("kubelet.memory_manager", "kubelet memory manager",
     ("memoryManagerPolicy", "reservedMemory", "kubeReserved", "systemReserved", "evictionHard"),
     "memory_manager_state"),
)


def _shown(keys, values):
    """key=value pairs; a key the file lacks reads unset (the kubelet's default applies)."""
    return "; ".join("%s=%s" % (key, "unset" if values[key] is None else values[key])
                     for key in keys if key in values) or "none"


def kubelet_checks(state, inputs, role_error=None):
    """Each manager's keys in the kubelet's file against the role's; none for a node that does not opt in."""
    if state is None and not role_error:
        return []
    if not ran(state):
        return [not_collected("kubelet.cpu_manager", AREA, "kubelet CPU manager", failure(state, role_error))]
    wanted = inputs.get("kubelet_settings") or {}
    differing = dict((item["key"], item.get("before")) for item in state.get("changes") or [])
    pending = state.get("state_files_removed") or []
    found = []
    for check_id, title, keys, state_file in CHECKS:
        expected = _shown(keys, wanted)
        off = [key for key in keys if key in differing and key in wanted]
        if not off:
            found.append(check(check_id, AREA, title, PASS, expected, expected,
                               "the kubelet's file %s has the role's settings" % state.get("path")))
            continue
        actual = _shown(off, dict((key, differing[key]) for key in off))
        reason = "the kubelet's file %s differs in %s" % (state.get("path"), ", ".join(off))
        # A policy or reservation change of this manager: the kubelet would reject its state file.
        rejected = [path for path in pending if state_file and path.rsplit("/", 1)[-1] == state_file]
        if rejected:
            reason += "; the change also needs %s removed, with the kubelet stopped" % ", ".join(rejected)
        found.append(check(check_id, AREA, title, FAIL, expected, actual, reason))
    return found
