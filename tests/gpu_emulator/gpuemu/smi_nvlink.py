# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi nvlink -s: each GPU's links and their speed.

The layout is that of public captures (A100-SXM4 on AWS p4de: "GPU 0: <name> (UUID:
<uuid>)", then a tab, a space and "Link N: 25 GB/s"; an H100 with "Link 4: <inactive>"
for a link that is down). A GPU without NVLink prints nothing and the command exits
0, as on the project's H200 capture (h200_device_check/nvidia_smi_nvlink_s.txt)."""

from . import catalog, texts

INACTIVE = "<inactive>"


def status(state, gpus):
    nvlink = state.get("nvlink") or {}
    down = state.get("faults", {}).get("nvlink_down", {})
    lines = []
    for gpu in gpus:
        speed = catalog.model(gpu["model"]).get("nvlink_speed")
        if not nvlink.get("links") or not speed:
            continue
        lines.append("GPU %d: %s (UUID: %s)" % (gpu["index"], gpu["model"], gpu["uuid"]))
        inactive = set(down.get(str(gpu["index"]), []))
        lines += ["\t Link %d: %s" % (link, INACTIVE if link in inactive else speed) for link in range(nvlink["links"])]
    return texts.RC_OK, "".join(line + "\n" for line in lines)


def run(state, argv, select_gpus):
    """Only the status listing (-s, optionally with -i) is emulated."""
    args = list(argv)
    gpu_id = None
    for flag in ("-i", "--id"):
        if flag in args:
            at = args.index(flag)
            if at + 1 >= len(args):
                return texts.RC_INVALID_ARGUMENT, texts.INVALID_COMBINATION
            gpu_id = args[at + 1]
            del args[at:at + 2]
    if args not in (["-s"], ["--status"]):
        return texts.RC_INVALID_ARGUMENT, texts.INVALID_COMBINATION
    gpus, error = select_gpus(gpu_id)
    if error:
        return error
    return status(state, gpus)
