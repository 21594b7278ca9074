# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""mig-parted ``v1`` configuration files, read by the rules mig-parted itself applies.

A file (already parsed from YAML or JSON) holds ``version: v1`` and ``mig-configs``:
config name -> a list of entries, each with ``devices`` (``all`` or GPU indexes),
``mig-enabled``, optional ``device-filter`` (PCI device ids in the ``0x20B210DE``
form: device, then vendor) and ``mig-devices`` (profile -> count). Users bring their
files unchanged; any field mig-parted refuses is refused here, with the path to it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

VERSION = "v1"
_ENTRY_FIELDS = ("device-filter", "devices", "mig-enabled", "mig-devices")
_DEVICE_ID = re.compile(r"^0x[0-9a-fA-F]{1,8}$")
# A GPU instance profile (3g.40gb), a compute instance one (1c.3g.40gb), with suffixes such as +me.
_PROFILE = re.compile(r"^(\d+c\.)?\d+g\.\d+gb(\+[a-z.]+|-[a-z]+)*$")


class MigPartedError(ValueError):
    """The file or the config name is not one mig-parted would take."""


def _device_id(text):
    """0x20B210DE -> the integer mig-parted compares (case does not matter)."""
    return int(text, 16)


def _check_entry(where, entry):
    if not isinstance(entry, dict):
        raise MigPartedError("%s: an entry must be a mapping" % where)
    unexpected = sorted(set(entry) - set(_ENTRY_FIELDS))
    if unexpected:
        raise MigPartedError("%s: unexpected field %s" % (where, ", ".join(unexpected)))
    for required in ("devices", "mig-enabled"):
        if required not in entry:
            raise MigPartedError("%s: missing required field %s" % (where, required))
    devices = entry["devices"]
    index_list = isinstance(devices, list) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in devices)
    if not (devices == "all" or index_list):
        raise MigPartedError("%s.devices: got %r; allowed: all or a list of GPU indexes" % (where, devices))
    filters = entry.get("device-filter", [])
    filters = [filters] if isinstance(filters, str) else filters
    if not isinstance(filters, list) or not all(isinstance(f, str) and (f == "" or _DEVICE_ID.match(f)) for f in filters):
        raise MigPartedError("%s.device-filter: got %r; allowed: a PCI device id such as 0x20B210DE, or a list of them"
                             % (where, entry.get("device-filter")))
    if not isinstance(entry["mig-enabled"], bool):
        raise MigPartedError("%s.mig-enabled: got %r; allowed: true or false" % (where, entry["mig-enabled"]))
    check_mig_devices(where, entry["mig-enabled"], entry.get("mig-devices"), "mig-devices", "mig-enabled")
    mig_devices = entry.get("mig-devices")
    return {"devices": devices, "device_filter": [_device_id(f) for f in filters if f],
            "mig_enabled": entry["mig-enabled"], "mig_devices": dict(mig_devices or {})}


def check_mig_devices(where, enabled, mig_devices, devices_name="mig-devices", enabled_name="mig-enabled"):
    """Raise MigPartedError unless mig_devices suits the MIG mode: profile names to counts,
    required ({} allowed) when MIG is on and empty when it is off, as mig-parted rules."""
    if enabled and mig_devices is None:
        raise MigPartedError("%s: %s is required when %s is true ({} for no instances)" % (where, devices_name, enabled_name))
    if not enabled and mig_devices:
        raise MigPartedError("%s: %s must be empty when %s is false" % (where, devices_name, enabled_name))
    if mig_devices is not None and not isinstance(mig_devices, dict):
        raise MigPartedError("%s.%s: must map profiles to counts" % (where, devices_name))
    for profile, count in sorted((mig_devices or {}).items(), key=lambda item: str(item[0])):
        if not _PROFILE.match(str(profile)):
            raise MigPartedError("%s.%s: %r is not a MIG profile name such as 1g.10gb or 1c.3g.40gb"
                                 % (where, devices_name, profile))
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise MigPartedError("%s.%s.%s: got %r; allowed: a count of 0 or more" % (where, devices_name, profile, count))


def check_layouts(layouts, where="layouts"):
    """{gpu index: {"mig_enabled", "mig_devices"}} from declared layouts keyed by GPU index
    (an integer or its digits); raises MigPartedError naming the first bad entry."""
    if not isinstance(layouts, dict):
        raise MigPartedError("%s: got %r; allowed: a GPU index to {mig_enabled, mig_devices}" % (where, layouts))
    checked = {}
    for key, layout in sorted(layouts.items(), key=lambda item: str(item[0])):
        name = "%s.%s" % (where, key)
        if isinstance(key, bool) or not (isinstance(key, int) and key >= 0 or str(key).isdigit()):
            raise MigPartedError("%s: %r is not a GPU index (0, 1, ...)" % (where, key))
        if not isinstance(layout, dict) or not isinstance(layout.get("mig_enabled"), bool):
            raise MigPartedError("%s: got %r; allowed: {mig_enabled: true|false, mig_devices: {profile: count}}" % (name, layout))
        unexpected = sorted(set(layout) - set(("mig_enabled", "mig_devices")))
        if unexpected:
            raise MigPartedError("%s: unexpected field %s; allowed: mig_enabled, mig_devices" % (name, ", ".join(unexpected)))
        devices = layout.get("mig_devices")
        # An omitted mig_devices is no instances, for either mode.
        check_mig_devices(name, layout["mig_enabled"], {} if devices is None and layout["mig_enabled"] else devices,
                          "mig_devices", "mig_enabled")
        if int(key) in checked:
            raise MigPartedError("%s: GPU %s is declared twice" % (where, key))
        checked[int(key)] = {"mig_enabled": layout["mig_enabled"], "mig_devices": dict(devices or {})}
    return checked


def load_config(document, name):
    """The entries of config name in a parsed mig-parted file, checked; raises MigPartedError."""
    if not isinstance(document, dict):
        raise MigPartedError("a mig-parted file is a mapping with version and mig-configs")
    if "version" not in document:
        raise MigPartedError("missing required field version (v1)")
    if document["version"] != VERSION:
        raise MigPartedError("unknown version %r; allowed: v1" % (document["version"],))
    unexpected = sorted(set(document) - set(("version", "mig-configs")))
    if unexpected:
        raise MigPartedError("unexpected field %s" % ", ".join(unexpected))
    configs = document.get("mig-configs")
    if not isinstance(configs, dict) or not configs:
        raise MigPartedError("mig-configs: at least one config is required")
    if name not in configs:
        raise MigPartedError("no config %r; the file has: %s" % (name, ", ".join(sorted(configs))))
    entries = configs[name]
    if not isinstance(entries, list) or not entries:
        raise MigPartedError("mig-configs.%s: at least one entry is required" % name)
    return [_check_entry("mig-configs.%s[%d]" % (name, position), entry) for position, entry in enumerate(entries)]


def matches(entry, gpu_index, pci_device_id):
    """Whether an entry applies to a GPU (pci_device_id as nvidia-smi's pci.device_id prints it)."""
    if entry["device_filter"] and _device_id(pci_device_id) not in entry["device_filter"]:
        return False
    return entry["devices"] == "all" or gpu_index in entry["devices"]


def desired_layouts(entries, gpus):
    """{gpu index: {"mig_enabled", "mig_devices"}} for the GPUs any entry applies to.

    gpus: [{"index", "pci_device_id"}]. Entries apply in file order, one after the other,
    as mig-parted applies them, so the last entry that matches a GPU decides its layout.
    """
    layouts = {}
    for entry in entries:
        for gpu in gpus:
            if matches(entry, gpu["index"], gpu["pci_device_id"]):
                layouts[gpu["index"]] = {"mig_enabled": entry["mig_enabled"], "mig_devices": dict(entry["mig_devices"])}
    return layouts
