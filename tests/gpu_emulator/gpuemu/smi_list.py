# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi -L: one line per GPU, then its MIG devices.

settings.mig_uuid_format selects the MIG UUID spelling: "modern" (MIG-<uuid>, R470
and later) or "legacy" (MIG-GPU-<gpu uuid>/<gi>/<ci>, R450).
"""

from . import mig


def render(state, gpus):
    legacy = state["settings"].get("mig_uuid_format") == "legacy"
    out = []
    for gpu in gpus:
        out.append("GPU %d: %s (UUID: %s)\n" % (gpu["index"], gpu["model"], gpu["uuid"]))
        if not mig.enabled(gpu):
            continue
        for number, (instance, ci) in enumerate(mig.mig_devices(gpu)):
            name = mig.ci_name(gpu, instance, ci["size"])
            if legacy:
                out.append("  MIG %s Device %d: (UUID: MIG-%s/%d/%d)\n" % (name, number, gpu["uuid"], instance["id"], ci["id"]))
            else:
                out.append("  MIG %-12sDevice %2d: (UUID: %s)\n" % (name, number, ci["uuid"]))
    return "".join(out)
