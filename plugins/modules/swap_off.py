#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: swap_off
short_description: Turn swap off now and keep it off across reboots, zram included
version_added: "0.1.0"
description:
  - Converges a node to running without swap in one call, reporting every change.
  - Turns off every active swap area (C(swapoff)), unless the swap in use would not fit in the memory available
    minus a safety margin; then it fails before changing anything, unless O(force) is set.
  - Comments out the swap entries of C(/etc/fstab), with a backup, touching no other line.
  - Masks C(swap.target), every C(.swap) unit the node has or would generate from fstab, the zram-generator units
    (C(dev-zramN.swap), C(systemd-zram-setup@zramN.service)) and the zram swap services in O(zram_services).
    A regular unit file in the way is backed up first.
  - Writes a zram-generator drop-in that keeps its swap devices from being created; zram devices that hold file
    systems are left alone.
  - Inside containers C(/proc/swaps) shows the host kernel's swap, so the live part is skipped with a warning and the
    persistent part is still converged.
author:
  - gpuops.hardening developers (@gpuops)
extends_documentation_fragment:
  - gpuops.hardening.host
  - gpuops.hardening.host.lock
  - gpuops.hardening.host.live
options:
  margin_mib:
    description: Memory, in MiB, that must stay available after all swapped-out pages are back in RAM.
    type: int
    default: 1024
  force:
    description: Turn swap off even when the safety check fails. The kernel may then OOM-kill running work.
    type: bool
    default: false
  mask_swap_target:
    description:
      - Mask C(swap.target), so that no swap unit is pulled in at boot, including ones that appear later
        (a new fstab entry, a GPT swap partition found by systemd-gpt-auto-generator).
    type: bool
    default: true
  zram_services:
    description: zram swap services to mask where their unit exists (zram-tools, Ubuntu's zram-config).
    type: list
    elements: str
    default: [zramswap.service, zram-config.service]
  timeout:
    description: Seconds allowed for each swapoff and systemctl call. Paging a large swap area back in takes a while.
    type: int
    default: 600
attributes:
  check_mode:
    description: Reports the swap it would turn off and the files and masks it would write, changing nothing.
    support: full
  diff_mode:
    description: Shows fstab, each mask, the zram drop-in and the active swap areas before and after.
    support: full
notes:
  - With O(apply_live=false) active swap is left on; only the persistent configuration is converged.
  - When O(root) is not C(/), systemd is not reloaded (an image prepared offline, or a test tree).
  - The unit of an fstab C(LABEL=), C(UUID=), C(PARTUUID=) or C(PARTLABEL=) entry is named after its
    C(/dev/disk/by-*) link, as systemd's fstab-generator names it.
  - Nothing is ever unmasked or uncommented; to bring swap back, restore the fstab backup and unmask the units.
requirements:
  - swapoff (util-linux) when swap is active; systemd.
"""

EXAMPLES = r"""
- name: Run without swap, refusing when the swap in use does not fit in memory minus 2 GiB
  gpuops.hardening.swap_off:
    margin_mib: 2048

- name: Persist only, for an image build
  gpuops.hardening.swap_off:
    apply_live: false
"""

RETURN = r"""
swaps:
  description: Swap areas active before the call, as C(/proc/swaps) shows them.
  returned: always
  type: list
  elements: dict
  sample: [{"path": "/swapfile", "type": "file", "size_kib": 1048572, "used_kib": 2048, "priority": -2}]
swapoff:
  description: Swap areas turned off (or that would be, in check mode).
  returned: always
  type: list
  elements: str
  sample: ["/swapfile"]
swap_used_kib:
  description: Swap in use across the areas to turn off.
  returned: always
  type: int
mem_available_kib:
  description: MemAvailable from C(/proc/meminfo).
  returned: always
  type: int
live_applied:
  description: Whether the node's kernel runs without swap after the call.
  returned: always
  type: bool
live_skipped_reason:
  description: Why the live swapoff was skipped, or null.
  returned: always
  type: str
  sample: inside this docker container /proc/swaps shows the host kernel's swap, which is not this node's to turn off
fstab:
  description: What happened to fstab; null when there is none.
  returned: always
  type: dict
  sample: {"path": "/etc/fstab", "changed": true, "backup_file": "/etc/fstab.1234.2026-01-01@00:00:00~",
           "commented": ["/swapfile none swap sw 0 0"]}
masked_units:
  description: Every unit this call keeps masked.
  returned: always
  type: list
  elements: str
  sample: ["swap.target", "swapfile.swap", "dev-zram0.swap", "systemd-zram-setup@zram0.service"]
masks_changed:
  description: The units newly masked by this call, with any backup of a unit file that was in the way.
  returned: always
  type: list
  elements: dict
  sample: [{"unit": "swap.target", "backup_file": null}]
zram:
  description: zram-generator swap devices disabled by the drop-in, and what happened to it.
  returned: always
  type: dict
  sample: {"devices": ["zram0"], "dropin": "/etc/systemd/zram-generator.conf.d/99-gpuops-hardening-no-swap.conf",
           "changed": false}
daemon_reloaded:
  description: Whether systemd was reloaded to pick up changed masks or fstab.
  returned: always
  type: bool
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import swap_off as engine
from ansible_collections.gpuops.hardening.plugins.module_utils.feature_module import run_engine


def main():
    module = AnsibleModule(argument_spec=engine.ARGUMENT_SPEC, supports_check_mode=True, **engine.SPEC_RULES)
    run_engine(module, engine)


if __name__ == "__main__":
    main()
