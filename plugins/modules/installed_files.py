#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: installed_files
short_description: Converge a set of installed folders and files in one call
version_added: "0.1.0"
description:
  - Makes each folder in O(folders) exist with its mode, then each file in O(files) hold exactly its content with
    its mode, all owned by O(owner) and O(group). Only what differs is changed.
  - A role installs the scripts, helpers and units it runs on the node this way in one round trip, instead of one
    C(file), C(copy) or C(template) task per path.
  - Each file is written atomically (a temporary file beside it, renamed over it), so a reader never sees half a
    file.
  - The action plugin of the same name reads O(files[].src) and renders O(files[].template) on the controller, so
    the module itself only receives content.
author:
  - gpuops.hardening developers (@gpuops)
extends_documentation_fragment:
  - gpuops.hardening.host
  - gpuops.hardening.host.lock
options:
  folders:
    description: Folders to create, in order, before the files; missing parents are created with mode C(0755).
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description: Absolute path on the node (taken below O(root)).
        type: path
        required: true
      mode:
        description: Octal mode as a string, for example V("0755").
        type: str
        default: "0755"
  files:
    description:
      - Files to converge, in order. Give each exactly one of O(files[].content), O(files[].src) or
        O(files[].template).
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description: Absolute path on the node (taken below O(root)); a missing folder is created with mode C(0755).
        type: path
        required: true
      content:
        description: The exact text the file holds.
        type: str
      src:
        description:
          - A file on the controller, copied unchanged. A relative path is looked for in the role's C(files)
            folder, as C(ansible.builtin.copy) does. Handled by the action plugin.
        type: path
      template:
        description:
          - A Jinja2 template on the controller, rendered with the task's variables (and C(ansible_managed)). A
            relative path is looked for in the role's C(templates) folder. Handled by the action plugin.
        type: path
      mode:
        description: Octal mode as a string, for example V("0644").
        type: str
        default: "0644"
  owner:
    description: Owner of every folder and file given (name or uid).
    type: str
    default: root
  group:
    description: Group of every folder and file given (name or gid).
    type: str
    default: root
attributes:
  action:
    description: The action plugin reads O(files[].src) and renders O(files[].template) on the controller.
    support: full
  check_mode:
    description: Reports what would change, with the diff, and changes nothing.
    support: full
  diff_mode:
    description: One diff per file whose content changes, and one per folder to create.
    support: full
notes:
  - Paths that are not given are never touched; removing what a role no longer installs is the role's own task.
  - The O(timeout) option is accepted for the shared options' sake; this module runs no external command.
"""

EXAMPLES = r"""
- name: Install a launcher and its helper library in one call
  gpuops.hardening.installed_files:
    folders:
      - path: /usr/local/lib/example
    files:
      - path: /usr/local/lib/example/helper.py
        src: helper.py
      - path: /usr/local/bin/example
        content: "#!/usr/bin/python3\nimport sys\n"
        mode: "0755"
      - path: /etc/systemd/system/example.service
        template: example.service.j2
"""

RETURN = r"""
changed_paths:
  description: The folders and files created or changed (content, mode or owner), in the order given, below O(root).
  returned: always
  type: list
  elements: str
  sample: [/usr/local/bin/gpu-numa-exec]
paths:
  description: Every folder and file given, below O(root), in the order given.
  returned: always
  type: list
  elements: str
  sample: [/usr/local/lib/gpuops-hardening, /usr/local/lib/gpuops-hardening/cpulist.py]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec, under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import (
    ensure_content,
    ensure_folder,
    ensure_owner,
)
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


if __name__ == "__main__":
    main()
