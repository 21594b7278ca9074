# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The thp engine: transparent hugepages: the live sysfs values and the boot unit that sets them again.

converge(spec, host, check_mode) -> result, for the gpuops.hardening.thp module and the node call.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.module_utils.common.text.converters import to_native

from ansible_collections.gpuops.hardening.plugins.module_utils import thp
from ansible_collections.gpuops.hardening.plugins.module_utils.host_env import live_apply_blocker
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec, read_text, under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import check_writable, ensure_content, removal_diff
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import Systemctl

CHOICE_SETTINGS = [(name, relative) for name, relative in thp.SETTING_FILES if name in thp.CHOICES]


def read_live(sysfs_path):
    """Current values of the THP settings this module manages."""
    state = {}
    for name, relative in thp.SETTING_FILES:
        text = read_text(os.path.join(sysfs_path, relative), strip=True)
        if text is None:
            continue
        if name in thp.CHOICES:
            state[name] = thp.parse_choice(text)[0]
        else:
            state[name] = thp.parse_khugepaged_defrag(text)
    return state


def wanted_values(params):
    return dict((name, params[name]) for name, dummy in thp.SETTING_FILES if params[name] is not None)


def check_supported(feature, sysfs_path, wanted):
    """Fail when the running kernel does not list a wanted value in its sysfs file."""
    for name, relative in CHOICE_SETTINGS:
        if name not in wanted:
            continue
        text = read_text(os.path.join(sysfs_path, relative), strip=True)
        if text is None:
            continue
        offered = thp.parse_choice(text)[1]
        if offered and wanted[name] not in offered:
            feature.fail_json(msg="this kernel does not support %s=%s; it offers: %s" % (name, wanted[name], ", ".join(offered)))


def apply_live(feature, sysfs_path, before, wanted):
    """Write each differing value; returns the state afterwards."""
    after = dict(before)
    for name, relative in thp.SETTING_FILES:
        if name not in wanted or before.get(name) == wanted[name]:
            continue
        if not feature.check_mode:
            try:
                with open(os.path.join(sysfs_path, relative), "w") as handle:
                    handle.write(thp.format_value(name, wanted[name]))
            except (IOError, OSError) as exc:
                feature.fail_json(msg="could not write %s to %s: %s" % (wanted[name], relative, to_native(exc)))
        after[name] = wanted[name]
    return after


def install_unit(feature, path, wanted, diffs):
    """Write and enable the boot unit; returns the unit's result entry."""
    if not wanted:
        feature.fail_json(msg="persist is true but none of enabled, defrag, khugepaged_defrag is set: "
                          "the boot unit would have nothing to apply")
    content = thp.render_unit(wanted, profile=feature.params["profile"])
    file_result, diff = ensure_content(feature, path, content)
    if diff:
        diffs.append(diff)
    systemctl = Systemctl(feature, timeout=feature.params["timeout"])
    if file_result["changed"]:
        systemctl.daemon_reload()
    enabled_changed = systemctl.enable(os.path.basename(path))
    return {"path": path, "changed": file_result["changed"] or enabled_changed, "present": True,
            "enabled": True, "managed": True}


def remove_unit(feature, path, diffs):
    """Disable and remove the boot unit this module wrote; leave anyone else's alone."""
    result = {"path": path, "changed": False, "present": False, "enabled": False, "managed": True}
    if not os.path.lexists(path):
        return result
    text = read_text(path)
    if not thp.is_managed_unit(text):
        feature.warn("%s was not written by gpuops.hardening.thp; left in place although persist is false" % path)
        result.update(present=True, enabled=None, managed=False)
        return result
    systemctl = Systemctl(feature, timeout=feature.params["timeout"])
    # Disable first: systemctl reads the unit's [Install] section to undo it.
    systemctl.disable(os.path.basename(path))
    diffs.append(removal_diff(path))
    if not feature.check_mode:
        try:
            os.unlink(path)
        except OSError as exc:
            feature.fail_json(msg="could not remove %s: %s" % (path, to_native(exc)))
    systemctl.daemon_reload()
    result["changed"] = True
    return result


NAME = 'thp'
ARGUMENT_SPEC = host_argument_spec(live=True)
ARGUMENT_SPEC.update(
    enabled=dict(type="str", choices=list(thp.CHOICES["enabled"])),
    defrag=dict(type="str", choices=list(thp.CHOICES["defrag"])),
    khugepaged_defrag=dict(type="bool"),
    cmdline_conflict_action=dict(type="str", choices=["warn", "fail", "ignore"], default="warn"),
    persist=dict(type="bool", default=True),
    profile=dict(type="str"),
    unit_path=dict(type="path", default=thp.UNIT_PATH),
)
SPEC_RULES = {}


def converge(spec, host, check_mode):
    """Converge this feature on the node as spec says (check_mode: only say what would change); returns the result."""
    feature = host.feature(NAME, spec, check_mode)
    params = feature.params
    sysfs_path = under_root(params["root"], thp.SYSFS_DIR)
    unit_path = under_root(params["root"], params["unit_path"])
    wanted = wanted_values(params)

    blocker = live_apply_blocker(os.path.join(sysfs_path, "enabled")) if params["apply_live"] else "apply_live is false"
    cmdline = read_text(under_root(params["root"], "/proc/cmdline")) or ""
    conflict = thp.cmdline_conflict(cmdline, params["enabled"], unit_managed=params["persist"], live_skipped_reason=blocker)
    result = dict(
        changed=False,
        cmdline_value=thp.cmdline_value(cmdline),
        cmdline_conflict=conflict is not None,
        cmdline_message=conflict,
        live_skipped_reason=None,
    )
    if conflict and params["cmdline_conflict_action"] == "fail":
        feature.fail_json(msg="THP conflict, nothing changed: %s" % conflict, **result)
    if conflict and params["cmdline_conflict_action"] == "warn":
        feature.warn("THP conflict: %s" % conflict)

    if not os.path.isdir(sysfs_path):
        feature.fail_json(msg="%s not found: this kernel was built without transparent hugepage support" % sysfs_path, **result)
    check_supported(feature, sysfs_path, wanted)

    if params["persist"] and wanted:
        check_writable(feature, unit_path, thp.render_unit(wanted, profile=params["profile"]))
    before = read_live(sysfs_path)
    diffs = []
    if blocker is None:
        after = apply_live(feature, sysfs_path, before, wanted)
    else:
        after = dict(before)
        result["live_skipped_reason"] = blocker
        if params["apply_live"]:
            feature.warn("THP live apply skipped: %s.%s" % (
                blocker, " The boot unit carries the settings." if params["persist"] else ""))
    result["before"] = before
    result["after"] = after
    result["live_applied"] = all(after.get(name) == value for name, value in wanted.items())
    if after != before:
        result["changed"] = True
        diffs.append({
            "before_header": "%s (live)" % sysfs_path,
            "after_header": "%s (live)" % sysfs_path,
            "before": thp.render_state(before),
            "after": thp.render_state(after),
        })

    if params["persist"]:
        result["unit"] = install_unit(feature, unit_path, wanted, diffs)
    else:
        result["unit"] = remove_unit(feature, unit_path, diffs)
    result["changed"] = result["changed"] or result["unit"]["changed"]

    result["diff"] = diffs
    return result
