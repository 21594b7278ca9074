# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Small state edits shared by the emulator tests."""

from __future__ import annotations

import re
import subprocess

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def single_gpu(model, bus_id, mig="Disabled"):
    """An edit keeping one GPU of the given model at bus_id, with MIG current=pending=mig."""
    def _edit(state):
        gpu = state["gpus"][0]
        gpu.update(model=model, pci_bus_id=bus_id, gpu_instances=[])
        gpu["mig"] = {"current": mig, "pending": mig}
        state["gpus"] = [gpu]
        state["nvlink"] = None
    return _edit


def query(smi, path, fields, gpu="0"):
    """One GPU's --query-gpu values, csv without header."""
    rc, out, _err = smi(path, "-i", gpu, "--query-gpu=" + fields, "--format=csv,noheader")
    assert rc == 0
    return out.strip()


def enable_mig(state, index=0):
    state["gpus"][index]["mig"] = {"current": "Enabled", "pending": "Enabled"}


def body_lines(text):
    """Lines without trailing blanks, and without the blank lines at the end."""
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def smi_argv(command):
    """The nvidia-smi arguments of a capture's recorded command ("sudo nvidia-smi mig -lgi")."""
    words = command.split()
    return words[words.index("nvidia-smi") + 1:]


def same_uuids(text):
    return UUID.sub("<uuid>", text)


def start_holder(path, name, gpus=None):
    """A running gpu-holder (a Popen), once it has recorded itself in the state."""
    argv = ["--name", name] + (["--gpus", gpus] if gpus is not None else [])
    holder = subprocess.Popen(api.command("gpu-holder", argv), env=api.environment(path),  # pylint: disable=consider-using-with
                              stdout=subprocess.PIPE, text=True)
    # Its one line comes after the record is written.
    assert holder.stdout.readline().startswith("gpuemu-gpu-holder: %s holds GPU " % name)
    return holder


def stop(process):
    process.terminate()
    assert process.wait(timeout=10) == 0
    process.stdout.close()
