# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""mig_converge as the boot-time script uses it: loaded by path, outside Ansible, with a
subprocess nvidia-smi (the emulator's), no GPU clients, and resets."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from ansible_collections.gpuops.hardening.plugins.module_utils import mig_converge
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import enable_mig

# What a boot script does: the module_utils folder becomes a package of its own name.
BOOT_SCRIPT = r"""
import importlib, json, subprocess, sys, types
directory, smi_argv, env, root = json.loads(sys.argv[1])
package = types.ModuleType("gpuops_boot")
package.__path__ = [directory]
sys.modules["gpuops_boot"] = package
engine = importlib.import_module("gpuops_boot.mig_converge")

class Smi:
    def call(self, args, allowed_rc=(0,)):
        done = subprocess.run(smi_argv + list(args), env=env, capture_output=True, text=True, timeout=120)
        if done.returncode not in allowed_rc:
            raise engine.SmiError("nvidia-smi %s: %s" % (" ".join(args), (done.stdout + done.stderr).strip()))
        return done.stdout

    read = call  # a survey read: the same here

outcome = {"loaded": sorted(m for m in sys.modules if m.split(".")[0] in ("ansible", "ansible_collections"))}
try:
    outcome["result"] = engine.converge(Smi(), {2: {"mig_enabled": True, "mig_devices": {"1c.3g.40gb": 3}}},
                                        reset=True, clients=None, root=root)
except engine.MigError as error:
    outcome["error"] = str(error)
print(json.dumps(outcome))
"""


def test_loaded_by_path_it_resets_and_creates_without_ansible(tmp_path):
    state = api.new_state("a100_8x_mig")
    enable_mig(state, 0)
    path = str(tmp_path / "state.json")
    api.write_state(state, path)
    root = tmp_path / "root"
    reset_file = root / "sys/bus/pci/devices" / state["gpus"][2]["pci_bus_id"] / "reset"
    reset_file.parent.mkdir(parents=True)
    reset_file.write_text("")
    directory = os.path.dirname(os.path.abspath(mig_converge.__file__))
    argument = json.dumps([directory, api.command("nvidia-smi"), api.environment(path), str(root)])
    # -I: no PYTHONPATH, no user site; nothing of Ansible is importable by accident.
    done = subprocess.run([sys.executable, "-I", "-c", BOOT_SCRIPT, argument], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["loaded"] == [] and "error" not in outcome, outcome
    result = outcome["result"]
    assert result["applied"] and result["changed"] and result["gpus"][0]["reset"]
    assert result["clients_stopped"] == [] and result["layouts"] == {
        "2": {"mig_enabled": True, "mig_devices": {"1c.3g.40gb": 3}}}
    rc, out, _err = api.run("nvidia-smi", ["mig", "-lci"], path)
    assert rc == 0 and out.count("MIG 1c.3g.40gb") == 3
