# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The entry point behind every emulated tool: load the state, apply faults, run."""

import importlib
import os
import sys

from . import fabric, faults, gpu_holder, state as state_file, texts

# The module behind each tool. Only the one that runs is imported: every emulated call is a new
# process, and importing all of them (the XML renderer pulls in urllib) cost more than most calls' work.
MODULES = {"nvidia-smi": "smi", "nvidia-persistenced": "persistenced", "nvidia-cuda-mps-control": "mps",
           "cuda-app": "cuda_app", "gpu-holder": "gpu_holder", "dmesg": "kernel_log",
           "nvidia-ctk": "ctk", "nvidia-cdi-hook": "cdi_hook", "nv-fabricmanager": "fabricmanager"}
TOOLS = tuple(MODULES)
# Installed names that differ from the tool name.
BINARIES = {"cuda-app": "gpuemu-cuda-app", "gpu-holder": gpu_holder.NAME}
# dmesg goes where it shadows the system's /usr/bin/dmesg on PATH without replacing it.
BIN_DIRS = {"dmesg": "usr/local/bin"}


def load(tool):
    """The module that runs tool, imported now. A caller that gives up its privileges before running
    a tool (tests that run one as another uid) loads it first, while it can still read the code."""
    return importlib.import_module("." + MODULES[tool], __package__)


def main(tool, argv, stdin=None, stdout=None, stderr=None, environ=None):
    """Run one tool invocation; returns the exit code."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    environ = os.environ if environ is None else environ
    path = state_file.path_from_env(environ.get(state_file.ENV_VAR))
    try:
        state = state_file.load(path)
    except (OSError, ValueError) as error:
        stderr.write("gpuemu: cannot read the emulator state %s: %s\n" % (path, error))
        if tool == "nvidia-smi":
            stdout.write(texts.DRIVER_NOT_LOADED)
            return texts.RC_DRIVER_NOT_LOADED
        if tool == "nvidia-persistenced":
            stderr.write(texts.PERSISTENCED_FAILED)
            return 1
        if tool == "nv-fabricmanager":
            return 1
        state = None
    if state is not None:
        outcome = faults.check(state, tool, list(argv), path)
        if outcome:
            rc, out, err = outcome
            stdout.write(out)
            stderr.write(err)
            return rc
    if tool == "nvidia-smi":
        completing = fabric.training(state) if state is not None else []
        rc, out = load("nvidia-smi").run(state, list(argv), path)
        stdout.write(out)
        if completing:
            fabric.finish_training(path, completing)
        return rc
    if tool == "nvidia-persistenced":
        return load("nvidia-persistenced").main(list(argv), path, stdout, stderr)
    if tool == "nvidia-cuda-mps-control":
        return load("nvidia-cuda-mps-control").main(list(argv), path, environ, stdin, stdout, stderr)
    if tool == "cuda-app":
        return load("cuda-app").main(list(argv), state, path, environ, stdout, stderr)
    if tool == "gpu-holder":
        return load("gpu-holder").main(list(argv), state, path, stdout, stderr)
    if tool == "dmesg":
        return load("dmesg").main(list(argv), state, stdout, stderr)
    if tool == "nvidia-ctk":
        return load("nvidia-ctk").main(list(argv), state, stdout, stderr, environ)
    if tool == "nvidia-cdi-hook":
        return load("nvidia-cdi-hook").main(list(argv), stdin, stderr)
    if tool == "nv-fabricmanager":
        return load("nv-fabricmanager").main(list(argv), path, stdout, stderr)
    stderr.write("gpuemu: unknown tool %s\n" % tool)
    return 2
