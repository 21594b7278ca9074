# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""install and the NVIDIA Container Toolkit: the nvidia-ctk wrapper, the CDI refresh units
of toolkit v1.19.1 (deployments/systemd, placed as packaging/debian/
nvidia-container-toolkit-base.install places them) and a node without the toolkit."""

from __future__ import annotations

import os
import subprocess

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import ctk_units, installer

UNITS = ("etc/systemd/system/nvidia-cdi-refresh.service", "etc/systemd/system/nvidia-cdi-refresh.path",
         "etc/nvidia-container-toolkit/nvidia-cdi-refresh.env")


def read(root, relative):
    with open(os.path.join(root, relative), encoding="utf-8") as handle:
        return handle.read()


def test_install_lays_down_nvidia_ctk_and_the_refresh_units_when_asked(tmp_path):
    root = str(tmp_path / "node")
    changed = installer.install("l40s_4x", root=root)
    wrapper = os.path.join(root, "usr/bin/nvidia-ctk")
    assert wrapper in changed and not any(os.path.exists(os.path.join(root, unit)) for unit in UNITS)
    env = dict(os.environ, GPUEMU_STATE=os.path.join(root, "var/lib/gpuemu/state.json"))
    ran = subprocess.run([wrapper, "--version"], capture_output=True, text=True, check=False, env=env)
    assert ran.returncode == 0 and ran.stdout.startswith("NVIDIA Container Toolkit CLI version 1.19.1\n")
    changed = installer.install("l40s_4x", root=root, cdi_refresh_units=True)
    assert sorted(changed) == sorted(os.path.join(root, unit) for unit in UNITS)
    assert installer.install("l40s_4x", root=root, cdi_refresh_units=True) == []
    service = read(root, UNITS[0])
    assert "Type=oneshot" in service and "ExecStart=/usr/bin/nvidia-ctk cdi generate\n" in service
    assert "Environment=NVIDIA_CTK_CDI_OUTPUT_FILE_PATH=/var/run/cdi/nvidia.yaml" in service
    assert "EnvironmentFile=-/etc/nvidia-container-toolkit/nvidia-cdi-refresh.env" in service
    assert "ConditionPathExists=/usr/bin/nvidia-ctk" in service and "WantedBy=multi-user.target" in service
    path_unit = read(root, UNITS[1])
    assert "PathChanged=/lib/modules/%v/modules.dep\n" in path_unit and "PathChanged=/usr/bin/nvidia-ctk\n" in path_unit
    # The shipped env file sets nothing.
    assert all(line.startswith("#") for line in read(root, UNITS[2]).splitlines())
    # Not enabled: the package's postinst does that on a running systemd, the emulator leaves it to the node.
    assert not os.path.exists(os.path.join(root, "etc/systemd/system/multi-user.target.wants"))


def test_a_node_without_the_toolkit_has_neither_nvidia_ctk_nor_its_units(tmp_path):
    root = str(tmp_path / "node")
    installer.install("l40s_4x", root=root, cdi_refresh_units=True)
    changed = installer.install("l40s_4x", root=root, omit=("nvidia-ctk",))
    assert os.path.join(root, "usr/bin/nvidia-ctk") in changed
    assert not os.path.exists(os.path.join(root, "usr/bin/nvidia-ctk"))
    assert not any(os.path.exists(os.path.join(root, unit)) for unit in UNITS)
    assert os.path.exists(os.path.join(root, "usr/bin/nvidia-smi"))


def test_units_a_site_changed_stay_when_the_toolkit_is_left_out(tmp_path):
    root = str(tmp_path / "node")
    installer.install("l40s_4x", root=root, cdi_refresh_units=True)
    env_file = os.path.join(root, ctk_units.ENV_FILE.lstrip("/"))
    with open(env_file, "a", encoding="utf-8") as handle:
        handle.write("NVIDIA_CTK_CDI_OUTPUT_FILE_PATH=/etc/cdi/nvidia.yaml\n")
    installer.install("l40s_4x", root=root, omit=("nvidia-ctk",))
    assert os.path.exists(env_file)
