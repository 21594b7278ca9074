# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvidia-persistenced unit flavours `install` can lay down. Each is written for
this emulator and keeps only the lines that change how a role must handle the unit
(ExecStart arguments, Type, PIDFile, whether [Install] exists); the source each
follows is named beside it."""

UNIT_PATH = "lib/systemd/system/nvidia-persistenced.service"
MASK_PATH = "etc/systemd/system/nvidia-persistenced.service"
UDEV_RULES_PATH = "lib/udev/rules.d/71-nvidia.rules"

_HEAD = "[Unit]\nDescription=NVIDIA Persistence Daemon\nWants=syslog.target\n%s\n[Service]\nType=forking\n"
_STOP = "ExecStopPost=/bin/rm -rf /var/run/nvidia-persistenced\n"
_INSTALL = "\n[Install]\nWantedBy=multi-user.target\n"

UNITS = {
    # A widespread hand-written unit (PIDFile, Restart=always, --verbose); the emulator's
    # historical default, shipped by no package.
    "default": (_HEAD % "" + "PIDFile=/var/run/nvidia-persistenced/nvidia-persistenced.pid\nRestart=always\n"
                "ExecStart=/usr/bin/nvidia-persistenced --verbose\n" + _STOP + _INSTALL),
    # NVIDIA/nvidia-persistenced init/systemd/nvidia-persistenced.service.template, with
    # __USER__ as its install.sh fills it in.
    "upstream": (_HEAD % "IgnoreOnIsolate=true\n" + "ExecStart=/usr/bin/nvidia-persistenced --user nvidia-persistenced\n"
                 + _STOP + _INSTALL),
    # Debian's nvidia-persistenced package (debian/nvidia-persistenced.service, bookworm):
    # runs as its own user nvpd in group video. Its ExecStartPre lines, which create the
    # run directory for nvpd, are left out: the lab has no nvpd user.
    "debian": (_HEAD % "" + "ExecStart=/usr/bin/nvidia-persistenced --user nvpd --group video\n" + _STOP
               + "TimeoutStopSec=2\n" + _INSTALL),
    # Ubuntu's driver packages (canonical/nvidia-graphics-drivers debian/nvidia-persistenced.service):
    # static, no [Install]; the udev rule below starts it when the nvidia module loads.
    "ubuntu": (_HEAD % "" + "ExecStart=/usr/bin/nvidia-persistenced --user nvidia-persistenced --no-persistence-mode --verbose\n"
               + _STOP),
    # NVIDIA's own Ubuntu packaging in the CUDA repository
    # (NVIDIA/ubuntu-packaging-nvidia-driver debian/nvidia-persistenced.service): static too.
    "nvidia-ubuntu": (_HEAD % "" + "ExecStart=/usr/bin/nvidia-persistenced --user root --no-persistence-mode --verbose\n"
                      + _STOP + "TimeoutSec=300\n"),
}
# "masked": the upstream unit, masked by a link to /dev/null in /etc/systemd/system.
FLAVOURS = tuple(UNITS) + ("masked",)
MASKED_BASE = "upstream"

# The persistenced lines of Ubuntu's udev rules (canonical/nvidia-graphics-drivers
# debian/71-nvidia.rules).
UBUNTU_UDEV_RULES = (
    '# Start and stop nvidia-persistenced when loading and unloading the driver\n'
    'ACTION=="add" DEVPATH=="/module/nvidia" SUBSYSTEM=="module" RUN+="/bin/systemctl start --no-block nvidia-persistenced.service"\n'
    'ACTION=="remove" DEVPATH=="/module/nvidia" SUBSYSTEM=="module" RUN+="/bin/systemctl stop --no-block nvidia-persistenced"\n'
)


def unit_text(flavour):
    return UNITS[MASKED_BASE if flavour == "masked" else flavour]
