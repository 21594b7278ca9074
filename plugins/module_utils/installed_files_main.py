# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpuops.hardening.installed_files module's code. It lives here, not in the module file, so that
gpuops.hardening.precheck can run it in check mode in its own process (module_utils/precheck.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec, under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import (
    ensure_content,
    ensure_folder,
    ensure_owner,
)
from ansible_collections.gpuops.hardening.plugins.module_utils.receipts import remember_call
from ansible_collections.gpuops.hardening.plugins.module_utils.run_lock import hold_node_lock


def octal_mode(module, path, text):
    """The mode a string such as "0644" names; a clear failure for anything else."""
    try:
        mode = int(text, 8)
    except (TypeError, ValueError):
        mode = -1
    if not 0 <= mode <= 0o7777:
        module.fail_json(msg="%s: mode %r is not an octal mode such as \"0644\"" % (path, text))
    return mode


def wanted_files(module):
    """[(path, content, mode)], after checking that each file has its content."""
    wanted = []
    for entry in module.params["files"]:
        if entry.get("content") is None:
            # src and template are turned into content on the controller, by the action plugin.
            module.fail_json(msg="%s: no content; give content, or src or template through the action plugin"
                             % entry["path"])
        wanted.append((entry["path"], entry["content"], octal_mode(module, entry["path"], entry["mode"])))
    return wanted


def main():
    argument_spec = host_argument_spec()
    argument_spec.update(
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
        ), mutually_exclusive=[("content", "src", "template")]),
        owner=dict(type="str", default="root"),
        group=dict(type="str", default="root"),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    params = module.params
    root = params["root"]
    folders = [(entry["path"], octal_mode(module, entry["path"], entry["mode"])) for entry in params["folders"]]
    files = wanted_files(module)
    hold_node_lock(module, "gpuops.hardening.installed_files")
    remember_call(module, "installed_files")

    changed_paths, paths, diffs = [], [], []

    def settle(path, outcome):
        written, diff = outcome
        owner_changed = ensure_owner(module, path, params["owner"], params["group"])
        paths.append(path)
        if written["changed"] or owner_changed:
            changed_paths.append(path)
        if diff:
            diffs.append(diff)

    for path, mode in folders:
        host_path = under_root(root, path)
        settle(host_path, ensure_folder(module, host_path, mode))
    for path, content, mode in files:
        host_path = under_root(root, path)
        settle(host_path, ensure_content(module, host_path, content, mode=mode))

    result = dict(changed=bool(changed_paths), changed_paths=changed_paths, paths=paths)
    if module._diff:
        result["diff"] = diffs
    module.exit_json(**result)
