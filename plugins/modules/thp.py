#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: thp
short_description: Converge transparent hugepage settings live and across reboots
version_added: "0.1.0"
description:
  - Sets the kernel's transparent hugepage (THP) C(enabled), C(defrag) and khugepaged C(defrag) values
    through sysfs, only where they differ from what is wanted.
  - Optionally writes a systemd oneshot unit that re-applies the values at boot, enables it,
    and reloads systemd when the unit changed, all in the same call.
  - Reports a C(transparent_hugepage=) on the kernel command line that contradicts the wanted C(enabled).
  - Where sysfs is read-only (inside containers), the live apply is skipped with a warning
    and the persistent unit is still converged.
author:
  - gpuops.hardening developers (@gpuops)
options:
  enabled:
    description: Wanted C(enabled) value. Left as it is when omitted.
    type: str
    choices: [always, madvise, never]
  defrag:
    description: Wanted C(defrag) value. Left as it is when omitted.
    type: str
    choices: [always, defer, defer+madvise, madvise, never]
  khugepaged_defrag:
    description: Whether khugepaged may compact memory to build huge pages. Left as it is when omitted.
    type: bool
  apply_live:
    description: Write the values to sysfs now. When false only the unit is converged.
    type: bool
    default: true
  cmdline_conflict_action:
    description:
      - What to do when the kernel command line contradicts O(enabled).
      - V(fail) fails before anything is changed.
    type: str
    choices: [warn, fail, ignore]
    default: warn
  unit_path:
    description: Path of the systemd unit that re-applies the values at boot. No unit is managed when omitted.
    type: path
  unit_content:
    description: Full content of that unit, usually rendered from the role's template.
    type: str
  sysfs_path:
    description: The THP sysfs directory.
    type: path
    default: /sys/kernel/mm/transparent_hugepage
  cmdline_path:
    description: Where to read the running kernel's command line.
    type: path
    default: /proc/cmdline
  timeout:
    description: Seconds allowed for each systemctl call.
    type: int
    default: 60
attributes:
  check_mode:
    description: Reports what would change without writing sysfs, the unit, or calling systemctl.
    support: full
  diff_mode:
    description: Shows the live values and the unit file before and after.
    support: full
notes:
  - The live values belong to the running kernel; inside a container they are the host's and are never written.
requirements:
  - systemd, when O(unit_path) is set.
"""

EXAMPLES = r"""
- name: THP for a training node
  gpuops.hardening.thp:
    enabled: always
    defrag: defer+madvise
    khugepaged_defrag: true

- name: THP for an inference node, persisted by a boot unit
  gpuops.hardening.thp:
    enabled: madvise
    defrag: defer
    khugepaged_defrag: false
    unit_path: /etc/systemd/system/gpuops-thp.service
    unit_content: "{{ lookup('ansible.builtin.template', 'gpuops-thp.service.j2') }}"
    cmdline_conflict_action: fail
"""

RETURN = r"""
before:
  description: The live values before the call.
  returned: always
  type: dict
  sample: {"enabled": "madvise", "defrag": "madvise", "khugepaged_defrag": true}
after:
  description: The live values after the call (what they would be, in check mode).
  returned: always
  type: dict
  sample: {"enabled": "always", "defrag": "defer+madvise", "khugepaged_defrag": true}
live_applied:
  description: Whether the wanted values are in effect on the running kernel.
  returned: always
  type: bool
live_skipped_reason:
  description: Why the live apply was skipped, or null.
  returned: always
  type: str
  sample: /sys/kernel/mm/transparent_hugepage is read-only inside this docker container
cmdline_value:
  description: The C(transparent_hugepage=) value on the kernel command line, or null.
  returned: always
  type: str
cmdline_conflict:
  description: Whether that value contradicts O(enabled).
  returned: always
  type: bool
cmdline_message:
  description: Explanation of the conflict, or null.
  returned: always
  type: str
unit:
  description: What happened to the boot unit.
  returned: when O(unit_path) is set
  type: dict
  sample: {"path": "/etc/systemd/system/gpuops-thp.service", "changed": false, "enabled": true}
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.gpuops.hardening.plugins.module_utils import thp
from ansible_collections.gpuops.hardening.plugins.module_utils.host_env import live_apply_blocker
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import ensure_content, read_text
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import Systemctl


def read_live(sysfs_path):
    """Current values of the THP settings this module manages."""
    state = {}
    for name, relative in thp.SETTING_FILES:
        text = read_text(os.path.join(sysfs_path, relative))
        if text is None:
            continue
        if name == "khugepaged_defrag":
            state[name] = thp.parse_khugepaged_defrag(text)
        else:
            state[name] = thp.parse_choice(text)[0]
    return state


def wanted_values(params):
    return dict((name, params[name]) for name, dummy in thp.SETTING_FILES if params[name] is not None)


def check_supported(module, sysfs_path, wanted):
    """Fail when the kernel does not offer a wanted value (older kernels lack defer+madvise)."""
    for name, relative in thp.SETTING_FILES:
        if name == "khugepaged_defrag" or name not in wanted:
            continue
        text = read_text(os.path.join(sysfs_path, relative))
        if text is None:
            continue
        choices = thp.parse_choice(text)[1]
        if choices and wanted[name] not in choices:
            module.fail_json(msg="this kernel does not support %s=%s; it offers: %s" % (name, wanted[name], ", ".join(choices)))


def apply_live(module, sysfs_path, before, wanted):
    """Write each differing value; returns the state afterwards."""
    after = dict(before)
    for name, relative in thp.SETTING_FILES:
        if name not in wanted or before.get(name) == wanted[name]:
            continue
        if not module.check_mode:
            try:
                with open(os.path.join(sysfs_path, relative), "w") as handle:
                    handle.write(thp.format_value(name, wanted[name]))
            except (IOError, OSError) as exc:
                module.fail_json(msg="could not write %s to %s: %s" % (wanted[name], relative, to_native(exc)))
        after[name] = wanted[name]
    return after


def converge_unit(module, result, diffs):
    params = module.params
    file_result, diff = ensure_content(module, params["unit_path"], params["unit_content"])
    if diff:
        diffs.append(diff)
    systemctl = Systemctl(module, timeout=params["timeout"])
    unit_name = os.path.basename(params["unit_path"])
    if file_result["changed"]:
        systemctl.daemon_reload()
    enabled_changed = systemctl.enable(unit_name)
    result["unit"] = {"path": params["unit_path"], "changed": file_result["changed"] or enabled_changed, "enabled": True}
    if file_result["changed"] or enabled_changed:
        result["changed"] = True


def main():
    module = AnsibleModule(
        argument_spec=dict(
            enabled=dict(type="str", choices=list(thp.ENABLED_CHOICES)),
            defrag=dict(type="str", choices=list(thp.DEFRAG_CHOICES)),
            khugepaged_defrag=dict(type="bool"),
            apply_live=dict(type="bool", default=True),
            cmdline_conflict_action=dict(type="str", choices=["warn", "fail", "ignore"], default="warn"),
            unit_path=dict(type="path"),
            unit_content=dict(type="str"),
            sysfs_path=dict(type="path", default="/sys/kernel/mm/transparent_hugepage"),
            cmdline_path=dict(type="path", default="/proc/cmdline"),
            timeout=dict(type="int", default=60),
        ),
        required_together=[("unit_path", "unit_content")],
        supports_check_mode=True,
    )
    params = module.params
    sysfs_path = params["sysfs_path"]
    wanted = wanted_values(params)

    cmdline = read_text(params["cmdline_path"]) or ""
    conflict = thp.cmdline_conflict(cmdline, params["enabled"])
    result = dict(
        changed=False,
        cmdline_value=thp.cmdline_value(cmdline),
        cmdline_conflict=conflict is not None,
        cmdline_message=conflict,
        live_skipped_reason=None,
    )
    if conflict and params["cmdline_conflict_action"] == "fail":
        module.fail_json(msg="THP conflict: %s" % conflict, **result)
    if conflict and params["cmdline_conflict_action"] == "warn":
        module.warn("THP conflict: %s" % conflict)

    if not os.path.isdir(sysfs_path):
        module.fail_json(msg="%s not found: this kernel was built without transparent hugepage support" % sysfs_path, **result)
    check_supported(module, sysfs_path, wanted)

    before = read_live(sysfs_path)
    diffs = []
    blocker = live_apply_blocker(os.path.join(sysfs_path, "enabled")) if params["apply_live"] else "apply_live is false"
    if blocker is None:
        after = apply_live(module, sysfs_path, before, wanted)
    else:
        after = dict(before)
        result["live_skipped_reason"] = blocker
        if params["apply_live"]:
            module.warn("THP live apply skipped: %s. The boot unit carries the settings." % blocker)
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

    if params["unit_path"]:
        converge_unit(module, result, diffs)

    if module._diff:
        result["diff"] = diffs
    module.exit_json(**result)


if __name__ == "__main__":
    main()
