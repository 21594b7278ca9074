# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's verdicts on Fabric Manager: its version against the driver's, the daemon, and the unit's place in the
boot order. Each GPU's fabric state is a hardware check (audit_hardware_checks), judged once, there.

The state is the fabricmanager feature's result in check mode; a refusal (a version other than the driver's, no
package, a masked unit) is a failed result that still carries what the feature read.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.module_utils.fabricmanager import PERSISTENCED_UNIT
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_checks import (
    FAIL, PASS, SKIP, check, failure, not_collected, ran,
)

AREA = "fabricmanager"
DAEMON_ID, VERSION_ID, ORDER_ID = "fabricmanager.daemon", "fabricmanager.version", "fabricmanager.order"


def fabricmanager_checks(state, role_error=None):
    """The daemon, the version match and the unit's order on an NVSwitch node; one SKIP elsewhere."""
    read = ran(state) or (isinstance(state, dict) and state.get("failed") and state.get("driver_version"))
    if not read:
        return [not_collected(DAEMON_ID, AREA, "nvidia-fabricmanager service", failure(state, role_error))]
    if state.get("skipped_reason"):
        return [check(DAEMON_ID, AREA, "nvidia-fabricmanager service", SKIP, "enabled and running", "not needed",
                      state["skipped_reason"])]
    return [_version(state), _daemon(state), _order(state)]


def _version(state):
    title, expected = "Fabric Manager version", "the driver's, %s" % state.get("driver_version")
    installed = state.get("daemon_version") or state.get("package_version")
    if state.get("installed"):
        return check(VERSION_ID, AREA, title, FAIL, expected, installed or "not installed",
                     "the role would install %s" % state["installed"])
    if installed and installed == state.get("driver_version"):
        return check(VERSION_ID, AREA, title, PASS, expected, installed, "Fabric Manager matches the driver")
    if installed:
        return check(VERSION_ID, AREA, title, FAIL, expected, installed,
                     "Fabric Manager does not start at another version than the driver's: install %s at %s" % (
                         state.get("package"), state.get("driver_version")))
    return check(VERSION_ID, AREA, title, FAIL, expected, "not installed",
                 state.get("msg") or "install %s at %s" % (state.get("package"), state.get("driver_version")))


def _daemon(state):
    title, expected = "nvidia-fabricmanager service", "enabled and running"
    if state.get("failed"):
        return check(DAEMON_ID, AREA, title, FAIL, expected, "not checked", failure(state))
    pending = ["%s would be installed first" % state["installed"]] if state.get("installed") else []
    if state.get("enabled_changed"):
        pending.append("not enabled")
    if state.get("service_action") not in (None, "none"):
        pending.append("the daemon would be %s" % state["service_action"])
    if pending:
        return check(DAEMON_ID, AREA, title, FAIL, expected, "; ".join(pending),
                     "CUDA refuses work on an NVSwitch node until Fabric Manager has trained the fabric")
    return check(DAEMON_ID, AREA, title, PASS, expected, "enabled, active", "Fabric Manager runs and starts at boot")


def _order(state):
    title = "nvidia-fabricmanager boot order"
    expected = "after %s and before the GPU clients, only where NVSwitches are" % PERSISTENCED_UNIT
    dropin = state.get("dropin") or {}
    if state.get("failed") or not dropin:
        why = failure(state) or ("%s would be installed first" % state["installed"] if state.get("installed")
                                 else "no drop-in read")
        return check(ORDER_ID, AREA, title, FAIL, expected, "not checked", why)
    if dropin.get("changed"):
        return check(ORDER_ID, AREA, title, FAIL, expected, "drop-in missing or different",
                     "%s is not the collection's: the unit may start before persistence mode, after the GPU "
                     "clients, or where no NVSwitch is" % dropin.get("path"))
    return check(ORDER_ID, AREA, title, PASS, expected, "drop-in in place",
                 "%s orders it; the MIG boot service and the MPS daemons order themselves after it" % dropin.get("path"))
