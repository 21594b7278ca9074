#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: sysctl_settings
short_description: Persist kernel settings in one sysctl.d file, apply them live, and report boot-time overrides
version_added: "0.1.0"
description:
  - Converges a whole set of sysctl settings in one call, for fleets where every remote task counts.
  - Writes them to one sysctl.d file and writes each live value under C(/proc/sys) that differs, reporting
    before and after per key.
  - Detects values in other sysctl.d files or in C(/etc/sysctl.conf) that would override the file at boot,
    following systemd-sysctl's precedence (a file name in an earlier directory masks later ones; files apply in
    lexical order of their names; the last assignment wins) and procps' C(sysctl --system), which applies
    C(/etc/sysctl.conf) once more, last.
  - Where C(/proc/sys) is read-only (inside containers), the live apply is skipped with a warning and the file is
    still written.
author:
  - gpuops.hardening developers (@gpuops)
options:
  settings:
    description:
      - The settings, as key and value. Keys may use C(.) or C(/) separators, as in sysctl.d.
      - Values are written as given; integers are converted to text.
    type: dict
    required: true
  content:
    description:
      - Full content of the sysctl.d file, usually rendered from the role's template.
      - It must set exactly O(settings); a mismatch fails before anything changes.
      - When omitted, plain C(key = value) lines are written.
    type: str
  path:
    description: The sysctl.d file that holds the settings.
    type: path
    default: /etc/sysctl.d/90-gpuops-hardening.conf
  conflict_action:
    description:
      - What to do when another file would override a setting at boot, or hides O(path).
      - V(fail) fails before anything is changed.
    type: str
    choices: [warn, fail, ignore]
    default: warn
  apply_live:
    description: Write differing values under O(proc_sys_path) now. When false only the file is converged.
    type: bool
    default: true
  sysctl_dirs:
    description: The sysctl.d directories in systemd's order of precedence.
    type: list
    elements: path
    default: [/etc/sysctl.d, /run/sysctl.d, /usr/local/lib/sysctl.d, /usr/lib/sysctl.d, /lib/sysctl.d]
  sysctl_conf:
    description: The procps configuration file that C(sysctl --system) applies last.
    type: path
    default: /etc/sysctl.conf
  proc_sys_path:
    description: Where the kernel's settings live.
    type: path
    default: /proc/sys
attributes:
  check_mode:
    description: Reports what would change without writing the file or any live value.
    support: full
  diff_mode:
    description: Shows the file and each changed live value before and after.
    support: full
notes:
  - Glob keys in other files (C(net.ipv4.conf.*.rp_filter)) are not conflicts, since systemd-sysctl never lets a
    glob override a key that some file sets explicitly.
  - A key this kernel lacks is written to the file (systemd-sysctl skips it at boot) and reported in RV(unsupported).
"""

EXAMPLES = r"""
- name: Kernel VM settings for a GPU node
  gpuops.hardening.sysctl_settings:
    settings:
      vm.swappiness: 0
      kernel.numa_balancing: 0
      vm.max_map_count: 1048576

- name: The same, from the role's template, failing on any boot-time override
  gpuops.hardening.sysctl_settings:
    settings: "{{ __sysctl_settings }}"
    content: "{{ lookup('ansible.builtin.template', 'gpuops-hardening.conf.j2') }}"
    conflict_action: fail
"""

RETURN = r"""
before:
  description: Live values of the managed keys before the call; null for a key this kernel lacks.
  returned: always
  type: dict
  sample: {"vm.swappiness": "60", "kernel.numa_balancing": "1"}
after:
  description: Live values after the call (what they would be, in check mode).
  returned: always
  type: dict
  sample: {"vm.swappiness": "0", "kernel.numa_balancing": "0"}
live_applied:
  description: Whether every managed key this kernel has shows the wanted value.
  returned: always
  type: bool
live_skipped:
  description: Keys whose differing live value was not written, and why.
  returned: always
  type: dict
  sample: {"vm.swappiness": "/proc/sys/vm/swappiness is read-only inside this docker container"}
live_skipped_reason:
  description: Why the live apply was skipped for some keys, or null.
  returned: always
  type: str
unsupported:
  description: Keys this kernel does not have.
  returned: always
  type: list
  elements: str
conflicts:
  description: Values from other files that would override the managed file at boot.
  returned: always
  type: list
  elements: dict
  sample:
    - key: vm.swappiness
      wanted: "0"
      value: "10"
      file: /etc/sysctl.d/99-local.conf
      line: 3
      applied_by: systemd-sysctl and sysctl --system
      message: "vm.swappiness: /etc/sysctl.d/99-local.conf line 3 sets 10, which overrides 0 ..."
masked_by:
  description: Why the managed file would not be read at boot at all, or null.
  returned: always
  type: str
boot_files:
  description: The files systemd-sysctl applies at boot, in order, once this call is done.
  returned: always
  type: list
  elements: str
file:
  description: What happened to the sysctl.d file.
  returned: always
  type: dict
  sample: {"path": "/etc/sysctl.d/90-gpuops-hardening.conf", "changed": true}
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible.module_utils.six import integer_types, string_types

from ansible_collections.gpuops.hardening.plugins.module_utils import sysctl_d
from ansible_collections.gpuops.hardening.plugins.module_utils.host_env import live_apply_blocker
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import ensure_content, read_text


def wanted_settings(module):
    """Canonical key -> value text, in the given order; fails on keys or values sysctl cannot take."""
    wanted = {}
    for key, value in module.params["settings"].items():
        if not isinstance(key, string_types) or not sysctl_d.valid_key(key):
            module.fail_json(msg="settings: %r is not a sysctl key (expected names like vm.swappiness or vm/swappiness)" % (key,))
        if isinstance(value, bool) or not isinstance(value, integer_types + string_types) or "\n" in str(value) or not str(value).strip():
            module.fail_json(msg="settings: %s has value %r; a sysctl value is an integer or a one-line string" % (key, value))
        canonical = sysctl_d.canonical_key(key)
        if canonical in wanted:
            module.fail_json(msg="settings: %s is given twice (as %s and another spelling)" % (canonical, key))
        wanted[canonical] = sysctl_d.normalize_value(value)
    return wanted


def check_content(module, content, wanted):
    """The file must set what settings says, so the live and boot values agree."""
    in_file = dict((a.key, a.value) for a in sysctl_d.parse(content))
    if in_file != wanted:
        missing = sorted(set(wanted) - set(in_file))
        extra = sorted(set(in_file) - set(wanted))
        differ = sorted(k for k in set(in_file) & set(wanted) if in_file[k] != wanted[k])
        module.fail_json(msg="content does not set exactly the given settings (missing: %s; extra: %s; different: %s)"
                         % (", ".join(missing) or "none", ", ".join(extra) or "none", ", ".join(differ) or "none"))


def read_live(proc_sys, keys):
    live = {}
    for key in keys:
        text = read_text(os.path.join(proc_sys, sysctl_d.proc_path(key)))
        live[key] = None if text is None else sysctl_d.normalize_value(text)
    return live


def write_value(path, value):
    with open(path, "w") as handle:
        handle.write(value)


def apply_live(module, proc_sys, before, wanted):
    """Write each differing value. Returns (after, skipped: {key: reason})."""
    after = dict(before)
    skipped = {}
    for key, value in wanted.items():
        if before[key] is None or before[key] == value:
            continue
        path = os.path.join(proc_sys, sysctl_d.proc_path(key))
        blocker = live_apply_blocker(path) if module.params["apply_live"] else "apply_live is false"
        if blocker:
            # Said of /proc/sys as a whole: the same reason holds for every key.
            skipped[key] = blocker.replace(path, proc_sys)
            continue
        if module.check_mode:
            after[key] = value
            continue
        try:
            write_value(path, value)
        except (IOError, OSError) as exc:
            applied = sorted(k for k in wanted if after[k] != before[k])
            module.fail_json(msg="the kernel refused %s = %s (%s): %s. Applied before that: %s; the sysctl.d file was not written."
                             % (key, value, path, to_native(exc), ", ".join(applied) or "nothing"))
        after[key] = sysctl_d.normalize_value(read_text(path) or "")
        if after[key] != value:
            module.warn("%s: wrote %s but the kernel shows %s" % (key, value, after[key]))
    return after, skipped


def report_conflicts(module, wanted, content, result):
    params = module.params
    path = params["path"]
    masked = sysctl_d.masked_by(path, params["sysctl_dirs"])
    conflicts = sysctl_d.boot_conflicts(wanted, path, content, params["sysctl_dirs"], params["sysctl_conf"])
    result["masked_by"] = masked
    result["conflicts"] = [
        dict(key=c.key, wanted=c.wanted, value=c.value, file=c.path, line=c.line, applied_by=c.applied_by,
             message=sysctl_d.describe(c, path))
        for c in conflicts
    ]
    messages = ([masked + "; none of its settings apply at boot"] if masked else []) + [c["message"] for c in result["conflicts"]]
    if not messages or params["conflict_action"] == "ignore":
        return
    if params["conflict_action"] == "fail":
        module.fail_json(msg="sysctl boot conflict: %s" % "; ".join(messages), **result)
    for message in messages:
        module.warn("sysctl boot conflict: %s" % message)


def live_diff(proc_sys, before, after):
    changed = [key for key in before if before[key] != after[key]]
    if not changed:
        return None
    return {
        "before_header": "%s (live)" % proc_sys,
        "after_header": "%s (live)" % proc_sys,
        "before": "".join("%s = %s\n" % (key, before[key]) for key in changed),
        "after": "".join("%s = %s\n" % (key, after[key]) for key in changed),
    }


def main():
    module = AnsibleModule(
        argument_spec=dict(
            settings=dict(type="dict", required=True),
            content=dict(type="str"),
            path=dict(type="path", default="/etc/sysctl.d/90-gpuops-hardening.conf"),
            conflict_action=dict(type="str", choices=["warn", "fail", "ignore"], default="warn"),
            apply_live=dict(type="bool", default=True),
            sysctl_dirs=dict(type="list", elements="path", default=list(sysctl_d.SYSCTL_DIRS)),
            sysctl_conf=dict(type="path", default=sysctl_d.SYSCTL_CONF),
            proc_sys_path=dict(type="path", default="/proc/sys"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    proc_sys = params["proc_sys_path"]
    wanted = wanted_settings(module)
    content = params["content"] if params["content"] is not None else sysctl_d.render(wanted)
    check_content(module, content, wanted)

    result = dict(changed=False, live_skipped_reason=None)
    report_conflicts(module, wanted, content, result)

    before = read_live(proc_sys, wanted)
    result["unsupported"] = sorted(key for key, value in before.items() if value is None)
    if result["unsupported"]:
        module.warn("this kernel has no %s; kept in %s, where systemd-sysctl skips them at boot"
                    % (", ".join(result["unsupported"]), params["path"]))
    after, skipped = apply_live(module, proc_sys, before, wanted)
    result.update(before=before, after=after, live_skipped=skipped)
    result["live_applied"] = all(after[key] == value for key, value in wanted.items() if after[key] is not None)
    if skipped:
        result["live_skipped_reason"] = sorted(set(skipped.values()))[0]
        if params["apply_live"]:
            module.warn("sysctl live apply skipped for %s: %s. %s carries them to the next boot."
                        % (", ".join(sorted(skipped)), result["live_skipped_reason"], params["path"]))

    diffs = []
    changes = live_diff(proc_sys, before, after)
    if changes:
        diffs.append(changes)
    file_result, file_diff = ensure_content(module, params["path"], content)
    if file_diff:
        diffs.append(file_diff)
    result["file"] = {"path": params["path"], "changed": file_result["changed"]}
    result["changed"] = bool(changes) or file_result["changed"]
    orders = sysctl_d.application_orders(params["path"], content, params["sysctl_dirs"], params["sysctl_conf"])
    result["boot_files"] = [path for path, dummy in orders[sysctl_d.SYSTEMD]]
    if module._diff:
        result["diff"] = diffs
    module.exit_json(**result)


if __name__ == "__main__":
    main()
