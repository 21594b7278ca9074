# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulated GPUs of a lab node, seen from a test: MIG devices as nvidia-smi -L
lists them, and the emulator's state (its change log, injected faults)."""

from __future__ import annotations

import json
import re

STATE = "/var/lib/gpuemu/state.json"
_GPU_LINE = re.compile(r"^GPU (\d+): ")
_MIG_LINE = re.compile(r"^\s+MIG (\S+)\s+Device\s+\d+: \(UUID: (MIG-[^)]+)\)")


def mig_devices(host):
    """{gpu index: sorted [(profile, MIG UUID)]} from nvidia-smi -L, for every GPU."""
    devices, gpu = {}, None
    for line in host.check_output("nvidia-smi -L").splitlines():
        match = _GPU_LINE.match(line)
        if match:
            gpu = int(match.group(1))
            devices[gpu] = []
            continue
        match = _MIG_LINE.match(line)
        if match:
            devices[gpu].append((match.group(1), match.group(2)))
    return dict((index, sorted(found)) for index, found in devices.items())


def profile_counts(devices):
    """{profile: count} of one GPU's mig_devices entry."""
    counts = {}
    for profile, _uuid in devices:
        counts[profile] = counts.get(profile, 0) + 1
    return counts


def mig_modes(host):
    """[(current, pending)] per GPU."""
    out = host.check_output("nvidia-smi --query-gpu=mig.mode.current,mig.mode.pending --format=csv,noheader")
    return [tuple(part.strip() for part in line.split(",")) for line in out.splitlines()]


def emulator_state(host):
    return json.loads(host.file(STATE).content_string)


def events_since(host, count):
    """The emulator's change log after its first count entries."""
    return emulator_state(host).get("log", [])[count:]


# Run in /opt/gpuemu with the faults' JSON as its argument: sets them in the node's state, under its lock.
SET_FAULTS = ("import json, sys\nfrom gpuemu import state\n"
              "with state.editing(%r) as current:\n"
              "    current['faults'].update(json.loads(sys.argv[1]))\n") % STATE


def set_faults(host, **faults):
    """Set (or, with None, clear) emulator faults in the node's state, under its lock."""
    host.check_output("cd /opt/gpuemu && python3 -c %s %s", SET_FAULTS, json.dumps(faults))
