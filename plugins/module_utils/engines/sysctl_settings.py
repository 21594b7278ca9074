# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sysctl_settings engine: kernel VM settings: live in /proc/sys and in one sysctl.d file, with the boot-time
overrides reported.

converge(spec, host, check_mode) -> result, for the gpuops.hardening.sysctl_settings module and the node call.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.module_utils.common.text.converters import to_native

from ansible_collections.gpuops.hardening.plugins.module_utils import sysctl_d
from ansible_collections.gpuops.hardening.plugins.module_utils.host_env import live_apply_blocker
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec, read_text, under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import check_writable, ensure_content


def wanted_settings(feature):
    """Canonical key -> value text, in the given order; fails on keys or values sysctl cannot take.

    Keys with a null value are not managed.
    """
    wanted = {}
    for key, value in feature.params["settings"].items():
        if value is None:
            continue
        if not isinstance(key, str) or not sysctl_d.valid_key(key):
            feature.fail_json(msg="settings: %r is not a sysctl key (expected names like vm.swappiness or vm/swappiness)" % (key,))
        if isinstance(value, bool) or not isinstance(value, (int, str)) or "\n" in str(value) or not str(value).strip():
            feature.fail_json(msg="settings: %s has value %r; a sysctl value is an integer or a one-line string" % (key, value))
        canonical = sysctl_d.canonical_key(key)
        if canonical in wanted:
            feature.fail_json(msg="settings: %s is given twice (as %s and another spelling)" % (canonical, key))
        wanted[canonical] = sysctl_d.normalize_value(value)
    return wanted


def check_notes(feature):
    for key, note in feature.params["notes"].items():
        if note is not None and (not isinstance(note, str) or "\n" in note.strip()):
            feature.fail_json(msg="notes: the note for %s must be one line of text, got %r" % (key, note))


def check_path(feature):
    path = feature.params["path"]
    if not path.endswith(".conf") or os.path.basename(path).startswith("."):
        feature.fail_json(msg="path: systemd-sysctl reads only files named *.conf (and not hidden), so %s would never "
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


def apply_live(feature, proc_sys, before, wanted):
    """Write each differing value. Returns (after, skipped: {key: reason})."""
    after = dict(before)
    skipped = {}
    for key, value in wanted.items():
        if before[key] is None or before[key] == value:
            continue
        path = os.path.join(proc_sys, sysctl_d.proc_path(key))
        blocker = live_apply_blocker(path) if feature.params["apply_live"] else "apply_live is false"
        if blocker:
            # Said of /proc/sys as a whole: the same reason holds for every key.
            skipped[key] = blocker.replace(path, proc_sys)
            continue
        if feature.check_mode:
            after[key] = value
            continue
        try:
            write_value(path, value)
        except (IOError, OSError) as exc:
            applied = sorted(k for k in wanted if after[k] != before[k])
            feature.fail_json(msg="the kernel refused %s = %s (%s): %s. Applied before that: %s; the sysctl.d file was not written."
                              % (key, value, path, to_native(exc), ", ".join(applied) or "nothing"))
        after[key] = sysctl_d.normalize_value(read_text(path) or "")
        if after[key] != value:
            feature.warn("%s: wrote %s but the kernel shows %s" % (key, value, after[key]))
    return after, skipped


def report_conflicts(feature, host, wanted, content, result):
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
    if not messages or feature.params["conflict_action"] == "ignore":
        return
    if feature.params["conflict_action"] == "fail":
        feature.fail_json(msg="sysctl boot conflict: %s" % "; ".join(messages), **result)
    for message in messages:
        feature.warn("sysctl boot conflict: %s" % message)


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


NAME = 'sysctl_settings'
ARGUMENT_SPEC = host_argument_spec(live=True)
ARGUMENT_SPEC.update(
    settings=dict(type="dict", required=True),
    notes=dict(type="dict", default={}),
    description=dict(type="str"),
    path=dict(type="path", default="/etc/sysctl.d/90-gpuops-hardening.conf"),
    conflict_action=dict(type="str", choices=["warn", "fail", "ignore"], default="warn"),
)
SPEC_RULES = {}


def converge(spec, host, check_mode):
    """Converge this feature on the node as spec says (check_mode: only say what would change); returns the result."""
    feature = host.feature(NAME, spec, check_mode)
    params = feature.params
    check_path(feature)
    check_notes(feature)
    paths = host_paths(params)
    proc_sys = paths["proc_sys"]
    wanted = wanted_settings(feature)
    content = sysctl_d.render(wanted, params["notes"], params["description"])

    result = dict(changed=False, live_skipped_reason=None)
    report_conflicts(feature, paths, wanted, content, result)

    check_writable(feature, paths["path"], content)
    before = read_live(proc_sys, wanted)
    result["unsupported"] = sorted(key for key, value in before.items() if value is None)
    if result["unsupported"]:
        feature.warn("this kernel has no %s; kept in %s, where systemd-sysctl skips them at boot"
                     % (", ".join(result["unsupported"]), params["path"]))
    after, skipped = apply_live(feature, proc_sys, before, wanted)
    result.update(before=before, after=after, live_skipped=skipped)
    result["live_applied"] = all(after[key] == value for key, value in wanted.items() if after[key] is not None)
    if skipped:
        result["live_skipped_reason"] = sorted(set(skipped.values()))[0]
        if params["apply_live"]:
            feature.warn("sysctl live apply skipped for %s: %s. %s carries them to the next boot."
                         % (", ".join(sorted(skipped)), result["live_skipped_reason"], params["path"]))

    diffs = []
    changes = live_diff(proc_sys, before, after)
    if changes:
        diffs.append(changes)
    file_result, file_diff = ensure_content(feature, paths["path"], content)
    if file_diff:
        diffs.append(file_diff)
    result["file"] = {"path": paths["path"], "changed": file_result["changed"]}
    result["changed"] = bool(changes) or file_result["changed"]
    orders = sysctl_d.application_orders(paths["path"], content, paths["dirs"], paths["conf"])
    result["boot_files"] = [path for path, dummy in orders[sysctl_d.SYSTEMD]]
    result["diff"] = diffs
    return result
