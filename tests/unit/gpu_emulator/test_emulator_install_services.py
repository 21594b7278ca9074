# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What `install` adds beside the tools: fake GPU client units, the boot oneshot;
and the sysfs `reset` attribute of the GPUs."""

from __future__ import annotations

import json
import os
import stat
import subprocess

import pytest

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api, catalog
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.test_emulator_install_sysfs import gpuemu

UNITS = os.path.join("lib", "systemd", "system")
CLIENTS = {"nvidia-dcgm.service": "nv-hostengine", "dcgm-exporter.service": "dcgm-exporter", "nvsm.service": "nvsm"}


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def installed(tmp_path, *extra):
    root = str(tmp_path / "node")
    done = gpuemu("install", "--profile", "a100_8x_mig", "--root", root, *extra)
    assert done.returncode == 0, done.stderr
    return root, done.stdout


@pytest.mark.parametrize("unit, name", sorted(CLIENTS.items()))
def test_client_units_run_a_holder_and_are_not_enabled(tmp_path, unit, name):
    root, _out = installed(tmp_path)
    text = read(os.path.join(root, UNITS, unit))
    assert text.startswith("# Stands for ")
    lines = text.splitlines()
    assert "Type=simple" in lines and "WantedBy=multi-user.target" in lines
    assert "ExecStart=/usr/bin/gpuemu-gpu-holder --name %s" % name in lines
    assert not os.path.lexists(os.path.join(root, "etc", "systemd", "system", "multi-user.target.wants", unit))


def test_the_boot_unit_is_enabled_by_its_link(tmp_path):
    root, _out = installed(tmp_path)
    lines = read(os.path.join(root, UNITS, "gpuemu-boot.service")).splitlines()
    for line in ("Type=oneshot", "RemainAfterExit=yes", "DefaultDependencies=no", "After=local-fs.target",
                 "Before=sysinit.target", "WantedBy=sysinit.target", "ExecStart=/usr/bin/gpuemu-boot"):
        assert line in lines
    link = os.path.join(root, "etc", "systemd", "system", "sysinit.target.wants", "gpuemu-boot.service")
    assert os.readlink(link) == "/lib/systemd/system/gpuemu-boot.service"
    assert stat.S_IMODE(os.stat(os.path.join(root, "usr", "bin", "gpuemu-boot")).st_mode) == 0o755


def test_reinstalling_changes_nothing(tmp_path):
    installed(tmp_path)
    assert installed(tmp_path)[1] == "ok: nothing to change\n"


def test_the_boot_wrapper_boots_the_installed_state(tmp_path):
    root, _out = installed(tmp_path, "--state", "/etc/gpuemu/state.json")
    wrapper = os.path.join(root, "usr", "bin", "gpuemu-boot")
    assert "'reboot', '--boot', '--root', '/', '--state', '/etc/gpuemu/state.json'" in read(wrapper).replace('"', "'")
    # The wrapper names the node's path; run its code against the copy under --root.
    state_path = os.path.join(root, "etc", "gpuemu", "state.json")
    state = api.read_state(state_path)
    state["holders"] = [{"name": "nv-hostengine", "pid": os.getpid(), "gpus": None}]
    api.write_state(state, state_path)
    code = read(wrapper).replace("'/etc/gpuemu/state.json'", repr(state_path))
    done = subprocess.run(["python3", "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    booted = api.read_state(state_path)
    assert booted["boot_count"] == 1 and booted["holders"] == []
    assert api.events(state_path) == [{"event": "reboot", "boot": True, "boot_count": 1}]


def test_omitting_the_holder_removes_its_wrapper(tmp_path):
    root, _out = installed(tmp_path)
    root, out = installed(tmp_path, "--omit", "gpu-holder")
    assert out == "changed: %s\n" % os.path.join(root, "usr", "bin", "gpuemu-gpu-holder")


# ---- sysfs reset ----------------------------------------------------------------

def profile_file(tmp_path, edit):
    with open(os.path.join(catalog.PACKAGE_DIR, "..", "profiles", "a100_8x_mig.json"), encoding="utf-8") as handle:
        profile = json.load(handle)
    edit(profile)
    path = str(tmp_path / "profile.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(profile, handle)
    return path


def reset_files(tmp_path, profile):
    out = str(tmp_path / "sys")
    assert gpuemu("sysfs", "--profile", profile, "--out", out).returncode == 0
    found = {}
    for gpu in api.new_state(profile)["gpus"]:
        path = os.path.join(out, "bus", "pci", "devices", gpu["pci_bus_id"].lower(), "reset")
        found[gpu["index"]] = (stat.S_IMODE(os.stat(path).st_mode), os.path.getsize(path)) if os.path.exists(path) else None
    return found


def test_every_gpu_has_a_write_only_reset_file(tmp_path):
    assert reset_files(tmp_path, "a100_8x_mig") == {index: (0o200, 0) for index in range(8)}


def test_a_gpu_without_a_reset_method_has_none(tmp_path):
    path = profile_file(tmp_path, lambda p: p["gpus"][1].update(pci_reset=False))
    found = reset_files(tmp_path, path)
    assert found[1] is None and found[0] == (0o200, 0)


def test_a_passthrough_vm_has_no_reset_files(tmp_path):
    path = profile_file(tmp_path, lambda p: p.update(mig_mode_apply="reboot"))
    assert set(reset_files(tmp_path, path).values()) == {None}
