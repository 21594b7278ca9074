# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The installed_files engine: folders, files and unit enablement, written only where they differ (the roles'
scripts and units).

converge(spec, host, check_mode) -> result, for the gpuops.hardening.installed_files module and the node call.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec, under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import (
    ensure_content,
    ensure_folder,
    ensure_owner,
    removal_diff,
    remove_path,
)
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import UNIT_DIRS, Systemctl, find_unit


def octal_mode(feature, path, text):
    """The mode a string such as "0644" names; a clear failure for anything else."""
    try:
        mode = int(text, 8)
    except (TypeError, ValueError):
        mode = -1
    if not 0 <= mode <= 0o7777:
        feature.fail_json(msg="%s: mode %r is not an octal mode such as \"0644\"" % (path, text))
    return mode


def wanted_files(feature):
    """[(path, content, mode)], after checking that each file has its content."""
    wanted = []
    for entry in feature.params["files"]:
        if entry.get("content") is None:
            # src and template are turned into content on the controller, by the action plugin.
            feature.fail_json(msg="%s: no content; give content, or src or template through the action plugin"
                              % entry["path"])
        content = entry["content"]
        if entry.get("interpreters"):
            content = "#!%s\n%s" % (script_interpreter(feature, entry), content)
        wanted.append((entry["path"], content, octal_mode(feature, entry["path"], entry["mode"])))
    return wanted


def script_interpreter(feature, entry):
    """The first of the entry's interpreters that is on the node: the system Python differs by platform
    (/usr/libexec/platform-python is always there on EL 8 and 9, /usr/bin/python3 on Debian and Ubuntu)."""
    for candidate in entry["interpreters"]:
        if os.access(under_root(feature.params["root"], candidate), os.X_OK):
            return candidate
    return feature.fail_json(msg="%s: none of its interpreters is on the node (%s)"
                             % (entry["path"], ", ".join(entry["interpreters"])))


def check_absent(feature, folders, files):
    """Each path to remove is absolute, not /, and not also a folder or file to install."""
    installed = set(entry[0] for entry in folders + files)
    for path in feature.params["absent"]:
        if not path.startswith("/") or path.rstrip("/") == "":
            feature.fail_json(msg="absent: %r is not a path this module may remove; give absolute paths below /" % path)
        if path in installed:
            feature.fail_json(msg="absent: %s is also in folders or files; give each path once" % path)


def in_unit_folder(root, host_path):
    """True for a unit file or drop-in below root: something systemd reads only after a daemon-reload."""
    return any(host_path.startswith(under_root(root, folder) + "/") for folder in UNIT_DIRS)


class UnitStates(object):
    """Enables and disables the given units; systemctl is looked for only when a unit is given."""

    def __init__(self, feature):
        self.feature = feature
        self.units = feature.params["units"]
        self.systemctl = Systemctl(feature, timeout=feature.params["timeout"]) if self.units else None
        self.changed = []

    def _set(self, unit, wanted):
        changed = self.systemctl.enable(unit) if wanted else self.systemctl.disable(unit)
        if changed:
            self.changed.append(unit)

    def disable_installed(self):
        """Disable each unit to be off while its file is still there: systemctl cannot disable a unit it cannot find."""
        for unit in self.units:
            if not unit["enabled"] and find_unit(unit["name"], self.feature.params["root"])[1]:
                self._set(unit["name"], False)

    def settle(self, unit_files_changed):
        """Reload systemd when a unit file changed or went, then enable each unit to be on."""
        if unit_files_changed and self.systemctl:
            self.systemctl.daemon_reload()
        for unit in self.units:
            if unit["enabled"]:
                self._set(unit["name"], True)


NAME = 'installed_files'
ARGUMENT_SPEC = host_argument_spec()
ARGUMENT_SPEC.update(
    folders=dict(type="list", elements="dict", default=[], options=dict(
        path=dict(type="path", required=True),
        mode=dict(type="str", default="0755"),
    )),
    files=dict(type="list", elements="dict", default=[], options=dict(
        path=dict(type="path", required=True),
        content=dict(type="str"),
        src=dict(type="path"),
        template=dict(type="path"),
        mode=dict(type="str", default="0644"),
        interpreters=dict(type="list", elements="path"),
    ), mutually_exclusive=[("content", "src", "template")]),
    absent=dict(type="list", elements="path", default=[]),
    units=dict(type="list", elements="dict", default=[], options=dict(
        name=dict(type="str", required=True),
        enabled=dict(type="bool", required=True),
    )),
    owner=dict(type="str", default="root"),
    group=dict(type="str", default="root"),
)
SPEC_RULES = {}


def converge(spec, host, check_mode):
    """Converge this feature on the node as spec says (check_mode: only say what would change); returns the result."""
    feature = host.feature(NAME, spec, check_mode)
    params = feature.params
    root = params["root"]
    folders = [(entry["path"], octal_mode(feature, entry["path"], entry["mode"])) for entry in params["folders"]]
    files = wanted_files(feature)
    check_absent(feature, folders, files)

    changed_paths, paths, removed_paths, diffs = [], [], [], []
    units = UnitStates(feature)
    units.disable_installed()

    def settle(path, outcome):
        written, diff = outcome
        owner_changed = ensure_owner(feature, path, params["owner"], params["group"])
        paths.append(path)
        if written["changed"] or owner_changed:
            changed_paths.append(path)
        if diff:
            diffs.append(diff)

    for path, mode in folders:
        host_path = under_root(root, path)
        settle(host_path, ensure_folder(feature, host_path, mode))
    for path, content, mode in files:
        host_path = under_root(root, path)
        settle(host_path, ensure_content(feature, host_path, content, mode=mode))

    for path in params["absent"]:
        host_path = under_root(root, path)
        if not os.path.lexists(host_path):
            continue
        diffs.append(removal_diff(host_path))
        removed_paths.append(host_path)
        if not feature.check_mode:
            remove_path(feature, host_path)

    units.settle(any(in_unit_folder(root, path) for path in changed_paths + removed_paths))

    result = dict(changed=bool(changed_paths or removed_paths or units.changed), changed_paths=changed_paths,
                  paths=paths, removed_paths=removed_paths, changed_units=units.changed)
    result["diff"] = diffs
    return result
