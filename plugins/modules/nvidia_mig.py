#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nvidia_mig
short_description: MIG mode and GPU instances as a declared state, changed minimally
version_added: "0.2.0"
description:
  - Brings each named GPU to its declared MIG mode and GPU instance counts, from O(layouts) or from a config of a
    mig-parted C(v1) file (O(mig_parted_config), O(mig_parted_name)).
  - Plans every GPU before it changes any. Every profile is checked against the GPU's own C(mig -lgip) table (or,
    for a GPU whose MIG mode is still off, that of a GPU of the same model) and the layout must fit the GPU's
    placements (C(mig -lgipp)); otherwise the module fails, naming the GPU and listing its profiles.
  - Touches only the GPUs whose layout differs. On those, it keeps every GPU instance the new layout still holds,
    with its UUID and its work, wherever the placements let the rest fit, and destroys only the others.
  - Never destroys a GPU instance, and never turns MIG off on a GPU, while compute processes run there; it lists
    them. O(force) overrides this.
  - A MIG mode change that the driver leaves pending (it waits for a GPU reset or a reboot) is reported per GPU in
    the C(pending) field of RV(gpus), with a warning; the module does not report the layout applied while it is pending. It does
    not reset GPUs itself.
author:
  - gpuops.hardening developers (@gpuops)
extends_documentation_fragment:
  - gpuops.hardening.host
options:
  layouts:
    description:
      - GPU index to its layout, C(mig_enabled) (bool) and C(mig_devices), GPU instance profile names to counts
        (one C(3g.40gb) and four C(1g.10gb), say). GPUs not named are left alone.
    type: dict
  mig_parted_config:
    description: A parsed mig-parted C(v1) file (C(version), C(mig-configs)), taken as mig-parted takes it.
    type: dict
  mig_parted_name:
    description: The config of O(mig_parted_config) to apply.
    type: str
  force:
    description: Destroy GPU instances and turn MIG off even while compute processes run there.
    type: bool
    default: false
  gpu_clients:
    description:
      - Services that keep GPUs open. Those of them that run are stopped around a MIG mode change or the destroying
        of instances, and exactly those are started again afterwards, also when the change failed.
      - The default follows mig-parted. nvidia-persistenced and nvidia-fabricmanager are never stopped; nvidia-smi
        coordinates with them.
    type: list
    elements: str
    default: [nvsm.service, nvidia-dcgm.service, dcgm-exporter.service, kubelet.service]
attributes:
  check_mode:
    description: Plans every GPU and reports the plan; nothing is changed.
    support: full
  diff_mode:
    description: Shows each GPU's plan (mode change, instances kept, destroyed and created).
    support: full
notes:
  - Compute-instance profiles (C(1c.3g.40gb)) are not handled yet; each GPU instance gets its default compute instance.
requirements:
  - nvidia-smi of a MIG-capable driver.
"""

EXAMPLES = r"""
- name: Three inference slices on GPU 0, MIG off on GPU 1
  gpuops.hardening.nvidia_mig:
    layouts:
      "0": {mig_enabled: true, mig_devices: {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}}
      "1": {mig_enabled: false}

- name: A config of an existing mig-parted file
  gpuops.hardening.nvidia_mig:
    mig_parted_config: "{{ lookup('ansible.builtin.file', 'mig-config.yaml') | from_yaml }}"
    mig_parted_name: all-1g.10gb
"""

RETURN = r"""
gpus:
  description: Each GPU with a declared layout, and what the call did or (in check mode) would do to it.
  returned: always
  type: list
  elements: dict
  sample: [{"index": 0, "uuid": "GPU-5d1b7a3e-0000-4000-8000-000000000000", "mig_enabled": true, "pending": false,
            "reset_required": false, "mode_change": null, "keep": [{"id": 2, "profile": "3g.40gb", "start": 0}],
            "destroy": [], "create": [{"profile": "1g.10gb", "profile_id": 19, "start": 4}], "changed": true}]
  contains:
    created:
      description: The GPU instances this call created (from nvidia-smi's own lines), when it created any.
      type: list
      elements: dict
clients_stopped:
  description: The GPU client services this call stopped, and started again.
  returned: always
  type: list
  elements: str
applied:
  description: True when every GPU reached its declared layout; false while a mode change is pending or in check mode.
  returned: always
  type: bool
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils.commands import CommandTimeout, run
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec
from ansible_collections.gpuops.hardening.plugins.module_utils.mig_converge import ClientError, MigError, SmiError, converge
from ansible_collections.gpuops.hardening.plugins.module_utils.mig_converge import plan_text
from ansible_collections.gpuops.hardening.plugins.module_utils.mig_parted import MigPartedError, desired_layouts, load_config
from ansible_collections.gpuops.hardening.plugins.module_utils.mig_survey import read_gpus
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import Systemctl

# mig-parted's default GPU clients: they keep GPUs open, so a mode change or reset cannot proceed under them.
GPU_CLIENTS = ("nvsm.service", "nvidia-dcgm.service", "dcgm-exporter.service", "kubelet.service")
KEEP_RUNNING = ("nvidia-persistenced.service", "nvidia-fabricmanager.service")


class Smi(object):
    """nvidia-smi calls with the module's timeout; a failure raises SmiError with its text."""

    def __init__(self, module):
        self.module = module
        self.path = module.get_bin_path("nvidia-smi")

    def call(self, args, allowed_rc=(0,)):
        argv = [self.path] + list(args)
        try:
            rc, out, err = run(self.module, argv, timeout=self.module.params["timeout"])
        except CommandTimeout as error:
            raise SmiError("%s; the NVIDIA driver is not answering" % error)
        if rc not in allowed_rc:
            raise SmiError("nvidia-smi %s failed with exit code %s: %s" % (" ".join(args), rc, (out + err).strip()))
        return out


class SystemdClients(object):
    """The GPU client services that run: stopped before the change, exactly those started after.
    nvidia-persistenced and nvidia-fabricmanager stay: nvidia-smi coordinates resets with them."""

    def __init__(self, module, units):
        self.systemctl = Systemctl(module, timeout=module.params["timeout"])
        self.units = [unit for unit in units if unit not in KEEP_RUNNING]

    def stop(self):
        if not self.units:
            return []
        stopped = []
        for unit, shown in zip(self.units, self.systemctl.show(self.units, ["LoadState", "ActiveState"])):
            if shown.get("LoadState") != "loaded" or shown.get("ActiveState") not in ("active", "activating", "reloading"):
                continue
            error = self.systemctl.try_verb("stop", unit)
            if error:
                failed = self.start(stopped)
                again = "; could not start again: " + ", ".join(failed) if failed else ""
                raise ClientError("could not stop %s: %s%s" % (unit, error, again))
            stopped.append(unit)
        return stopped

    def start(self, units):
        """Start the units in reverse order; returns those that failed, with their error."""
        failed = []
        for unit in reversed(units):
            error = self.systemctl.try_verb("start", unit)
            if error:
                failed.append("%s (%s)" % (unit, error))
        return failed


def declared_layouts(module, gpus):
    """{gpu index: {"mig_enabled", "mig_devices"}} from the options; fails on any bad entry."""
    params = module.params
    if params["mig_parted_config"] is not None:
        try:
            entries = load_config(params["mig_parted_config"], params["mig_parted_name"])
        except MigPartedError as error:
            module.fail_json(msg="mig_parted_config: %s; nothing was changed" % error)
        return desired_layouts(entries, [{"index": int(g["index"]), "pci_device_id": g["pci.device_id"]} for g in gpus])
    layouts = {}
    for key, layout in sorted((params["layouts"] or {}).items()):
        where = "layouts.%s" % key
        if not str(key).isdigit() or not isinstance(layout, dict) or not isinstance(layout.get("mig_enabled"), bool):
            module.fail_json(msg="%s: got %r; allowed: a GPU index to {mig_enabled: true|false, mig_devices: {...}}"
                             % (where, layout))
        devices = layout.get("mig_devices") or {}
        if not isinstance(devices, dict) or (devices and not layout["mig_enabled"]):
            module.fail_json(msg="%s.mig_devices: got %r; allowed: profile counts, and none when mig_enabled is false"
                             % (where, layout.get("mig_devices")))
        layouts[int(key)] = {"mig_enabled": layout["mig_enabled"], "mig_devices": dict(devices)}
    return layouts


def main():
    argument_spec = host_argument_spec()
    argument_spec.update(
        layouts=dict(type="dict"),
        mig_parted_config=dict(type="dict"),
        mig_parted_name=dict(type="str"),
        force=dict(type="bool", default=False),
        reset=dict(type="bool", default=True),
        require_applied=dict(type="bool", default=False),
        gpu_clients=dict(type="list", elements="str", default=list(GPU_CLIENTS)),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True,
                           mutually_exclusive=[("layouts", "mig_parted_config")],
                           required_one_of=[("layouts", "mig_parted_config")],
                           required_together=[("mig_parted_config", "mig_parted_name")])
    params = module.params
    smi = Smi(module)
    if not smi.path:
        module.fail_json(msg="nvidia-smi not found: this host has no NVIDIA driver", changed=False, gpus=[])
    try:
        layouts = declared_layouts(module, read_gpus(smi))
        result = converge(smi, layouts, force=params["force"], reset=params["reset"], check_mode=module.check_mode,
                          clients=SystemdClients(module, params["gpu_clients"]), root=params["root"],
                          require_applied=params["require_applied"])
    except SmiError as error:
        module.fail_json(msg="nothing was changed: %s" % error, changed=False, gpus=[])
    except MigError as error:
        _report(module, error.result)
        module.fail_json(msg=str(error), **error.result)
    _report(module, result)
    module.exit_json(**result)


def _report(module, result):
    """Warnings to Ansible, and each changed GPU's plan as --diff."""
    for warning in result.pop("warnings", []):
        module.warn(warning)
    if module._diff:
        result["diff"] = [{"before_header": "GPU %d" % e["index"], "after_header": "GPU %d" % e["index"],
                           "before": "", "after": plan_text(e)} for e in result["gpus"] if e["changed"]]


if __name__ == "__main__":
    main()
