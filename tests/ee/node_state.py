# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a job left on the lab node, read after it: the MPS daemons the mps role runs (its units,
gpuops-mps-<name>.service, plugins/module_utils/mps.py) with the GPUs each serves (the unit's
CUDA_VISIBLE_DEVICES, GPU UUIDs), and the node's GPUs as nvidia-smi lists them.

The readers parse the text of `systemctl list-units --plain --no-legend` (unit, load, active, sub,
description), `systemctl show --property=Environment` (Environment=NAME=value ..., systemd.exec(5))
and `nvidia-smi --query-gpu=uuid --format=csv,noheader` (one UUID a line)."""

from __future__ import annotations

import subprocess

MPS_UNITS = "gpuops-mps-*.service"


def active_units(list_units_text):
    """The unit names of `systemctl list-units --state=active --plain --no-legend`."""
    return [line.split()[0] for line in list_units_text.splitlines() if line.strip()]


def visible_devices(show_text):
    """The CUDA_VISIBLE_DEVICES entries of `systemctl show --property=Environment`; [] when unset."""
    for line in show_text.splitlines():
        if line.startswith("Environment="):
            for assignment in line[len("Environment="):].split():
                name, _sep, value = assignment.partition("=")
                if name == "CUDA_VISIBLE_DEVICES":
                    return [entry for entry in value.split(",") if entry]
    return []


def gpu_uuids(query_text):
    """The UUIDs of `nvidia-smi --query-gpu=uuid --format=csv,noheader`."""
    return [line.strip() for line in query_text.splitlines() if line.strip()]


def _run(container, *argv):
    done = subprocess.run(["docker", "exec", container] + list(argv), capture_output=True, text=True, check=True)
    return done.stdout


def mps_state(container):
    """{"daemons": {unit: [GPU UUID, ...]} for each active MPS unit, "gpus": [every GPU's UUID]} on CONTAINER."""
    units = active_units(_run(container, "systemctl", "list-units", "--state=active", "--plain", "--no-legend",
                              MPS_UNITS))
    daemons = {}
    for unit in units:
        daemons[unit] = visible_devices(_run(container, "systemctl", "show", "--property=Environment", unit))
    return {"daemons": daemons,
            "gpus": gpu_uuids(_run(container, "nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"))}
