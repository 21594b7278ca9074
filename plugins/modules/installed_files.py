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
      interpreters:
        description:
          - The file is a script run by one of these interpreters, the first one the node has. Its first line
            becomes C(#!) and that interpreter, so one entry serves platforms whose system Python lives in
            different places (C(/usr/libexec/platform-python) on EL, C(/usr/bin/python3) on Debian and Ubuntu).
          - The call fails before any change when the node has none of them.
        type: list
        elements: path
  absent:
    description:
      - Paths to remove, in order, after the folders and files are converged. A file or link is removed, a folder
        with everything below it. A path that is not there is no change.
      - Each must be absolute, below C(/), and not also in O(folders) or O(files).
    type: list
    elements: path
    default: []
    version_added: "1.1.0"
  units:
    description:
      - systemd units whose unit files this call installs or removes.
      - Each unit with O(units[].enabled=false) whose unit file is still there is disabled before anything is
        removed, since systemd cannot disable a unit it cannot find. After the files, systemd reloads its units
        when a file given in a unit folder (such as C(/etc/systemd/system)) was written or removed; then each unit
        with O(units[].enabled=true) is enabled. Only what differs is changed.
      - In check mode a unit whose file is not installed yet is reported as to be enabled.
    type: list
    elements: dict
    default: []
    version_added: "1.1.0"
    suboptions:
      name:
        description: The unit's name, for example V(example.service).
        type: str
        required: true
      enabled:
        description: Whether the unit starts at boot.
        type: bool
        required: true
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
    description: One diff per file whose content changes, one per folder to create and one per path to remove.
    support: full
notes:
  - Paths that are not given are never touched; a role lists in O(absent) what it no longer installs.
  - O(timeout) bounds each C(systemctl) call; the module runs no other command, and none at all without O(units).
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
    units:
      - name: example.service
        enabled: true

- name: Disable a boot service, then remove it and its files, the unit last
  gpuops.hardening.installed_files:
    absent:
      - /usr/local/bin/example
      - /usr/local/lib/example
      - /etc/systemd/system/example.service
    units:
      - name: example.service
        enabled: false
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
removed_paths:
  description: The paths of O(absent) that were there and were removed (or would be, in check mode), below O(root).
  returned: always
  type: list
  elements: str
  sample: [/etc/systemd/system/example.service]
changed_units:
  description: The units of O(units) that were enabled or disabled (or would be, in check mode).
  returned: always
  type: list
  elements: str
  sample: [example.service]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import installed_files as engine
from ansible_collections.gpuops.hardening.plugins.module_utils.feature_module import run_engine


def main():
    module = AnsibleModule(argument_spec=engine.ARGUMENT_SPEC, supports_check_mode=True, **engine.SPEC_RULES)
    run_engine(module, engine)


if __name__ == "__main__":
    main()
