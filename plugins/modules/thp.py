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
  - Writes a systemd oneshot unit that re-applies the values at boot, enables it, and reloads systemd when the
    unit changed, all in the same call; or, with O(persist=false), removes the unit it wrote before.
  - Reports a C(transparent_hugepage=) on the kernel command line that contradicts the wanted C(enabled).
  - Where sysfs is read-only (inside containers), the live apply is skipped with a warning
    and the persistent unit is still converged.
author:
  - gpuops.hardening developers (@gpuops)
extends_documentation_fragment:
  - gpuops.hardening.host
  - gpuops.hardening.host.lock
  - gpuops.hardening.host.live
options:
  enabled:
    description:
      - Wanted C(enabled) value. Left as it is when omitted.
      - A value the running kernel does not list in its C(enabled) file fails the module, naming what the kernel offers.
    type: str
    choices: [always, madvise, never]
  defrag:
    description:
      - Wanted C(defrag) value. Left as it is when omitted.
      - A value the running kernel does not list (older kernels lack C(defer+madvise)) fails the module, naming what
        the kernel offers.
    type: str
    choices: [always, defer, defer+madvise, madvise, never]
  khugepaged_defrag:
    description: Whether khugepaged may compact memory to build huge pages. Left as it is when omitted.
    type: bool
  cmdline_conflict_action:
    description:
      - What to do when the kernel command line contradicts O(enabled).
      - V(fail) fails before anything is changed.
    type: str
    choices: [warn, fail, ignore]
    default: warn
  persist:
    description:
      - V(true) writes, at O(unit_path), a systemd oneshot unit that re-applies the wanted values at every boot,
        enables it, and reloads systemd when it changed.
      - V(false) disables and removes a unit at O(unit_path) that this module wrote (recognised by its first line),
        so old values are not re-applied at boot. A file there that this module did not write is left alone, with a
        warning.
    type: bool
    default: true
  profile:
    description: Name of the workload profile the values come from; the unit's C(Description) names it.
    type: str
  unit_path:
    description: Path of the boot unit on the host (taken below O(root)).
    type: path
    default: /etc/systemd/system/gpuops-thp.service
attributes:
  check_mode:
    description: Reports what would change without writing sysfs or the unit; systemctl is only asked, never told.
    support: full
  diff_mode:
    description: Shows the live values and the unit file before and after.
    support: full
notes:
  - The live values belong to the running kernel; inside a container they are the host's and are never written.
  - The unit orders itself before C(basic.target), docker, containerd, kubelet, slurmd and nvidia-persistenced, and
    its C(ConditionPathIsReadWrite=) makes it a no-op where sysfs is read-only (containers).
requirements:
  - systemd, for the boot unit.
"""

EXAMPLES = r"""
- name: THP for a training node, re-applied at every boot
  gpuops.hardening.thp:
    enabled: always
    defrag: defer+madvise
    khugepaged_defrag: true
    profile: training

- name: THP for an inference node, live only, removing an earlier boot unit
  gpuops.hardening.thp:
    enabled: madvise
    defrag: defer
    khugepaged_defrag: false
    profile: inference
    persist: false
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
  description:
    - Explanation of the conflict, or null. It says whether this run sets the value on the running kernel and whether
      a boot unit sets it again after every boot.
  returned: always
  type: str
unit:
  description:
    - What happened to the boot unit. C(present) and C(enabled) describe it after the call; C(managed) is false for a
      file at O(unit_path) that this module did not write (left alone).
  returned: always
  type: dict
  sample: {"path": "/etc/systemd/system/gpuops-thp.service", "changed": false, "present": true, "enabled": true,
           "managed": true}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import thp as engine
from ansible_collections.gpuops.hardening.plugins.module_utils.feature_module import run_engine


def main():
    module = AnsibleModule(argument_spec=engine.ARGUMENT_SPEC, supports_check_mode=True, **engine.SPEC_RULES)
    run_engine(module, engine)


if __name__ == "__main__":
    main()
