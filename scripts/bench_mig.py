# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The MIG part of `make bench`: what a layout change costs the GPUs, counted.

On one bench node with the emulated 8x H100 (the lab's dgx_h100 sysfs), the mig
role converges every GPU to seven 1g.10gb instances; then it changes the
instances of GPU CHANGED_GPU only, then turns MIG off on GPU MODE_GPU only. The
emulator's change log says which GPUs were reset and which instances destroyed:
a change to GPU k must reset at most GPU k and destroy only the instances that
differ (a clear-and-rebuild tool would destroy all seven). Runs are timed
against the floor of that node alone, measured in the same lab.
"""

from __future__ import annotations

import json
import os
import subprocess

PLAY = ["bench/mig.yml"]
PROFILE = "dgx_h100"
GPUS = 8
CHANGED_GPU = 3
MODE_GPU = 6
SEVEN_SMALL = {"mig_enabled": True, "mig_devices": {"1g.10gb": 7}}
# Three of the seven 1g.10gb stay (starts 0-2); a 3g.40gb takes starts 4-7.
CHANGED = {"mig_enabled": True, "mig_devices": {"3g.40gb": 1, "1g.10gb": 3}}
EMULATOR_DIR = "/opt/gpuemu"
STATE = "/var/lib/gpuemu/state.json"


def _docker(*argv):
    return subprocess.run(["docker"] + list(argv), capture_output=True, text=True, check=True).stdout


def install_emulator(node, repo_root):
    """The emulated NVIDIA tools on the bench node, for the profile its sysfs shows."""
    _docker("exec", node, "mkdir", "-p", EMULATOR_DIR)
    for part in ("gpuemu", "profiles"):
        _docker("cp", os.path.join(repo_root, "tests", "gpu_emulator", part), "%s:%s/" % (node, EMULATOR_DIR))
    _docker("exec", "--workdir", EMULATOR_DIR, node, "python3", "-m", "gpuemu", "install", "--profile", PROFILE)


def _log(node):
    return json.loads(_docker("exec", node, "cat", STATE)).get("log", [])


def _argv(node, layouts):
    """The bench play on node alone, with these layouts."""
    return PLAY + ["-l", node, "-e", json.dumps({"mig_state": "present", "mig_layouts": layouts})]


def _per_gpu(events, kind):
    counts = {}
    for event in events:
        if event["event"] == kind:
            counts[event["gpu"]] = counts.get(event["gpu"], 0) + 1
    return counts


def _change(run_playbook, inventory, node, layouts):
    """(seconds, changed, events) of one converge to layouts."""
    start = len(_log(node))
    seconds, changed = run_playbook(inventory, _argv(node, layouts))
    return seconds, changed, _log(node)[start:]


def _describe(counts):
    return ", ".join("GPU %d: %d" % item for item in sorted(counts.items())) or "none"


def measure(run_playbook, median_run, inventory, node, floor_play, repo_root):
    """(floor seconds, table rows (label, seconds, changed, x floor, resets, destroys), failures found).

    The runs are on node alone, so their floor is too: floor_play limited to node, in this lab."""
    floor, dummy = median_run(inventory, floor_play + ["-l", node])
    install_emulator(node, repo_root)
    base = dict((str(gpu), SEVEN_SMALL) for gpu in range(GPUS))
    rows, failures = [], []
    seconds, changed, events = _change(run_playbook, inventory, node, base)
    rows.append(("MIG first converge: 8 GPUs x seven 1g.10gb", seconds, changed, seconds / floor,
                 _describe(_per_gpu(events, "reset")), _describe(_per_gpu(events, "gi_destroy"))))
    noop, noop_changed = median_run(inventory, _argv(node, base))
    rows.append(("MIG no-op re-converge", noop, noop_changed, noop / floor, "none", "none"))
    if noop_changed:
        failures.append("the MIG no-op re-converge changed %d items" % noop_changed)

    one_gpu = dict(base, **{str(CHANGED_GPU): CHANGED})
    seconds, changed, events = _change(run_playbook, inventory, node, one_gpu)
    resets, destroys, creates = (_per_gpu(events, kind) for kind in ("reset", "gi_destroy", "gi_create"))
    rows.append(("MIG instances of GPU %d changed" % CHANGED_GPU, seconds, changed, seconds / floor,
                 _describe(resets), _describe(destroys)))
    if resets or destroys != {CHANGED_GPU: 4} or creates != {CHANGED_GPU: 1}:
        failures.append("changing GPU %d's instances reset %s, destroyed %s and created %s; expected no reset, "
                        "4 destroyed and 1 created on GPU %d only"
                        % (CHANGED_GPU, _describe(resets), _describe(destroys), _describe(creates), CHANGED_GPU))

    mode_off = dict(one_gpu, **{str(MODE_GPU): {"mig_enabled": False}})
    seconds, changed, events = _change(run_playbook, inventory, node, mode_off)
    resets, destroys = _per_gpu(events, "reset"), _per_gpu(events, "gi_destroy")
    rows.append(("MIG off on GPU %d" % MODE_GPU, seconds, changed, seconds / floor, _describe(resets), _describe(destroys)))
    if resets != {MODE_GPU: 1} or destroys != {MODE_GPU: 7}:
        failures.append("turning MIG off on GPU %d reset %s and destroyed %s; expected one reset and 7 destroyed, "
                        "on GPU %d only" % (MODE_GPU, _describe(resets), _describe(destroys), MODE_GPU))
    return floor, rows, failures
