# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CDI refresh units the NVIDIA Container Toolkit ships (from v1.18.0), as of v1.19.1.

Source: NVIDIA/nvidia-container-toolkit v1.19.1 deployments/systemd/nvidia-cdi-refresh.service,
nvidia-cdi-refresh.path and nvidia-cdi-refresh.env; packaging/debian/
nvidia-container-toolkit-base.install puts the units in /etc/systemd/system and the env file
in /etc/nvidia-container-toolkit. The package's postinst enables and starts both units when
systemd runs; the emulator's install only lays them down, like its other units.

The units keep every directive of the shipped ones; the license header and comments are left
out. The service regenerates /var/run/cdi/nvidia.yaml with `nvidia-ctk cdi generate` (which
reads NVIDIA_CTK_CDI_OUTPUT_FILE_PATH); the path unit starts it when the kernel's module list
or nvidia-ctk changes, that is after a driver or toolkit upgrade.
"""

UNIT_DIR = "/etc/systemd/system"
SERVICE = "nvidia-cdi-refresh.service"
PATH_UNIT = "nvidia-cdi-refresh.path"
ENV_FILE = "/etc/nvidia-container-toolkit/nvidia-cdi-refresh.env"
OUTPUT = "/var/run/cdi/nvidia.yaml"

SERVICE_TEXT = """# gpuemu: NVIDIA Container Toolkit v1.19.1 deployments/systemd/nvidia-cdi-refresh.service
[Unit]
Description=Refresh NVIDIA CDI specification file
ConditionPathExists=|/usr/bin/nvidia-smi
ConditionPathExists=|/usr/sbin/nvidia-smi
ConditionPathExists=|/usr/lib/wsl/lib/nvidia-smi
ConditionPathExists=/usr/bin/nvidia-ctk
StartLimitBurst=5
StartLimitIntervalSec=10s

[Service]
Type=oneshot
Environment=NVIDIA_CTK_CDI_OUTPUT_FILE_PATH={output}
EnvironmentFile=-{env_file}
ExecCondition=/bin/sh -c '/usr/bin/grep -qE "/(nvidia|nvidia-current)[.]ko" /lib/modules/%v/modules.dep || [ -e /dev/dxg ]'
ExecStart=/bin/sh -c '/usr/bin/nvidia-smi -L || /usr/sbin/nvidia-smi -L || /usr/lib/wsl/lib/nvidia-smi -L'
ExecStart=/usr/bin/nvidia-ctk cdi generate
CapabilityBoundingSet=CAP_SYS_MODULE CAP_SYS_ADMIN CAP_MKNOD
Restart=on-failure
RestartSec=1s

[Install]
WantedBy=multi-user.target
""".format(output=OUTPUT, env_file=ENV_FILE)

PATH_TEXT = """# gpuemu: NVIDIA Container Toolkit v1.19.1 deployments/systemd/nvidia-cdi-refresh.path
[Unit]
Description=Trigger CDI refresh on NVIDIA driver or toolkit install / upgrade events

[Path]
PathChanged=/lib/modules/%v/modules.dep
PathChanged=/lib/modules/%v/modules.dep.bin
PathChanged=/usr/bin/nvidia-ctk

[Install]
WantedBy=multi-user.target
"""

# The shipped env file sets nothing: every line is a comment.
ENV_TEXT = """# gpuemu: NVIDIA Container Toolkit v1.19.1 deployments/systemd/nvidia-cdi-refresh.env
# Overrides for the nvidia-ctk cdi generate run of nvidia-cdi-refresh.service, as ENVVAR=value lines.
# NVIDIA_CTK_CDI_OUTPUT_FILE_PATH={output}
""".format(output=OUTPUT)


def files():
    """{absolute path: text} of everything the toolkit's refresh units lay down."""
    return {UNIT_DIR + "/" + SERVICE: SERVICE_TEXT, UNIT_DIR + "/" + PATH_UNIT: PATH_TEXT, ENV_FILE: ENV_TEXT}
