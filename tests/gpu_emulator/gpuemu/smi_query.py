# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi --query-gpu / --query-compute-apps with --format=csv[,noheader][,nounits]."""

import collections
import datetime

from . import device, smi_query_health, texts

NA = "[N/A]"


def _timestamp():
    return datetime.datetime.now().strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]


def _optional(value, unit=None):
    if value is None:
        return NA
    return (value, unit) if unit else value


def _mig_mode(value):
    return value if value is not None else NA


def _hex(value, width):
    return "0x%0*X" % (width, value)


def _watts(value):
    return ("%.2f" % value, "W")


# (names, header, function(facts) -> value or (value, unit)). The first name is
# canonical; the header is what nvidia-smi prints for any of the names.
GPU_FIELDS = [
    (("timestamp",), "timestamp", lambda f: _timestamp()),
    (("driver_version",), "driver_version", lambda f: f.state["driver_version"]),
    (("count",), "count", lambda f: str(len(f.state["gpus"]))),
    (("name", "gpu_name"), "name", lambda f: f.name),
    (("serial", "gpu_serial"), "serial", lambda f: f.serial),
    (("uuid", "gpu_uuid"), "uuid", lambda f: f.uuid),
    (("pci.bus_id", "gpu_bus_id"), "pci.bus_id", lambda f: f.bus_id),
    (("pci.domain",), "pci.domain", lambda f: _hex(f.domain, 4)),
    (("pci.bus",), "pci.bus", lambda f: _hex(f.bus, 2)),
    (("pci.device",), "pci.device", lambda f: _hex(f.device, 2)),
    (("pci.device_id",), "pci.device_id", lambda f: "0x" + f.device_id),
    (("pci.sub_device_id",), "pci.sub_device_id", lambda f: "0x" + f.sub_system_id),
    (("pcie.link.gen.current",), "pcie.link.gen.current", lambda f: str(f.health.pcie_gen)),
    (("pcie.link.gen.gpucurrent",), "pcie.link.gen.gpucurrent", lambda f: str(f.health.pcie_gen)),
    (("pcie.link.gen.max",), "pcie.link.gen.max", lambda f: str(f.health.pcie_max_gen)),
    (("pcie.link.gen.gpumax",), "pcie.link.gen.gpumax", lambda f: str(f.health.pcie_max_gen)),
    (("pcie.link.gen.hostmax",), "pcie.link.gen.hostmax", lambda f: str(f.health.pcie_max_gen)),
    (("pcie.link.width.current",), "pcie.link.width.current", lambda f: str(f.health.pcie_width)),
    (("pcie.link.width.max",), "pcie.link.width.max", lambda f: str(f.health.pcie_max_width)),
    (("index",), "index", lambda f: str(f.index)),
    (("display_mode",), "display_mode", lambda f: f.display_mode),
    (("display_active",), "display_active", lambda f: "Disabled"),
    (("persistence_mode",), "persistence_mode", lambda f: f.persistence),
    (("accounting.mode",), "accounting.mode", lambda f: "Disabled"),
    (("driver_model.current",), "driver_model.current", lambda f: NA),
    (("driver_model.pending",), "driver_model.pending", lambda f: NA),
    (("vbios_version",), "vbios_version", lambda f: f.vbios),
    (("fan.speed",), "fan.speed [%]", lambda f: _optional(f.fan, "%")),
    (("pstate",), "pstate", lambda f: f.pstate),
    (("memory.total",), "memory.total [MiB]", lambda f: (str(f.memory_total), "MiB")),
    (("memory.reserved",), "memory.reserved [MiB]", lambda f: (str(f.memory_reserved), "MiB")),
    (("memory.used",), "memory.used [MiB]", lambda f: (str(f.memory_used), "MiB")),
    (("memory.free",), "memory.free [MiB]", lambda f: (str(f.memory_free), "MiB")),
    (("compute_mode",), "compute_mode", lambda f: f.compute_mode),
    (("compute_cap",), "compute_cap", lambda f: f.compute_cap),
    (("utilization.gpu",), "utilization.gpu [%]", lambda f: _optional(f.utilization, "%")),
    (("utilization.memory",), "utilization.memory [%]", lambda f: _optional(f.memory_utilization, "%")),
    (("ecc.mode.current",), "ecc.mode.current", lambda f: f.ecc),
    (("ecc.mode.pending",), "ecc.mode.pending", lambda f: f.ecc),
    (("temperature.gpu",), "temperature.gpu", lambda f: str(f.temperature)),
    (("temperature.memory",), "temperature.memory", lambda f: _optional(f.memory_temperature)),
    (("power.management",), "power.management", lambda f: "Enabled"),
    (("power.draw",), "power.draw [W]", lambda f: _watts(f.power_draw)),
    (("power.limit",), "power.limit [W]", lambda f: _watts(f.power_limit)),
    (("enforced.power.limit",), "enforced.power.limit [W]", lambda f: _watts(f.power_limit)),
    (("power.default_limit",), "power.default_limit [W]", lambda f: _watts(f.power_limit)),
    (("power.min_limit",), "power.min_limit [W]", lambda f: _watts(f.power_min)),
    (("power.max_limit",), "power.max_limit [W]", lambda f: _watts(f.power_limit)),
    (("clocks.current.graphics", "clocks.gr"), "clocks.current.graphics [MHz]", lambda f: (str(f.clocks["graphics"]), "MHz")),
    (("clocks.current.sm", "clocks.sm"), "clocks.current.sm [MHz]", lambda f: (str(f.clocks["sm"]), "MHz")),
    (("clocks.current.memory", "clocks.mem"), "clocks.current.memory [MHz]", lambda f: (str(f.clocks["memory"]), "MHz")),
    (("clocks.current.video", "clocks.video"), "clocks.current.video [MHz]", lambda f: (str(f.clocks["video"]), "MHz")),
    (("clocks.max.graphics", "clocks.max.gr"), "clocks.max.graphics [MHz]", lambda f: (str(f.max_clocks["graphics"]), "MHz")),
    (("clocks.max.sm",), "clocks.max.sm [MHz]", lambda f: (str(f.max_clocks["sm"]), "MHz")),
    (("clocks.max.memory", "clocks.max.mem"), "clocks.max.memory [MHz]", lambda f: (str(f.max_clocks["memory"]), "MHz")),
    (("mig.mode.current",), "mig.mode.current", lambda f: _mig_mode(f.mig_current)),
    (("mig.mode.pending",), "mig.mode.pending", lambda f: _mig_mode(f.mig_pending)),
    (("clocks_event_reasons.active", "clocks_throttle_reasons.active"), "clocks_event_reasons.active",
     lambda f: "0x%016X" % f.health.clock_mask),
] + smi_query_health.FIELDS

APP_FIELDS = [
    (("timestamp",), "timestamp", lambda f, p: _timestamp()),
    (("gpu_name",), "gpu_name", lambda f, p: f.name),
    (("gpu_bus_id",), "gpu_bus_id", lambda f, p: f.bus_id),
    (("gpu_serial",), "gpu_serial", lambda f, p: f.serial),
    (("gpu_uuid",), "gpu_uuid", lambda f, p: f.uuid),
    (("pid",), "pid", lambda f, p: str(p["pid"])),
    (("process_name", "name"), "process_name", lambda f, p: p["name"]),
    (("used_gpu_memory", "used_memory"), "used_gpu_memory [MiB]", lambda f, p: (str(p["used_memory_mib"]), "MiB")),
]


Column = collections.namedtuple("Column", "name header getter")


def _lookup(table):
    """Every accepted name -> Column(canonical name, header, getter)."""
    return {name: Column(names[0], header, getter) for names, header, getter in table for name in names}


GPU_LOOKUP = _lookup(GPU_FIELDS)
APP_LOOKUP = _lookup(APP_FIELDS)


def parse_format(text):
    """(ok, header, units) from --format's value; without --format the output is csv."""
    parts = [p.strip() for p in (text or "csv").split(",") if p.strip()]
    if any(p not in ("csv", "noheader", "nounits") for p in parts):
        return False, True, True
    return True, "noheader" not in parts, "nounits" not in parts


def _cell(value, units):
    if isinstance(value, tuple):
        return "%s %s" % value if units else value[0]
    return value


def _resolve(fields_text, lookup):
    """([Column], None), or (None, error text) for an unknown field."""
    resolved = []
    for name in [n.strip() for n in fields_text.split(",")]:
        if name not in lookup:
            return None, texts.INVALID_FIELD % name
        resolved.append(lookup[name])
    return resolved, None


def query_gpus(state, gpus, fields_text, format_text):
    ok, header, units = parse_format(format_text)
    if not ok:
        return texts.RC_INVALID_ARGUMENT, texts.FORMAT_MODIFIER
    columns, error = _resolve(fields_text, GPU_LOOKUP)
    if error:
        return texts.RC_INVALID_ARGUMENT, error
    lines = [", ".join(column.header for column in columns)] if header else []
    for gpu in gpus:
        facts = device.Facts(state, gpu)
        # A state may mark fields as unreadable on a GPU, e.g. {"power.draw": "[Not Supported]"}.
        overrides = gpu.get("field_overrides", {})
        lines.append(", ".join(overrides.get(c.name, _cell(c.getter(facts), units)) for c in columns))
    return texts.RC_OK, "".join(line + "\n" for line in lines)


def query_apps(state, gpus, fields_text, format_text):
    ok, header, units = parse_format(format_text)
    if not ok:
        return texts.RC_INVALID_ARGUMENT, texts.FORMAT_MODIFIER
    columns, error = _resolve(fields_text, APP_LOOKUP)
    if error:
        return texts.RC_INVALID_ARGUMENT, error
    lines = [", ".join(column.header for column in columns)] if header else []
    for gpu in gpus:
        facts = device.Facts(state, gpu)
        for process in sorted(facts.processes, key=lambda p: p["pid"]):
            lines.append(", ".join(_cell(c.getter(facts, process), units) for c in columns))
    return texts.RC_OK, "".join(line + "\n" for line in lines)
