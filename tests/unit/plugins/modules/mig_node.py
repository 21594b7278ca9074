# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An emulated 8x A100 80GB node for the nvidia_mig tests: nvidia-smi state, systemd units, sysfs."""

from __future__ import annotations

import os

from ansible_collections.gpuops.hardening.plugins.module_utils import nvidia_smi
from ansible_collections.gpuops.hardening.plugins.modules.nvidia_mig import main as nvidia_mig_main
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module

LAYOUT = {"3g.40gb": 1, "1g.10gb": 2}
CURRENT = {}


class Node:
    def __init__(self, path, root):
        self.path = path
        self.root = root
        self.calls = []
        # unit: running? (a unit not listed is not installed)
        self.units = {"nvidia-dcgm.service": True, "dcgm-exporter.service": False, "nvidia-persistenced.service": True}
        self.unit_calls = []
        self.failing_start = set()

    def smi(self, *argv):
        rc, out, err = api.run("nvidia-smi", list(argv), self.path)
        assert rc == 0, err
        return out

    def edit(self, change):
        state = api.read_state(self.path)
        change(state)
        api.write_state(state, self.path)

    def instances(self, gpu):
        """(id, profile, start) of each GPU instance on gpu."""
        listed = nvidia_smi.parse_gpu_instances(api.run("nvidia-smi", ["mig", "-lgi"], self.path)[1])
        return sorted((i["id"], i["profile"], i["start"]) for i in listed if i["gpu"] == gpu)

    def compute_instances(self, gpu):
        """{GPU instance id: sorted compute-instance profile names} on gpu."""
        found = {}
        for ci in nvidia_smi.parse_compute_instances(api.run("nvidia-smi", ["mig", "-lci"], self.path)[1]):
            if ci["gpu"] == gpu:
                found.setdefault(ci["gpu_instance"], []).append(ci["profile"])
        return dict((gi, sorted(names)) for gi, names in found.items())

    def mig_uuids(self):
        return sorted(line.split("UUID: ")[1].rstrip(")") for line in self.smi("-L").splitlines() if "MIG " in line)

    def modes(self, gpu):
        row = nvidia_smi.parse_query_csv(self.smi("-i", str(gpu), "--query-gpu=mig.mode.current,mig.mode.pending",
                                                  "--format=csv"))[0]
        return row["mig.mode.current"], row["mig.mode.pending"]

    def ran(self, *words):
        """The nvidia-smi calls that had all these words."""
        return [call for call in self.calls if all(word in call for word in words)]

    def sysfs(self, path, text=None):
        """Write (or, without text, create as a folder) a file under the node's /sys."""
        full = os.path.join(self.root, "sys", path)
        if text is None:
            os.makedirs(full, exist_ok=True)
            return
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as handle:
            handle.write(text)


def run_mig(check_mode=False, **args):
    """The module on the current node, its root unless given."""
    args.setdefault("root", CURRENT["node"].root)
    return run_module(nvidia_mig_main, args, check_mode=check_mode, diff=True)


def mig_layouts(**gpus):
    """mig_layouts(g0={...}) -> {"0": {"mig_enabled": true, "mig_devices": {...}}}."""
    return dict((index.lstrip("g"), {"mig_enabled": True, "mig_devices": devices}) for index, devices in gpus.items())
