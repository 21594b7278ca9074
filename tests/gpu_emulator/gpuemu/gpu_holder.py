# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu-holder: a program that keeps NVML handles on GPUs open without a CUDA context,
as DCGM's nv-hostengine, dcgm-exporter and nvsm do. It runs in the foreground (as a
Type=simple unit expects), records itself in the state's "holders" while it runs and
takes its record away on SIGTERM or SIGINT. nvidia-smi shows it nowhere; it blocks
resets, MIG mode changes and MIG instance destroys (runtime.held_by_holder)."""

import os
import signal
import sys

from . import runtime, state as state_file

NAME = "gpuemu-gpu-holder"
USAGE = "usage: %s --name NAME [--gpus INDEX[,INDEX...]]\n" % NAME


def parse(argv, gpu_count):
    """{"name": ..., "gpus": [indexes] or None (all)}, or None for a bad command line."""
    options = {"gpus": None}
    tokens = list(argv)
    while tokens:
        key = {"--name": "name", "--gpus": "gpus"}.get(tokens.pop(0))
        if key is None or not tokens:
            return None
        options[key] = tokens.pop(0)
    if not options.get("name"):
        return None
    if options["gpus"] is not None:
        words = [w.strip() for w in options["gpus"].split(",")]
        if not all(w.isdigit() and int(w) < gpu_count for w in words):
            return None
        options["gpus"] = sorted({int(w) for w in words})
    return options


def _forget(state_path):
    with state_file.editing(state_path) as current:
        current["holders"] = [h for h in current["holders"] if h.get("pid") != os.getpid()]


def main(argv, state, state_path, stdout, stderr):
    options = parse(argv, len(state["gpus"])) if state is not None else None
    if options is None:
        stderr.write(USAGE)
        return 2
    runtime.set_process_name(NAME[:15])
    # Stopping must end the process; the record goes in the finally below.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    signal.signal(signal.SIGINT, lambda signum, frame: sys.exit(0))
    try:
        with state_file.editing(state_path) as current:
            current["holders"].append({"name": options["name"], "pid": os.getpid(), "gpus": options["gpus"]})
    except OSError as error:
        stderr.write("%s: cannot record itself in %s: %s\n" % (NAME, state_path, error.strerror))
        return 1
    try:
        gpus = "all" if options["gpus"] is None else ",".join(str(i) for i in options["gpus"])
        stdout.write("%s: %s holds GPU %s\n" % (NAME, options["name"], gpus))
        stdout.flush()
        while True:
            signal.pause()
    finally:
        _forget(state_path)
