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
extends_documentation_fragment:
  - gpuops.hardening.host
  - gpuops.hardening.host.lock
  - gpuops.hardening.host.live
options:
  settings:
    description:
      - The settings, as key and value. Keys may use C(.) or C(/) separators, as in sysctl.d; they are written
        and reported in the dotted form C(sysctl -a) prints.
      - Values are written as given; integers are converted to text.
      - A null value leaves that key unmanaged, as if it were not given.
    type: dict
    required: true
  notes:
    description:
      - One-line comments, by key, written above that key in the file, so that the file explains itself.
      - Notes for keys not in O(settings) are ignored.
    type: dict
    default: {}
  description:
    description: Text for the file's header comment, such as what the settings are for.
    type: str
  path:
    description:
      - The sysctl.d file that holds the settings, below O(root). systemd-sysctl reads only names ending in C(.conf).
    type: path
    default: /etc/sysctl.d/90-gpuops-hardening.conf
  conflict_action:
    description:
      - What to do when another file would override a setting at boot, or hides O(path).
      - V(fail) fails before anything is changed.
    type: str
    choices: [warn, fail, ignore]
    default: warn
attributes:
  check_mode:
    description: Reports what would change without writing the file or any live value.
    support: full
  diff_mode:
    description: Shows the file and each changed live value before and after.
    support: full
notes:
  - The kernel keeps only one of C(vm.dirty_bytes) and C(vm.dirty_ratio), and of C(vm.dirty_background_bytes) and
    C(vm.dirty_background_ratio); another file that sets the partner of a managed key after O(path) is a conflict,
    since that zeroes the managed key at boot.
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

- name: With a comment above a key, failing on any boot-time override
  gpuops.hardening.sysctl_settings:
    settings:
      vm.swappiness: 0
      vm.dirty_ratio: null  # left as it is
    notes:
      vm.swappiness: Swap is off; never swap anonymous memory out early.
    description: "Kernel VM settings for GPU nodes: training profile."
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
  description:
    - Values from other files that would override the managed file at boot.
    - C(other_key) is the key the other file sets; it differs from C(key) when that file sets the partner of a
      paired key (C(vm.dirty_ratio) for C(vm.dirty_bytes)), which zeroes C(key).
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
      other_key: vm.swappiness
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
  description: What happened to the sysctl.d file (its path below O(root)).
  returned: always
  type: dict
  sample: {"path": "/etc/sysctl.d/90-gpuops-hardening.conf", "changed": true}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import sysctl_settings as engine
from ansible_collections.gpuops.hardening.plugins.module_utils.feature_module import run_engine


def main():
    module = AnsibleModule(argument_spec=engine.ARGUMENT_SPEC, supports_check_mode=True, **engine.SPEC_RULES)
    run_engine(module, engine)


if __name__ == "__main__":
    main()
