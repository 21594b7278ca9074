#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nvidia_mig
short_description: MIG mode, GPU instances and compute instances as a declared state, changed minimally
version_added: "0.2.0"
description:
  - Brings each named GPU to its declared MIG mode and instance counts, from O(layouts) or from a config of a
    mig-parted C(v1) file (O(mig_parted_config), O(mig_parted_name)).
  - Profile names mean what they mean to mig-parted. C(3g.40gb) is a GPU instance with its default compute instance
    (the whole GPU instance). C(1c.3g.40gb) is a compute instance of one compute slice on a C(3g.40gb) GPU instance;
    its count counts compute instances, which fill one GPU instance (largest first) before the next is made. A suffix
    such as C(+me) belongs to the GPU instance profile (C(1g.10gb+me)).
  - Plans every GPU before it changes any. Every profile is checked against the GPU's own C(mig -lgip) table (or,
    for a GPU whose MIG mode is still off, that of a GPU of the same model), compute-instance profiles against what
    existing GPU instances of that profile offer (C(mig -lcip)), and the layout must fit the GPU's placements
    (C(mig -lgipp)); otherwise the module fails, naming the GPU and listing its profiles.
  - Touches only the GPUs whose layout differs. On those, it keeps every GPU instance the new layout still holds
    (same profile and same compute instances), with its UUID and its work, wherever the placements let the rest
    fit, and destroys only the others.
  - Never destroys a GPU instance, turns MIG off or resets a GPU while compute processes run there; it lists them.
    With O(force) it ends them first (SIGTERM, then SIGKILL after ten seconds), as the driver refuses to destroy or
    reset under a compute process.
  - A GPU lists its MIG profiles only once its MIG mode is on. Where no GPU of its model has MIG on yet, its
    instances are planned and checked right after its mode applies, in the same run; before that only the form of
    the profile names is checked.
  - A MIG mode change that the driver leaves pending is followed, with O(reset), by a reset of that GPU alone
    (C(nvidia-smi -i N -r)) while the O(gpu_clients) are stopped; once the mode applied, the instances are created
    in the same run. Where the host cannot reset the GPU (its PCI function has no sysfs C(reset), or C(nvidia_drm)
    is loaded with users), this is known while planning; the mode change is still made, for a reboot to apply, and
    the GPU reports C(reboot_required) with the reason.
  - A reset that fails is tried once more after two seconds, unless the cause cannot pass (C(Not Supported), or
    compute processes); then the module fails, naming the cause, with C(reboot_required) set.
  - Where destroying an instance is refused because a client that is not a compute process holds it, the module
    fails and recreates, at the same placements and profiles, the instances it had already destroyed on that GPU
    (their UUIDs change); it creates nothing new there.
author:
  - gpuops.hardening developers (@gpuops)
extends_documentation_fragment:
  - gpuops.hardening.host
  - gpuops.hardening.host.lock
options:
  layouts:
    description:
      - GPU index to its layout, C(mig_enabled) (bool) and C(mig_devices), profile names to counts (one C(3g.40gb)
        and four C(1g.10gb), or three C(1c.3g.40gb), say). GPUs not named are left alone.
    type: dict
  layouts_variable:
    description:
      - The name of the variable that sets O(layouts), such as the mig role's C(mig_layouts). A message about a GPU
        the host lacks or a layout a GPU cannot take starts with it, as C(mig_layouts.0) for GPU 0; without it, with
        C(layouts).
    type: str
  mig_parted_config:
    description: A parsed mig-parted C(v1) file (C(version), C(mig-configs)), taken as mig-parted takes it.
    type: dict
  mig_parted_name:
    description: The config of O(mig_parted_config) to apply.
    type: str
  force:
    description:
      - Destroy instances, turn MIG off and reset GPUs even while compute processes run there, ending those
        processes first (SIGTERM, then SIGKILL).
    type: bool
    default: false
  reset:
    description:
      - Reset a GPU whose MIG mode change the driver leaves pending, and create its instances in the same run.
      - When false, the change is reported pending (C(reset_required)) and a reset or a reboot applies it later.
    type: bool
    default: true
  require_applied:
    description:
      - Fail the task unless every GPU reaches its declared layout in this run. A GPU that only a reboot can bring
        there is found while planning, and then nothing is changed.
      - RV(applied) is false in either case while anything is pending.
    type: bool
    default: false
  gpu_clients:
    description:
      - Services that keep GPUs open. Those of them that run are stopped around a MIG mode change, a reset or the
        destroying of instances, and exactly those are started again afterwards, also when the change failed.
      - Before stopping any, the module records those it stops in C(/var/lib/gpuops-hardening/mig-clients-stopped.json),
        and removes the record once they run again. Every call first starts the units of a record left by a call
        that was killed in between (RV(clients_restarted)), with a warning.
      - The default follows mig-parted. nvidia-persistenced and nvidia-fabricmanager are never stopped; nvidia-smi
        coordinates with them.
    type: list
    elements: str
    default: [nvsm.service, nvidia-dcgm.service, dcgm-exporter.service, kubelet.service]
attributes:
  check_mode:
    description:
      - Plans every GPU and returns the result the run would return (where it would leave each GPU, the clients it
        would stop, RV(reboot_required), RV(applied)); nothing is changed.
      - Only the instances nvidia-smi creates (C(created)) are the real run's alone, and a driver that applies a mode
        change at once, with nothing holding the GPU, leaves it pending in check mode's answer but not in the run's.
    support: full
  diff_mode:
    description: Shows each GPU's plan (mode change, instances kept, destroyed and created, the reset to run).
    support: full
requirements:
  - nvidia-smi of a MIG-capable driver.
"""

EXAMPLES = r"""
- name: Three inference slices on GPU 0, MIG off on GPU 1
  gpuops.hardening.nvidia_mig:
    layouts:
      "0": {mig_enabled: true, mig_devices: {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}}
      "1": {mig_enabled: false}

- name: One 3g.40gb GPU instance split into three compute instances, failing unless applied now
  gpuops.hardening.nvidia_mig:
    layouts:
      "2": {mig_enabled: true, mig_devices: {"1c.3g.40gb": 3}}
    require_applied: true

- name: A config of an existing mig-parted file, recording the layouts for the boot-time service
  gpuops.hardening.nvidia_mig:
    mig_parted_config: "{{ lookup('ansible.builtin.file', 'mig-config.yaml') | from_yaml }}"
    mig_parted_name: all-1g.10gb
  register: mig
"""

RETURN = r"""
gpus:
  description: Each GPU with a declared layout, and what the call did or (in check mode) would do to it.
  returned: always
  type: list
  elements: dict
  sample: [{"index": 0, "uuid": "GPU-5d1b7a3e-0000-4000-8000-000000000000", "mig_enabled": true, "pending": false,
            "reset_required": false, "reboot_required": false, "reboot_reason": null, "mode_change": null,
            "reset": false, "keep": [{"id": 2, "profile": "3g.40gb", "start": 0}], "destroy": [],
            "create": [{"profile": "1g.10gb", "profile_id": 19, "start": 4,
                        "compute_instances": [{"profile": "1g.10gb", "profile_id": 0}]}], "changed": true}]
  contains:
    pending:
      description: The GPU's MIG mode change has not applied yet.
      type: bool
    reset_required:
      description: Pending, and a reset would apply it (O(reset) was false).
      type: bool
    reboot_required:
      description: Pending, and only a reboot applies it (the host cannot reset the GPU, or the reset failed).
      type: bool
    reboot_reason:
      description: Why the GPU cannot be reset, or why its reset failed; null otherwise.
      type: str
    mode_change:
      description: The MIG mode asked of the driver (C(Enabled), C(Disabled)), or null.
      type: str
    reset:
      description: A reset of the GPU is planned (check mode) or was run, its mode change being pending.
      type: bool
    deferred:
      description: The instances are planned once the MIG mode is on, the GPU listing its profiles only then.
      type: bool
    end_processes:
      description: With O(force), the compute processes (C(pid), C(name)) ended before the change.
      type: list
      elements: dict
    summary:
      description: One line for people, such as C(MIG on, 1g.10gb x7; in place) or C(MIG on, ...; waits for a reboot).
      type: str
    keep:
      description: The GPU instances kept, with their compute instances.
      type: list
      elements: dict
    destroy:
      description: The GPU instances destroyed, with their compute instances.
      type: list
      elements: dict
    create:
      description: The GPU instances to create (C(profile), C(profile_id), C(start)), each with its compute instances.
      type: list
      elements: dict
    created:
      description: The GPU instances this call created (from nvidia-smi's own lines), when it created any.
      type: list
      elements: dict
    recreated:
      description:
        - After a destroy that a hidden holder refused, the instances recreated at their placements, with new UUIDs.
      type: list
      elements: dict
layouts:
  description:
    - The declared layouts as resolved (from O(layouts) or the mig-parted config), GPU index as a string to
      C(mig_enabled) and C(mig_devices); the boot-time MIG service takes this.
  returned: always
  type: dict
  sample: {"0": {"mig_enabled": true, "mig_devices": {"1c.3g.40gb": 3}}}
gpu_clients:
  description: The services this call stops around disruptive changes when they run (O(gpu_clients) without
    nvidia-persistenced and nvidia-fabricmanager); the boot-time MIG service orders itself before them.
  returned: always
  type: list
  elements: str
clients_stopped:
  description: The GPU client services this call stopped, and started again (in check mode, would stop).
  returned: always
  type: list
  elements: str
clients_restarted:
  description:
    - The GPU client services an earlier run stopped and, killed before it started them again, left recorded in
      C(/var/lib/gpuops-hardening/mig-clients-stopped.json); this call started them (in check mode, would start
      them) before anything else, and removed the record.
  returned: always
  type: list
  elements: str
applied:
  description: True when every GPU reached its declared layout (in check mode, would reach it); false while anything is pending.
  returned: always
  type: bool
reboot_required:
  description: A GPU's MIG mode change waits for a reboot.
  returned: always
  type: bool
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import nvidia_mig as engine
from ansible_collections.gpuops.hardening.plugins.module_utils.feature_module import run_engine


def main():
    module = AnsibleModule(argument_spec=engine.ARGUMENT_SPEC, supports_check_mode=True, **engine.SPEC_RULES)
    run_engine(module, engine)


if __name__ == "__main__":
    main()
