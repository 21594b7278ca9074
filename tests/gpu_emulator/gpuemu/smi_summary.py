# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plain `nvidia-smi`: the GPU table, MIG devices and processes (R535+ layout, 91 wide)."""

import time

from . import device, layout, mig

WIDTH = 91
# Column borders inside the GPU table.
GPU_SPLITS = (42, 67)
GPU_HEAD = [
    [(2, "GPU"), (7, "Name"), (28, "Persistence-M"), (42, "|"), (44, "Bus-Id"), (60, "Disp.A"), (67, "|"), (69, "Volatile Uncorr. ECC")],
    [(2, "Fan"), (7, "Temp"), (14, "Perf"), (28, "Pwr:Usage/Cap"), (42, "|"), (54, "Memory-Usage"), (67, "|"), (69, "GPU-Util"), (79, "Compute M.")],
    [(42, "|"), (67, "|"), (83, "MIG M.")],
]
MIG_SPLITS = (19, 54, 66)
MIG_HEAD = [
    [(2, "GPU"), (7, "GI"), (11, "CI"), (15, "MIG"), (19, "|"), (41, "Memory-Usage"), (54, "|"), (63, "Vol"), (66, "|"), (75, "Shared")],
    [(7, "ID"), (11, "ID"), (15, "Dev"), (19, "|"), (43, "BAR1-Usage"), (54, "|"), (56, "SM"), (63, "Unc"), (66, "|"),
     (68, "CE"), (71, "ENC"), (76, "DEC"), (81, "OFA"), (86, "JPG")],
    [(19, "|"), (54, "|"), (63, "ECC"), (66, "|")],
]
PROCESS_HEAD = [
    [(3, "GPU"), (9, "GI"), (14, "CI"), (30, "PID"), (36, "Type"), (43, "Process name"), (79, "GPU Memory")],
    [(9, "ID"), (14, "ID"), (79, "Usage")],
]
NAME_WIDTH = 27
PROCESS_NAME_WIDTH = 35


def _split_rule(splits, fill="-", left="|", right="|"):
    line = [fill] * WIDTH
    line[0], line[-1] = left, right
    for column in splits:
        line[column] = "+"
    return "".join(line) + "\n"


def _short(text, width, keep_end=False):
    if len(text) <= width:
        return text
    return "..." + text[-(width - 3):] if keep_end else text[:width - 3] + "..."


def _gpu_rows(f):
    on_off = "On" if f.persistence == "Enabled" else "Off"
    ecc = "0" if f.ecc == "Enabled" else "Off"
    if f.mig_enabled:
        ecc = "On"
    memory = "N/A" if f.mig_enabled else "%dMiB / %6dMiB" % (f.memory_used, f.memory_total)
    compute = {"Default": "Default", "Exclusive_Process": "E. Process", "Prohibited": "Prohibited"}.get(f.compute_mode, f.compute_mode)
    return [
        [(-4, f.index), (7, _short(f.name, NAME_WIDTH)), (38, on_off), (42, "|"), (46, f.bus_id), (63, "Off"), (67, "|"), (-88, ecc)],
        [(-4, "N/A" if f.fan is None else "%d%%" % f.fan), (-10, "%dC" % f.temperature), (15, f.pstate),
         (-32, "%dW" % f.power_draw), (34, "/"), (-40, "%dW" % f.power_limit), (42, "|"), (-65, memory), (67, "|"),
         (-75, "N/A" if f.utilization is None else "%d%%" % f.utilization), (-88, compute)],
        [(42, "|"), (67, "|"), (-88, f.mig_current or "N/A")],
    ]


def _mig_rows(state, gpus):
    rows = []
    for gpu in gpus:
        if not mig.enabled(gpu):
            continue
        table = mig.table(gpu)
        for number, (instance, ci) in enumerate(mig.mig_devices(gpu)):
            profile = mig.profile_by_id(gpu, instance["profile_id"])
            total = mig.memory_mib(profile)
            sm = mig.sm_count(gpu, instance, ci)
            rows.append([
                [(-3, gpu["index"]), (-8, instance["id"]), (-12, ci["id"]), (-16, number), (19, "|"),
                 (-51, "%dMiB / %dMiB" % (mig.memory_used_mib(state, gpu, instance, ci), total)), (54, "|"), (56, sm), (-64, 0), (66, "|"),
                 (-69, profile["ce"]), (-73, profile["enc"]), (-78, profile["dec"]), (-83, profile["ofa"]), (-88, profile["jpeg"])],
                [(19, "|"), (-51, "%dMiB / %dMiB" % (0, table["bar1_per_instance_mib"])), (54, "|"), (66, "|")],
            ])
    return rows


def _process_rows(state, gpus):
    rows = []
    shown = {g["index"] for g in gpus}
    for process in sorted(state["processes"], key=lambda p: (p["gpu"], p["pid"])):
        if process["gpu"] not in shown:
            continue
        gi = process.get("gpu_instance_id")
        ci = process.get("compute_instance_id")
        rows.append([(-5, process["gpu"]), (-10, "N/A" if gi is None else gi), (-15, "N/A" if ci is None else ci),
                     (-32, process["pid"]), (-39, process.get("type", "C")),
                     (43, _short(process["name"], PROCESS_NAME_WIDTH, keep_end=True)), (-88, "%dMiB" % process["used_memory_mib"])])
    return rows


def render(state, gpus):
    out = [time.ctime() + "       \n", layout.rule(WIDTH)]
    out.append(layout.place(WIDTH, [(2, "NVIDIA-SMI %s" % state["driver_version"]), (36, "Driver Version: %s" % state["driver_version"]),
                                    (67, "CUDA Version: %s" % state["cuda_version"])]))
    out.append(_split_rule(GPU_SPLITS, right="+"))
    out += [layout.place(WIDTH, cells) for cells in GPU_HEAD]
    out.append(_split_rule(GPU_SPLITS, "="))
    for gpu in gpus:
        out += [layout.place(WIDTH, cells) for cells in _gpu_rows(device.Facts(state, gpu))]
        out.append(_split_rule(GPU_SPLITS, "-", "+", "+"))
    mig_rows = _mig_rows(state, gpus)
    if mig_rows:
        out += ["\n", layout.rule(WIDTH), layout.banner(WIDTH, "MIG devices:"), _split_rule(MIG_SPLITS, "-", "+", "+")]
        out += [layout.place(WIDTH, cells) for cells in MIG_HEAD]
        out.append(_split_rule(MIG_SPLITS, "="))
        for group in mig_rows:
            out += [layout.place(WIDTH, cells) for cells in group]
            out.append(_split_rule(MIG_SPLITS, "-", "+", "+"))
    out += [" " * (WIDTH - 2) + "\n", layout.rule(WIDTH), layout.banner(WIDTH, "Processes:")]
    out += [layout.place(WIDTH, cells) for cells in PROCESS_HEAD]
    out.append(layout.rule(WIDTH, "=", "|"))
    rows = _process_rows(state, gpus)
    if not rows:
        rows = [[(3, "No running processes found")]]
    out += [layout.place(WIDTH, cells) for cells in rows]
    out.append(layout.rule(WIDTH))
    return "".join(out)
