# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi -q -x: the nvsmi_device_v12 XML log, tab-indented like the driver writes it.

The tree is built from (tag, value) pairs: a value is text, a list of pairs (an
element with children), or a (attributes, children) tuple.
"""

import time
from xml.sax.saxutils import escape, quoteattr

from . import device, health, mig, smi_xml_health as hx

NA = "N/A"


def _mib(value):
    return "%d MiB" % value


def _mig_device(state, gpu, number, instance, ci):
    profile = mig.profile_by_id(gpu, instance["profile_id"])
    total = mig.memory_mib(profile)
    used = mig.memory_used_mib(state, gpu, instance, ci)
    return ("mig_device", [
        ("index", str(number)),
        ("gpu_instance_id", str(instance["id"])),
        ("compute_instance_id", str(ci["id"])),
        ("device_attributes", [("shared", [
            ("multiprocessor_count", str(mig.sm_count(gpu, instance, ci))),
            ("copy_engine_count", str(profile["ce"])),
            ("encoder_count", str(profile["enc"])),
            ("decoder_count", str(profile["dec"])),
            ("ofa_count", str(profile["ofa"])),
            ("jpg_count", str(profile["jpeg"])),
        ])]),
        ("ecc_error_count", [("volatile_count", [("sram_uncorrectable", "0")])]),
        ("fb_memory_usage", [("total", _mib(total)), ("reserved", _mib(0)), ("used", _mib(used)), ("free", _mib(total - used))]),
        ("bar1_memory_usage", [("total", _mib(mig.table(gpu)["bar1_per_instance_mib"])), ("used", _mib(0)),
                               ("free", _mib(mig.table(gpu)["bar1_per_instance_mib"]))]),
    ])


def _mig_devices(state, gpu):
    if not mig.enabled(gpu):
        return ("mig_devices", "None")
    return ("mig_devices", [_mig_device(state, gpu, n, i, c) for n, (i, c) in enumerate(mig.mig_devices(gpu))])


def _process(process):
    return ("process_info", [
        ("gpu_instance_id", NA if process.get("gpu_instance_id") is None else str(process["gpu_instance_id"])),
        ("compute_instance_id", NA if process.get("compute_instance_id") is None else str(process["compute_instance_id"])),
        ("pid", str(process["pid"])),
        ("type", process.get("type", "C")),
        ("process_name", process["name"]),
        ("used_memory", _mib(process["used_memory_mib"])),
    ])


def _watts(value):
    return "%.2f W" % value


def _mhz(value):
    return "%d MHz" % value


def _percent(value):
    return NA if value is None else "%d %%" % value


def _celsius(value):
    return NA if value is None else "%d C" % value


def gpu_element(state, gpu):
    f = device.Facts(state, gpu)
    mig_modes = [("current_mig", f.mig_current or NA), ("pending_mig", f.mig_pending or NA)]
    power = [
        ("power_state", f.pstate),
        ("power_draw", _watts(f.power_draw)),
        ("current_power_limit", _watts(f.power_limit)),
        ("requested_power_limit", _watts(f.power_limit)),
        ("default_power_limit", _watts(f.power_limit)),
        ("min_power_limit", _watts(f.power_min)),
        ("max_power_limit", _watts(f.power_limit)),
    ]
    h = health.Health(state, gpu, f)
    children = [
        ("product_name", f.name),
        ("product_brand", f.brand),
        ("product_architecture", f.architecture),
        ("display_mode", f.display_mode),
        ("display_active", "Disabled"),
        ("persistence_mode", f.persistence),
        ("addressing_mode", "None"),
        ("mig_mode", mig_modes),
        _mig_devices(state, gpu),
        ("accounting_mode", "Disabled"),
        ("accounting_mode_buffer_size", "4000"),
        ("driver_model", [("current_dm", NA), ("pending_dm", NA)]),
        ("serial", f.serial),
        ("uuid", f.uuid),
        ("minor_number", str(f.minor_number)),
        ("vbios_version", f.vbios),
        ("multigpu_board", "No"),
        ("board_id", "0x%x" % (f.bus << 8)),
        ("board_part_number", NA),
        ("gpu_part_number", NA),
        ("gpu_fru_part_number", NA),
        ("gpu_module_id", str(f.module_id) if f.module_id is not None else NA),
        ("inforom_version", [("img_version", NA), ("oem_object", NA), ("ecc_object", NA), ("pwr_object", NA)]),
        ("gpu_operation_mode", [("current_gom", NA), ("pending_gom", NA)]),
        ("gsp_firmware_version", state["driver_version"]),
        ("gpu_virtualization_mode", [("virtualization_mode", "None"), ("host_vgpu_mode", NA)]),
        ("gpu_reset_status", [("reset_required", "No"), ("drain_and_reset_recommended", "No")]),
        ("ibmnpu", [("relaxed_ordering_mode", NA)]),
        ("pci", [
            ("pci_bus", "%02X" % f.bus),
            ("pci_device", "%02X" % f.device),
            ("pci_domain", "%04X" % f.domain),
            ("pci_device_id", f.device_id),
            ("pci_bus_id", f.bus_id),
            ("pci_sub_system_id", f.sub_system_id),
            hx.pci_gpu_link_info(h),
            ("pci_bridge_chip", [("bridge_chip_type", NA), ("bridge_chip_fw", NA)]),
            ("replay_counter", "0"),
            ("replay_rollover_counter", "0"),
            ("tx_util", "0 KB/s"),
            ("rx_util", "0 KB/s"),
            ("atomic_caps_inbound", NA),
            ("atomic_caps_outbound", NA),
        ]),
        ("fan_speed", _percent(f.fan)),
        ("performance_state", f.pstate),
        hx.clock_reasons(state, h),
        ("fb_memory_usage", [("total", _mib(f.memory_total)), ("reserved", _mib(f.memory_reserved)),
                             ("used", _mib(f.memory_used)), ("free", _mib(f.memory_free))]),
        ("bar1_memory_usage", [("total", _mib(f.bar1_total)), ("used", _mib(f.bar1_used)), ("free", _mib(f.bar1_total - f.bar1_used))]),
        ("cc_protected_memory_usage", [("total", _mib(0)), ("used", _mib(0)), ("free", _mib(0))]),
        ("compute_mode", f.compute_mode),
        ("utilization", [("gpu_util", _percent(f.utilization)), ("memory_util", _percent(f.memory_utilization)),
                         ("encoder_util", _percent(0)), ("decoder_util", _percent(0)), ("jpeg_util", _percent(0)), ("ofa_util", _percent(0))]),
        ("encoder_stats", [("session_count", "0"), ("average_fps", "0"), ("average_latency", "0")]),
        ("fbc_stats", [("session_count", "0"), ("average_fps", "0"), ("average_latency", "0")]),
        ("ecc_mode", [("current_ecc", f.ecc), ("pending_ecc", f.ecc)]),
        hx.ecc_errors(h),
        hx.retired_pages(h),
        hx.remapped_rows(h),
        ("temperature", [
            ("gpu_temp", _celsius(f.temperature)),
            ("gpu_temp_tlimit", NA),
            ("gpu_temp_max_threshold", "92 C"),
            ("gpu_temp_slow_threshold", "89 C"),
            ("gpu_temp_max_gpu_threshold", "87 C"),
            ("gpu_target_temperature", NA),
            ("memory_temp", _celsius(f.memory_temperature)),
            ("gpu_temp_max_mem_threshold", "95 C" if f.memory_temperature is not None else NA),
        ]),
        ("gpu_power_readings", power),
        ("module_power_readings", [(tag, NA if tag != "power_state" else value) for tag, value in power]),
        ("clocks", [("graphics_clock", _mhz(f.clocks["graphics"])), ("sm_clock", _mhz(f.clocks["sm"])),
                    ("mem_clock", _mhz(f.clocks["memory"])), ("video_clock", _mhz(f.clocks["video"]))]),
        ("applications_clocks", [("graphics_clock", _mhz(f.max_clocks["graphics"])), ("mem_clock", _mhz(f.max_clocks["memory"]))]),
        ("default_applications_clocks", [("graphics_clock", _mhz(f.max_clocks["graphics"])), ("mem_clock", _mhz(f.max_clocks["memory"]))]),
        ("deferred_clocks", [("mem_clock", NA)]),
        ("max_clocks", [("graphics_clock", _mhz(f.max_clocks["graphics"])), ("sm_clock", _mhz(f.max_clocks["sm"])),
                        ("mem_clock", _mhz(f.max_clocks["memory"])), ("video_clock", _mhz(f.max_clocks["video"]))]),
        ("max_customer_boost_clocks", [("graphics_clock", _mhz(f.max_clocks["graphics"]))]),
        ("clock_policy", [("auto_boost", NA), ("auto_boost_default", NA)]),
        hx.fabric(h),
        ("processes", [_process(p) for p in f.processes]),
        ("accounted_processes", []),
    ]
    return ("gpu", ({"id": f.bus_id}, children))


def _write(out, node, depth):
    tag, value = node
    pad = "\t" * depth
    attributes = ""
    if isinstance(value, tuple):
        attributes = "".join(" %s=%s" % (k, quoteattr(v)) for k, v in value[0].items())
        value = value[1]
    if isinstance(value, list):
        out.append("%s<%s%s>\n" % (pad, tag, attributes))
        for child in value:
            _write(out, child, depth + 1)
        out.append("%s</%s>\n" % (pad, tag))
        if tag == "gpu":
            out.append("\n")
    elif tag == "mig_devices":
        # The driver writes "None" on its own line inside an empty MIG device list.
        out.append("%s<%s>\n%s\t%s\n%s</%s>\n" % (pad, tag, pad, value, pad, tag))
    else:
        out.append("%s<%s%s>%s</%s>\n" % (pad, tag, attributes, escape(value), tag))


def render(state, gpus):
    out = ['<?xml version="1.0" ?>\n', '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">\n', "<nvidia_smi_log>\n"]
    for node in [("timestamp", time.ctime()), ("driver_version", state["driver_version"]),
                 ("cuda_version", state["cuda_version"]), ("attached_gpus", str(len(state["gpus"])))]:
        _write(out, node, 1)
    for gpu in gpus:
        _write(out, gpu_element(state, gpu), 1)
    out.append("</nvidia_smi_log>\n")
    return "".join(out)
