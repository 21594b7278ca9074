# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the GPUs have, and the plan of each declared GPU: the reading half of mig_converge.

Standard library only, loaded as mig_converge is (see there).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from . import nvidia_smi
from .host_options import read_text, under_root
from .mig_plan import LayoutError, gpu_profiles, plan, split_profile
from .pci_bus_id import sysfs_bus_id

QUERY = ["--query-gpu=index,uuid,name,pci.device_id,pci.bus_id,mig.mode.current,mig.mode.pending", "--format=csv"]


def read_gpus(smi):
    return nvidia_smi.parse_query_csv(smi.read(QUERY))


def read_profile_tables(smi, gpus):
    """{gpu index: profiles} for every GPU in MIG mode; GPUs without MIG borrow a GPU of their model's."""
    enabled = [int(g["index"]) for g in gpus if g["mig.mode.current"] == "Enabled"]
    tables = {}
    if enabled:
        rows = nvidia_smi.parse_gpu_instance_profiles(smi.read(["mig", "-lgip"]))
        placements = nvidia_smi.parse_gpu_instance_placements(smi.read(["mig", "-lgipp"]))
        tables = dict((index, gpu_profiles(rows, placements, index)) for index in enabled)
    by_model = dict((g["name"], tables[int(g["index"])]) for g in gpus if int(g["index"]) in tables)
    for gpu in gpus:
        if int(gpu["index"]) not in tables and gpu["name"] in by_model:
            tables[int(gpu["index"])] = by_model[gpu["name"]]
    return tables


def read_instances(smi, gpus):
    """{gpu index: [GPU instance with its "compute_instances"]} for the GPUs in MIG mode."""
    found = dict((int(g["index"]), []) for g in gpus if g["mig.mode.current"] == "Enabled")
    if not found:
        return found
    # Exit code 6 with "No GPU instances found" is an empty list, not a failure.
    listed = nvidia_smi.parse_gpu_instances(smi.read(["mig", "-lgi"], allowed_rc=(0, 6)))
    computes = nvidia_smi.parse_compute_instances(smi.read(["mig", "-lci"], allowed_rc=(0, 6))) if listed else []
    for instance in listed:
        instance["compute_instances"] = [ci for ci in computes
                                         if ci["gpu"] == instance["gpu"] and ci["gpu_instance"] == instance["id"]]
        found.setdefault(instance["gpu"], []).append(instance)
    return found


def read_offers(smi, instances, layouts):
    """{gpu index: {GPU instance profile: compute slices offered}} from ``mig -lcip``, read only
    where a layout names a compute-instance profile and a GPU instance of that profile exists."""
    named = set(split_profile(name)[0] for layout in layouts.values() for name in layout["mig_devices"]
                if name != split_profile(name)[0])
    if not any(i["profile"] in named for listed in instances.values() for i in listed):
        return {}
    found = {}
    rows = nvidia_smi.parse_compute_instance_profiles(smi.read(["mig", "-lcip"], allowed_rc=(0, 6)))
    for gpu, listed in instances.items():
        for instance in listed:
            names = [row["profile"] for row in rows if row["gpu"] == gpu and row["gpu_instance"] == instance["id"]]
            found.setdefault(gpu, {}).setdefault(instance["profile"], set()).update(
                split_profile(name)[1] for name in names if split_profile(name)[0] == instance["profile"])
    return found


def reset_blocker(root, gpu):
    """Why this host cannot reset the GPU, or None: no sysfs reset for its PCI function, or
    nvidia_drm loaded with users (it holds every GPU)."""
    bus_id = sysfs_bus_id(gpu.get("pci.bus_id"))
    if bus_id and not os.path.exists(under_root(root, "/sys/bus/pci/devices/%s/reset" % bus_id)):
        return "the host offers no reset for its PCI function %s (no sysfs reset file)" % bus_id
    refcnt = read_text(under_root(root, "/sys/module/nvidia_drm/refcnt"), strip=True)
    holders_dir = under_root(root, "/sys/module/nvidia_drm/holders")
    holders = sorted(os.listdir(holders_dir)) if os.path.isdir(holders_dir) else []
    if (refcnt or "0").isdigit() and int(refcnt or "0") > 0 or holders:
        users = ", ".join(holders) if holders else "refcnt %s" % refcnt
        return "nvidia_drm is loaded and in use (%s); it holds every GPU until it is unloaded" % users
    return None


def _describe(gpu):
    return "GPU %s (%s, %s)" % (gpu["index"], gpu["name"], gpu["uuid"])


def named(where, text):
    """text led by what the user set it with (a role's variable, the module's option), when known:
    every message about a bad input names its variable."""
    return "%s: %s" % (where, text) if where else text


def layout_name(where, index):
    """What names one GPU's declared layout (mig_layouts.0, as the form checks name it), or None."""
    return "%s.%d" % (where, index) if where else None


def _new_entry(gpu):
    return {"index": int(gpu["index"]), "uuid": gpu["uuid"], "mig_enabled": gpu["mig.mode.current"] == "Enabled",
            "pending": False, "reset_required": False, "reboot_required": False, "reboot_reason": None,
            "mode_change": None, "reset": False, "keep": [], "destroy": [], "create": [], "deferred": False,
            "end_processes": [], "changed": False}


def plan_gpu(gpu, layout, tables, instances, offers, processes, force=False, reset=True, root="/", where=None):
    """(entry, errors) for one GPU: what would change, and why it must not. where names the declared
    layouts in messages about this GPU's layout (see named)."""
    index = int(gpu["index"])
    entry = _new_entry(gpu)
    current = gpu["mig.mode.current"]
    if current is None:
        return entry, ([named(layout_name(where, index), "%s does not support MIG" % _describe(gpu))]
                       if layout["mig_enabled"] else [])
    wanted = "Enabled" if layout["mig_enabled"] else "Disabled"
    if gpu["mig.mode.pending"] != wanted:
        entry["mode_change"] = wanted
    elif current != wanted:
        entry.update(pending=True, reset_required=True)
    if current != wanted and reset:
        blocker = reset_blocker(root, gpu)
        entry.update(reset=blocker is None, reboot_reason=blocker)
    if layout["mig_enabled"]:
        if index not in tables:
            # A GPU lists its MIG profiles only once MIG mode is on, and no GPU of its model has it on:
            # the instances are planned, and checked, right after the mode applies.
            entry["deferred"] = bool(layout["mig_devices"])
        else:
            try:
                steps = plan(tables[index], instances.get(index, []), layout["mig_devices"], offers.get(index))
            except LayoutError as error:
                return entry, [named(layout_name(where, index), "%s: %s" % (_describe(gpu), error))]
            # After a planned reset the instances follow in this run, so the plan shows them.
            if current == "Enabled" or entry["reset"]:
                entry.update(keep=steps["keep"], destroy=steps["destroy"], create=steps["create"])
    elif current == "Enabled":
        entry["destroy"] = list(instances.get(index, []))
    going = set(instance["id"] for instance in entry["destroy"])
    mig_off = entry["mode_change"] == "Disabled" and current == "Enabled"
    busy = [p for p in processes if p["gpu_instance_id"] in going or mig_off or entry["reset"]]
    errors = []
    if busy and not force:
        errors.append("%s: compute processes run where this change would destroy instances or reset the GPU: %s; "
                      "stop them or set force" % (_describe(gpu), describe_processes(busy)))
    # force ends them first: the driver refuses to destroy or reset under a compute process.
    entry["end_processes"] = [{"pid": p["pid"], "name": p["name"]} for p in busy] if force else []
    entry["changed"] = bool(entry["mode_change"] or entry["destroy"] or entry["create"] or entry["reset"])
    return entry, errors


def describe_processes(processes):
    """Compute processes, for messages."""
    return ", ".join("pid %s (%s, GPU instance %s)" % (p["pid"], p["name"], p["gpu_instance_id"]) for p in processes)
