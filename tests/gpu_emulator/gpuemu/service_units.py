# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The other systemd units `install` lays down: fake GPU client services (neither
enabled nor started, like the persistenced unit) and the boot oneshot (enabled)."""

UNIT_DIR = "lib/systemd/system"
BOOT_UNIT = "gpuemu-boot.service"
# Enabling, as `systemctl enable` would do it from [Install] WantedBy=sysinit.target.
BOOT_WANTS = "etc/systemd/system/sysinit.target.wants/" + BOOT_UNIT
BOOT_BINARY = "gpuemu-boot"

_CLIENT = """# {source}
# gpuemu's stand-in: a gpu-holder that keeps the GPUs without a CUDA context.
[Unit]
Description={description}

[Service]
Type=simple
ExecStart=/usr/bin/gpuemu-gpu-holder --name {name}

[Install]
WantedBy=multi-user.target
"""

CLIENTS = {
    "nvidia-dcgm.service": _CLIENT.format(
        source="Stands for nvidia-dcgm.service of DCGM's datacenter-gpu-manager package, which runs nv-hostengine.",
        description="NVIDIA DCGM service", name="nv-hostengine"),
    "dcgm-exporter.service": _CLIENT.format(
        source="Stands for dcgm-exporter.service (NVIDIA/dcgm-exporter), a unit NVIDIA/mig-parted's hooks.sh stops.",
        description="NVIDIA DCGM exporter", name="dcgm-exporter"),
    "nvsm.service": _CLIENT.format(
        source="Stands for nvsm.service of DGX OS's nvsm (NVIDIA System Management), which mig-parted's hooks.sh stops.",
        description="NVIDIA System Management", name="nvsm"),
}

# The driver loading at boot: units ordered after sysinit.target see GPUs that just
# came up (pending MIG modes applied, no instances, no recorded pids).
BOOT = """# gpuemu's stand-in for the NVIDIA driver loading at boot: `gpuemu reboot --boot`.
[Unit]
Description=gpuemu: the GPUs as after a node boot
DefaultDependencies=no
After=local-fs.target
Before=sysinit.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/bin/%s

[Install]
WantedBy=sysinit.target
""" % BOOT_BINARY

BOOT_WRAPPER = """#!{python}
# {binary}: gpuemu's node boot (`python3 -m gpuemu reboot --boot --root /`), run by {unit}.
# Installed by `python3 -m gpuemu install`; see tests/gpu_emulator/README.md.
import sys

sys.path.insert(0, {package_parent!r})
from gpuemu.__main__ import main

sys.exit(main(["reboot", "--boot", "--root", "/", "--state", {state_path!r}]))
"""


def boot_wrapper(python, package_parent, state_path):
    return BOOT_WRAPPER.format(python=python, binary=BOOT_BINARY, unit=BOOT_UNIT, package_parent=package_parent,
                               state_path=state_path)
