# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What `install` lays down for Fabric Manager: the NVSwitch device nodes of an NVSwitch
board (four on HGX H100, six on HGX A100: Fabric Manager user guide, "NVSwitch-Based
Systems"), and with --fabricmanager the package: nv-fabricmanager, its packaged unit's
shape and a config file, at the driver's version or the one asked for."""

from __future__ import annotations

import os
import stat
import subprocess

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api, installer
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.test_emulator_install_sysfs import gpuemu

UNIT = os.path.join("lib", "systemd", "system", "nvidia-fabricmanager.service")
CONFIG = os.path.join("usr", "share", "nvidia", "nvswitch", "fabricmanager.cfg")
BINARY = os.path.join("usr", "bin", "nv-fabricmanager")


def install(tmp_path, profile, *extra):
    root = str(tmp_path / "node")
    done = gpuemu("install", "--profile", profile, "--root", root, *extra)
    assert done.returncode == 0, done.stderr
    return root, done.stdout


def nvswitch_nodes(root):
    return sorted(name for name in os.listdir(os.path.join(root, "dev")) if name.startswith("nvidia-nvswitch"))


def test_nvswitch_boards_get_their_switch_nodes(tmp_path):
    root, _out = install(tmp_path, "dgx_h100")
    assert nvswitch_nodes(root) == ["nvidia-nvswitch0", "nvidia-nvswitch1", "nvidia-nvswitch2", "nvidia-nvswitch3",
                                    "nvidia-nvswitchctl"]
    ctl = os.stat(os.path.join(root, "dev", "nvidia-nvswitchctl"))
    if stat.S_ISCHR(ctl.st_mode):  # mknod needs CAP_MKNOD; else plain files stand for the nodes
        assert (os.major(ctl.st_rdev), os.minor(ctl.st_rdev)) == (installer.NVSWITCH_MAJOR, 255)
    a100, _out = install(tmp_path / "a100", "a100_8x_mig")
    assert len(nvswitch_nodes(a100)) == 7
    pcie, _out = install(tmp_path / "pcie", "l40s_4x")
    assert nvswitch_nodes(pcie) == []


def test_a_boot_makes_the_switch_nodes_again(tmp_path):
    root, _out = install(tmp_path, "dgx_h100")
    for name in nvswitch_nodes(root):
        os.unlink(os.path.join(root, "dev", name))
    state = os.path.join(root, "var", "lib", "gpuemu", "state.json")
    assert gpuemu("reboot", "--boot", "--root", root, "--state", state).returncode == 0
    assert len(nvswitch_nodes(root)) == 5


def test_no_fabric_manager_unless_asked(tmp_path):
    root, _out = install(tmp_path, "dgx_h100")
    for path in (UNIT, CONFIG, BINARY):
        assert not os.path.exists(os.path.join(root, path))
    assert api.read_state(os.path.join(root, "var", "lib", "gpuemu", "state.json"))["fabric_manager"] is None


def test_the_package_at_the_drivers_version(tmp_path):
    root, out = install(tmp_path, "dgx_h100", "--fabricmanager")
    for path in (UNIT, CONFIG, BINARY):
        assert "changed: %s\n" % os.path.join(root, path) in out
    lines = open(os.path.join(root, UNIT), encoding="utf-8").read().splitlines()
    for line in ("Type=forking", "TimeoutStartSec=240", "User=root",
                 "ExecStart=/usr/bin/nv-fabricmanager -c /usr/share/nvidia/nvswitch/fabricmanager.cfg",
                 "After=network-online.target", "WantedBy=multi-user.target"):
        assert line in lines
    # Neither enabled nor started, as the package leaves it.
    assert not os.path.lexists(os.path.join(root, "etc", "systemd", "system", "multi-user.target.wants",
                                            "nvidia-fabricmanager.service"))
    state = api.read_state(os.path.join(root, "var", "lib", "gpuemu", "state.json"))
    assert state["fabric_manager"] == {"version": "525.60.13"}
    assert {gpu["fabric"] for gpu in state["gpus"]} == {"Not Started"}
    version = subprocess.run([os.path.join(root, BINARY), "--version"], capture_output=True, text=True, check=False,
                             env=dict(os.environ, GPUEMU_STATE=os.path.join(root, "var", "lib", "gpuemu", "state.json")))
    assert (version.returncode, version.stdout) == (0, "Fabric Manager version is : 525.60.13\n")
    assert install(tmp_path, "dgx_h100", "--fabricmanager")[1] == "ok: nothing to change\n"
    # A plain re-install keeps the package.
    assert install(tmp_path, "dgx_h100")[1] == "ok: nothing to change\n"


def test_another_version_and_omitting_the_binary(tmp_path):
    root, _out = install(tmp_path, "dgx_h100", "--fabricmanager-version", "535.104.05")
    state_path = os.path.join(root, "var", "lib", "gpuemu", "state.json")
    assert api.read_state(state_path)["fabric_manager"] == {"version": "535.104.05"}
    _root, out = install(tmp_path, "dgx_h100", "--fabricmanager-version", "525.60.13")
    assert out == "changed: %s\n" % state_path
    # The package's files stay; a node without the binary cannot start the daemon.
    _root, out = install(tmp_path, "dgx_h100", "--omit", "nv-fabricmanager")
    assert out == "changed: %s\n" % os.path.join(root, BINARY)
    assert os.path.exists(os.path.join(root, UNIT))
