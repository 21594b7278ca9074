# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""/proc/driver/nvidia-caps/mig-minors, as the installer lays it down.

Sources (nvidia_caps.py): NVIDIA Multi-Instance GPU User Guide, "Device Nodes and
Capabilities", and the driver's table in NVIDIA/open-gpu-kernel-modules
kernel-open/nvidia/nv-caps.c. No capture of the file is in the real fixtures.
"""

from __future__ import annotations

import os
import re

from ansible_collections.gpuops.hardening.plugins.module_utils.nvidia_smi import parse_query_xml
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import installer, nvidia_caps
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import single_gpu

LINE = re.compile(r"^(config|monitor|gpu\d+/gi\d+/access|gpu\d+/gi\d+/ci\d+/access) (\d+)$")


def _installed(root):
    with open(os.path.join(root, nvidia_caps.PATH), encoding="utf-8") as handle:
        return handle.read()


def test_every_line_has_the_drivers_shape_and_minors_count_up_from_1():
    lines = nvidia_caps.mig_minors_text().splitlines()
    assert all(LINE.match(line) for line in lines)
    assert [int(line.split()[1]) for line in lines] == list(range(1, len(lines) + 1))
    # mig config and monitor, then 32 GPU slots of 15 GPU instances with 8 compute instances each.
    assert len(lines) == 2 + 32 * 15 * 9
    assert lines[:4] == ["config 1", "monitor 2", "gpu0/gi0/access 3", "gpu0/gi0/ci0/access 4"]
    assert lines[10:12] == ["gpu0/gi0/ci7/access 11", "gpu0/gi1/access 12"]
    assert lines[-1] == "gpu31/gi14/ci7/access 4322"


def test_the_installer_writes_the_table_read_only_whatever_the_profile(tmp_path):
    for profile in ("a100_8x_mig", "l40s_4x"):
        root = str(tmp_path / profile)
        changed = installer.install(profile, root=root)
        path = os.path.join(root, nvidia_caps.PATH)
        assert path in changed and _installed(root) == nvidia_caps.mig_minors_text()
        assert oct(os.stat(path).st_mode & 0o777) == "0o444"
        assert path not in installer.install(profile, root=root)


def test_the_table_covers_every_instance_the_emulated_gpus_create(make_state, smi, tmp_path):
    path = make_state("a100_8x_mig", single_gpu("NVIDIA A100-SXM4-40GB", "0000:00:03.0", "Enabled"))
    assert smi(path, "mig", "-cgi", "19,19,14", "-C")[0] == 0
    # A 3g.20gb GPU instance split into three 1c compute instances (ids 0-2).
    rc, out, _err = smi(path, "mig", "-cgi", "9")
    assert rc == 0
    gpu_instance = re.search(r"GPU instance ID\s+(\d+)", out).group(1)
    assert smi(path, "mig", "-gi", gpu_instance, "-cci", "0,0,0")[0] == 0
    rc, out, _err = smi(path, "-q", "-x")
    assert rc == 0
    gpu = parse_query_xml(out)["gpus"][0]
    assert len(gpu["mig_devices"]) == 6 and max(device["compute_instance_id"] for device in gpu["mig_devices"]) == 2
    root = str(tmp_path / "node")
    installer.mig_minors(root)
    names = set(line.split()[0] for line in _installed(root).splitlines())
    for device in gpu["mig_devices"]:
        prefix = "gpu%d/gi%d" % (gpu["minor_number"], device["gpu_instance_id"])
        assert prefix + "/access" in names
        assert "%s/ci%d/access" % (prefix, device["compute_instance_id"]) in names


def test_a_procfs_that_takes_no_files_leaves_the_table_out(tmp_path):
    # A container's /proc refuses new files; the installer goes on without the table.
    blocker = tmp_path / "proc"
    blocker.write_text("not a folder")
    assert installer.mig_minors(str(tmp_path)) == []
