# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The boot script the mig role installs, laid out as the role lays it out and run
with a bare Python (no site-packages, no PYTHONPATH) against the emulated nvidia-smi,
as gpuops-mig.service runs it after a reboot."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml

from ansible_collections.gpuops.hardening.plugins.module_utils import nvidia_smi
from ansible_collections.gpuops.hardening.plugins.module_utils.engines import mig_boot
from ansible_collections.gpuops.hardening.plugins.plugin_utils import node_plan
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import enable_mig

COLLECTION = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
ROLE = os.path.join(COLLECTION, "roles", "mig")
EMULATOR = os.path.join(COLLECTION, "tests", "gpu_emulator")
LAYOUT = {"1": {"mig_enabled": True, "mig_devices": {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}},
          "2": {"mig_enabled": True, "mig_devices": {"1g.10gb": 7}}}


def _role_vars():
    with open(os.path.join(ROLE, "vars", "main.yml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


class Node:
    """A root with the emulated tools, the sysfs tree and the boot script as tasks/boot.yml installs it."""

    def __init__(self, root, state):
        self.root, self.state = root, state
        self.script = os.path.join(root, "usr", "local", "libexec", "gpuops-mig-boot")
        self.record = os.path.join(root, "etc", "gpuops-hardening", "mig", "layout.json")

    def smi(self, *argv):
        return api.run("nvidia-smi", list(argv), self.state)[1]

    def counts(self, gpu):
        found = {}
        for instance in nvidia_smi.parse_gpu_instances(self.smi("mig", "-lgi")):
            if instance["gpu"] == gpu:
                found[instance["profile"]] = found.get(instance["profile"], 0) + 1
        return found

    def write_record(self, layouts, **options):
        os.makedirs(os.path.dirname(self.record), exist_ok=True)
        with open(self.record, "w", encoding="utf-8") as handle:
            json.dump(dict({"layouts": layouts, "force": False, "reset": True, "timeout": 30}, **options), handle)

    def boot(self, *extra):
        """Run the installed script as the unit does; (exit status, output)."""
        environment = {"PATH": os.path.join(self.root, "usr", "bin") + ":/usr/bin:/bin", "LC_ALL": "C",
                       "GPUEMU_STATE": self.state}
        done = subprocess.run([sys.executable, "-I", "-S", self.script, self.record, "--root", self.root] + list(extra),
                              capture_output=True, text=True, env=environment, timeout=120, check=False)
        return done.returncode, done.stdout + done.stderr


def _install(root, state, role_vars):
    """What the plan's mig_boot feature installs, where vars/main.yml puts it (the library below the root)."""
    package = os.path.join(root, "usr", "local", "lib", "gpuops-hardening", "mig", "ansible_collections", "gpuops",
                           "hardening", "plugins", "module_utils")
    assert mig_boot.package_dir({"library": role_vars["__mig_library"]}) == package[len(root):]
    os.makedirs(package)
    for name in node_plan.MIG_ENGINE_FILES:
        shutil.copy(os.path.join(COLLECTION, "plugins", "module_utils", name + ".py"), package)
    script = os.path.join(root, "usr", "local", "libexec", "gpuops-mig-boot")
    assert role_vars["__mig_script"] == "/usr/local/libexec/gpuops-mig-boot"
    os.makedirs(os.path.dirname(script))
    with open(os.path.join(ROLE, "files", "gpuops_mig_boot.py"), encoding="utf-8") as source:
        body = source.read()
    with open(script, "w", encoding="utf-8") as target:
        target.write("#!/usr/bin/python3\n" + body + "\n")


@pytest.fixture
def node(tmp_path):
    """An 8x A100 after a reboot: GPUs 1 and 2 in MIG mode, no instances."""
    root = str(tmp_path / "root")
    state_path = str(tmp_path / "state.json")
    state = api.new_state("a100_8x_mig")
    for index in (1, 2):
        enable_mig(state, index)
    api.write_state(state, state_path)
    subprocess.run([sys.executable, "-m", "gpuemu", "install", "--profile", "a100_8x_mig", "--root", root,
                    "--state", state_path], cwd=EMULATOR, check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "gpuemu", "sysfs", "--profile", "a100_8x_mig", "--out",
                    os.path.join(root, "sys")], cwd=EMULATOR, check=True, capture_output=True)
    _install(root, state_path, _role_vars())
    return Node(root, state_path)


def test_the_recorded_layout_comes_back_after_a_reboot(node):
    node.write_record(LAYOUT)
    rc, output = node.boot()
    assert rc == 0, output
    assert node.counts(1) == LAYOUT["1"]["mig_devices"] and node.counts(2) == LAYOUT["2"]["mig_devices"]
    assert node.counts(0) == {}
    assert "GPU 1: MIG on" in output and "GPU 2: MIG on" in output, output


def test_a_second_run_changes_nothing(node):
    node.write_record(LAYOUT)
    assert node.boot()[0] == 0
    before = node.smi("-L")
    events = len(api.events(node.state))
    rc, output = node.boot()
    assert rc == 0, output
    assert node.smi("-L") == before and len(api.events(node.state)) == events


def test_a_mode_change_that_waits_for_a_reset_is_reset_and_filled(node):
    node.smi("-i", "3", "-mig", "1")
    node.write_record(dict(LAYOUT, **{"3": {"mig_enabled": True, "mig_devices": {"7g.80gb": 1}}}))
    rc, output = node.boot()
    assert rc == 0, output
    assert node.counts(3) == {"7g.80gb": 1}
    assert [e["gpu"] for e in api.events(node.state) if e["event"] == "reset"] == [3]


def test_a_gpu_that_cannot_reach_its_layout_fails_the_unit(node):
    # No sysfs reset file: the pending mode change needs a reboot.
    os.remove(os.path.join(node.root, "sys", "bus", "pci", "devices", "0000:4e:00.0", "reset"))
    node.write_record(dict(LAYOUT, **{"3": {"mig_enabled": True, "mig_devices": {"7g.80gb": 1}}}))
    rc, output = node.boot()
    assert rc == 1, output
    assert "GPU 3" in output and "reboot" in output, output
    assert node.counts(3) == {}


def test_an_unusable_record_exits_2_naming_it(node):
    os.makedirs(os.path.dirname(node.record), exist_ok=True)
    with open(node.record, "w", encoding="utf-8") as handle:
        handle.write("{not json")
    rc, output = node.boot()
    assert rc == 2 and node.record in output and "not a layout record" in output, output


def test_a_missing_engine_is_named(node):
    shutil.rmtree(os.path.join(node.root, "usr", "local", "lib", "gpuops-hardening"))
    node.write_record(LAYOUT)
    rc, output = node.boot()
    assert rc == 2 and "the MIG engine is missing" in output and "re-run the mig role" in output, output
