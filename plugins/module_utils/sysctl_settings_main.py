# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpuops.hardening.sysctl_settings module's code. It lives here, not in the module file, so that
gpuops.hardening.precheck can run it in check mode in its own process (module_utils/precheck.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.gpuops.hardening.plugins.module_utils import sysctl_d
from ansible_collections.gpuops.hardening.plugins.module_utils.host_env import live_apply_blocker
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec, read_text, under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import check_writable, ensure_content
from ansible_collections.gpuops.hardening.plugins.module_utils.receipts import remember_call
from ansible_collections.gpuops.hardening.plugins.module_utils.run_lock import hold_node_lock


def wanted_settings(module):
    """Canonical key -> value text, in the given order; fails on keys or values sysctl cannot take.

    Keys with a null value are not managed.
    """
    wanted = {}
    for key, value in module.params["settings"].items():
        if value is None:
            continue
        if not isinstance(key, str) or not sysctl_d.valid_key(key):
            module.fail_json(msg="settings: %r is not a sysctl key (expected names like vm.swappiness or vm/swappiness)" % (key,))
        if isinstance(value, bool) or not isinstance(value, (int, str)) or "\n" in str(value) or not str(value).strip():
            module.fail_json(msg="settings: %s has value %r; a sysctl value is an integer or a one-line string" % (key, value))
        canonical = sysctl_d.canonical_key(key)
        if canonical in wanted:
            module.fail_json(msg="settings: %s is given twice (as %s and another spelling)" % (canonical, key))
        wanted[canonical] = sysctl_d.normalize_value(value)
    return wanted


def check_notes(module):
    for key, note in module.params["notes"].items():
        if note is not None and (not isinstance(note, str) or "\n" in note.strip()):
            module.fail_json(msg="notes: the note for %s must be one line of text, got %r" % (key, note))


def check_path(module):
    path = module.params["path"]
    if not path.endswith(".conf") or os.path.basename(path).startswith("."):
        module.fail_json(msg="path: systemd-sysctl reads only files named *.conf (and not hidden), so %s would never "
                             "apply at boot; nothing was changed" % path)


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


def report_conflicts(module, host, wanted, content, result):
    path = host["path"]
    masked = sysctl_d.masked_by(path, host["dirs"])
    conflicts = sysctl_d.boot_conflicts(wanted, path, content, host["dirs"], host["conf"])
    result["masked_by"] = masked
    result["conflicts"] = [
        dict(key=c.key, wanted=c.wanted, value=c.value, file=c.path, line=c.line, applied_by=c.applied_by,
             other_key=c.other_key, message=sysctl_d.describe(c, path))
        for c in conflicts
    ]
    messages = ([masked + "; none of its settings apply at boot"] if masked else []) + [c["message"] for c in result["conflicts"]]
    if not messages or module.params["conflict_action"] == "ignore":
        return
    if module.params["conflict_action"] == "fail":
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


def host_paths(params):
    """The files and directories the module reads and writes, below root."""
    root = params["root"]
    return dict(
        path=under_root(root, params["path"]),
        dirs=[under_root(root, directory) for directory in sysctl_d.SYSCTL_DIRS],
        conf=under_root(root, sysctl_d.SYSCTL_CONF),
        proc_sys=under_root(root, "/proc/sys"),
    )


def main():
    argument_spec = host_argument_spec(live=True)
    argument_spec.update(
        settings=dict(type="dict", required=True),
        notes=dict(type="dict", default={}),
        description=dict(type="str"),
        path=dict(type="path", default="/etc/sysctl.d/90-gpuops-hardening.conf"),
        conflict_action=dict(type="str", choices=["warn", "fail", "ignore"], default="warn"),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    hold_node_lock(module, "gpuops.hardening.sysctl_settings")
    remember_call(module, "sysctl_settings")
    params = module.params
    check_path(module)
    check_notes(module)
    host = host_paths(params)
    proc_sys = host["proc_sys"]
    wanted = wanted_settings(module)
    content = sysctl_d.render(wanted, params["notes"], params["description"])

    result = dict(changed=False, live_skipped_reason=None)
    report_conflicts(module, host, wanted, content, result)

    check_writable(module, host["path"], content)
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
    file_result, file_diff = ensure_content(module, host["path"], content)
    if file_diff:
        diffs.append(file_diff)
    result["file"] = {"path": host["path"], "changed": file_result["changed"]}
    result["changed"] = bool(changes) or file_result["changed"]
    orders = sysctl_d.application_orders(host["path"], content, host["dirs"], host["conf"])
    result["boot_files"] = [path for path, dummy in orders[sysctl_d.SYSTEMD]]
    if module._diff:
        result["diff"] = diffs
    module.exit_json(**result)
