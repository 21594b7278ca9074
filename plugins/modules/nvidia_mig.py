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

from ansible_collections.gpuops.hardening.plugins.module_utils import nvidia_smi
from ansible_collections.gpuops.hardening.plugins.module_utils.commands import CommandTimeout, run
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec
from ansible_collections.gpuops.hardening.plugins.module_utils.mig_parted import MigPartedError, desired_layouts, load_config
from ansible_collections.gpuops.hardening.plugins.module_utils.mig_plan import LayoutError, gpu_profiles, plan
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import Systemctl

# mig-parted's default GPU clients: they keep GPUs open, so a mode change or reset cannot proceed under them.
GPU_CLIENTS = ("nvsm.service", "nvidia-dcgm.service", "dcgm-exporter.service", "kubelet.service")
KEEP_RUNNING = ("nvidia-persistenced.service", "nvidia-fabricmanager.service")
QUERY = ["--query-gpu=index,uuid,name,pci.device_id,mig.mode.current,mig.mode.pending", "--format=csv"]


class SmiError(Exception):
    """An nvidia-smi call failed; the message names the command and its output."""


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

    def gpus(self):
        return nvidia_smi.parse_query_csv(self.call(QUERY))


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


def profile_tables(smi, gpus):
    """{gpu index: profiles} for every GPU in MIG mode; GPUs without MIG borrow a GPU of their model's."""
    enabled = [int(g["index"]) for g in gpus if g["mig.mode.current"] == "Enabled"]
    tables = {}
    if enabled:
        rows = nvidia_smi.parse_gpu_instance_profiles(smi.call(["mig", "-lgip"]))
        placements = nvidia_smi.parse_gpu_instance_placements(smi.call(["mig", "-lgipp"]))
        tables = dict((index, gpu_profiles(rows, placements, index)) for index in enabled)
    by_model = dict((g["name"], tables[int(g["index"])]) for g in gpus if int(g["index"]) in tables)
    for gpu in gpus:
        if int(gpu["index"]) not in tables and gpu["name"] in by_model:
            tables[int(gpu["index"])] = by_model[gpu["name"]]
    return tables


def current_instances(smi, gpus):
    """{gpu index: [{"id", "profile", "start", ...}]} for the GPUs in MIG mode."""
    instances = dict((int(g["index"]), []) for g in gpus if g["mig.mode.current"] == "Enabled")
    if instances:
        # Exit code 6 with "No GPU instances found" is an empty list, not a failure.
        for instance in nvidia_smi.parse_gpu_instances(smi.call(["mig", "-lgi"], allowed_rc=(0, 6))):
            instances.setdefault(instance["gpu"], []).append(instance)
    return instances


def plan_gpu(gpu, layout, tables, instances, processes, force):
    """(entry, errors) for one GPU: what would change, and why it must not."""
    index = int(gpu["index"])
    describe = "GPU %d (%s, %s)" % (index, gpu["name"], gpu["uuid"])
    current = gpu["mig.mode.current"]
    entry = {"index": index, "uuid": gpu["uuid"], "mig_enabled": current == "Enabled", "pending": False,
             "reset_required": False, "mode_change": None, "keep": [], "destroy": [], "create": [], "changed": False}
    if current is None:
        return entry, (["%s does not support MIG" % describe] if layout["mig_enabled"] else [])
    wanted = "Enabled" if layout["mig_enabled"] else "Disabled"
    if gpu["mig.mode.pending"] != wanted:
        entry["mode_change"] = wanted
    elif current != wanted:
        entry.update(pending=True, reset_required=True)
    errors = []
    if layout["mig_enabled"]:
        if index not in tables:
            return entry, ["%s: its MIG profiles cannot be listed before MIG mode is on, and no GPU of its model has "
                           "MIG on; enable MIG first, then declare the instances" % describe] if layout["mig_devices"] else []
        try:
            steps = plan(tables[index], instances.get(index, []), layout["mig_devices"])
        except LayoutError as error:
            return entry, ["%s: %s" % (describe, error)]
        if current == "Enabled":
            entry.update(keep=steps["keep"], destroy=steps["destroy"], create=steps["create"])
    elif current == "Enabled":
        entry["destroy"] = list(instances.get(index, []))
    going = set(instance["id"] for instance in entry["destroy"])
    busy = [p for p in processes if p["gpu_instance_id"] in going or (entry["mode_change"] == "Disabled" and current == "Enabled")]
    if busy and not force:
        errors.append("%s: compute processes run where this change would destroy instances: %s; stop them or set force"
                      % (describe, ", ".join("pid %s (%s, GPU instance %s)" % (p["pid"], p["name"], p["gpu_instance_id"])
                                             for p in busy)))
    entry["changed"] = bool(entry["mode_change"] or entry["destroy"] or entry["create"])
    return entry, errors


def apply_gpu(smi, entry):
    """Destroy, then change the mode or create; the entry says what is pending afterwards."""
    index = str(entry["index"])
    for instance in entry["destroy"]:
        # A GPU instance goes with its compute instances; -dci on one without any answers 6.
        smi.call(["mig", "-i", index, "-gi", str(instance["id"]), "-dci"], allowed_rc=(0, 6))
        smi.call(["mig", "-i", index, "-gi", str(instance["id"]), "-dgi"])
    if entry["mode_change"]:
        smi.call(["-i", index, "-mig", "1" if entry["mode_change"] == "Enabled" else "0"])
        gpu = next(g for g in smi.gpus() if int(g["index"]) == entry["index"])
        entry["mig_enabled"] = gpu["mig.mode.current"] == "Enabled"
        entry["pending"] = entry["reset_required"] = gpu["mig.mode.current"] != gpu["mig.mode.pending"]
    if entry["create"] and entry["mig_enabled"]:
        spec = ",".join("%d:%d" % (c["profile_id"], c["start"]) for c in entry["create"])
        output = smi.call(["mig", "-i", index, "-cgi", spec, "-C"])
        created = nvidia_smi.parse_mig_command_output(output)
        if created["errors"] or len(created["gpu_instances"]) != len(entry["create"]):
            raise SmiError("GPU %s: creating %s failed: %s" % (index, spec, "; ".join(created["errors"]) or output))
        entry["created"] = created["gpu_instances"]


def create_after_mode_change(smi, layouts, entries):
    """Where MIG mode came on at once (no reset needed), the instances follow in the same run."""
    ready = [e for e in entries if e["mode_change"] == "Enabled" and e["mig_enabled"] and layouts[e["index"]]["mig_devices"]]
    if not ready:
        return
    gpus = smi.gpus()
    tables = profile_tables(smi, gpus)
    instances = current_instances(smi, gpus)
    for entry in ready:
        try:
            steps = plan(tables[entry["index"]], instances.get(entry["index"], []), layouts[entry["index"]]["mig_devices"])
        except LayoutError as error:
            raise SmiError("GPU %d: MIG mode is on, but %s" % (entry["index"], error))
        entry.update(keep=steps["keep"], destroy=steps["destroy"], create=steps["create"], mode_change=None)
        apply_gpu(smi, entry)
        entry["mode_change"] = "Enabled"


def plan_text(entry):
    lines = ["mode: %s" % (entry["mode_change"] and "-> " + entry["mode_change"] or ("Enabled" if entry["mig_enabled"] else "Disabled"))]
    lines.extend("keep %s (GPU instance %d at %d)" % (i["profile"], i["id"], i["start"]) for i in entry["keep"])
    lines.extend("destroy %s (GPU instance %d at %d)" % (i["profile"], i["id"], i["start"]) for i in entry["destroy"])
    lines.extend("create %s at %d" % (c["profile"], c["start"]) for c in entry["create"])
    return "\n".join(lines) + "\n"


def stop_clients(systemctl, units):
    """Stop the GPU client services that run; returns (stopped in order, error or None).
    nvidia-persistenced and nvidia-fabricmanager stay: nvidia-smi coordinates resets with them."""
    units = [unit for unit in units if unit not in KEEP_RUNNING]
    if not units:
        return [], None
    stopped = []
    for unit, shown in zip(units, systemctl.show(units, ["LoadState", "ActiveState"])):
        if shown.get("LoadState") != "loaded" or shown.get("ActiveState") not in ("active", "activating", "reloading"):
            continue
        error = systemctl.try_verb("stop", unit)
        if error:
            return stopped, "could not stop %s: %s" % (unit, error)
        stopped.append(unit)
    return stopped, None


def restart_clients(systemctl, stopped):
    """Start again exactly the services stop_clients stopped, in reverse order; returns those that failed."""
    failed = []
    for unit in reversed(stopped):
        error = systemctl.try_verb("start", unit)
        if error:
            failed.append("%s (%s)" % (unit, error))
    return failed


def converge(module, smi, result):
    gpus = smi.gpus()
    layouts = declared_layouts(module, gpus)
    unknown = sorted(set(layouts) - set(int(g["index"]) for g in gpus))
    if unknown:
        module.fail_json(msg="GPU %s is not on this host (GPUs: %s); nothing was changed" % (
            ", ".join(str(i) for i in unknown), ", ".join(g["index"] for g in gpus)), **result)

    tables = profile_tables(smi, gpus)
    instances = current_instances(smi, gpus)
    processes = nvidia_smi.parse_query_xml(smi.call(["-q", "-x"]))["gpus"]
    errors = []
    for gpu in gpus:
        index = int(gpu["index"])
        if index in layouts:
            entry, gpu_errors = plan_gpu(gpu, layouts[index], tables, instances, processes[index]["processes"],
                                         module.params["force"])
            result["gpus"].append(entry)
            errors.extend(gpu_errors)
    if errors:
        module.fail_json(msg="nothing was changed: " + "; ".join(errors), **result)

    result["changed"] = any(entry["changed"] for entry in result["gpus"])
    if module._diff:
        result["diff"] = [{"before_header": "GPU %d" % e["index"], "after_header": "GPU %d" % e["index"],
                           "before": "", "after": plan_text(e)} for e in result["gpus"] if e["changed"]]
    if module.check_mode or not result["changed"]:
        result["applied"] = not module.check_mode and not any(e["pending"] for e in result["gpus"])
        return
    # GPU clients hold the GPUs: they stop around mode changes and destroys, and exactly those start again.
    systemctl = Systemctl(module, timeout=module.params["timeout"])
    disruptive = any(e["mode_change"] or e["destroy"] for e in result["gpus"])
    stopped, error = stop_clients(systemctl, module.params["gpu_clients"]) if disruptive else ([], None)
    result["clients_stopped"] = stopped
    if error:
        failed = restart_clients(systemctl, stopped)
        again = "; could not start again: " + ", ".join(failed) if failed else ""
        module.fail_json(msg="nothing was changed: %s%s" % (error, again), **result)
    try:
        for entry in result["gpus"]:
            if entry["changed"]:
                apply_gpu(smi, entry)
        create_after_mode_change(smi, layouts, result["gpus"])
    except SmiError as error:
        failed = restart_clients(systemctl, stopped)
        again = "; could not start again: " + ", ".join(failed) if failed else ""
        module.fail_json(msg="%s%s" % (error, again), **result)
    failed = restart_clients(systemctl, stopped)
    if failed:
        module.fail_json(msg="the MIG layout is applied, but these GPU clients did not start again: " + ", ".join(failed),
                         **result)
    pending = [e for e in result["gpus"] if e["pending"]]
    for entry in pending:
        module.warn("GPU %d: the MIG mode change waits for a GPU reset or a reboot; its instances follow once it "
                    "applies" % entry["index"])
    result["applied"] = not pending


def main():
    argument_spec = host_argument_spec()
    argument_spec.update(
        layouts=dict(type="dict"),
        mig_parted_config=dict(type="dict"),
        mig_parted_name=dict(type="str"),
        force=dict(type="bool", default=False),
        gpu_clients=dict(type="list", elements="str", default=list(GPU_CLIENTS)),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True,
                           mutually_exclusive=[("layouts", "mig_parted_config")],
                           required_one_of=[("layouts", "mig_parted_config")],
                           required_together=[("mig_parted_config", "mig_parted_name")])
    result = dict(changed=False, gpus=[], applied=False, clients_stopped=[])
    smi = Smi(module)
    if not smi.path:
        module.fail_json(msg="nvidia-smi not found: this host has no NVIDIA driver", **result)
    try:
        converge(module, smi, result)
    except SmiError as error:
        module.fail_json(msg="nothing was changed: %s" % error, **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
