# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The files of NVIDIA's Fabric Manager package that `install --fabricmanager` lays
down beside the nv-fabricmanager wrapper: the systemd unit and the config file.

The unit has the lines of the one the package ships (the fabricmanager archive's
systemd/nvidia-fabricmanager.service, R525 to R550, as pexip/os-nvidia-fabricmanager
repackages it; Ubuntu's nvidia-fabricmanager-550 file list puts it in
/lib/systemd/system): Type=forking, TimeoutStartSec=240, no PIDFile, and an
[Install] section. Like the package, install neither enables nor starts it (Fabric
Manager user guide, installation: the administrator enables and starts the service).
The config file is the emulator's own: the daemon does not read it."""

UNIT_NAME = "nvidia-fabricmanager.service"
UNIT_PATH = "lib/systemd/system/" + UNIT_NAME
CONFIG_PATH = "usr/share/nvidia/nvswitch/fabricmanager.cfg"

UNIT = """# gpuemu's stand-in for nvidia-fabricmanager.service of NVIDIA's Fabric Manager package.
[Unit]
Description=NVIDIA fabric manager service
After=network-online.target
Requires=network-online.target

[Service]
User=root
PrivateTmp=false
Type=forking
TimeoutStartSec=240

ExecStart=/usr/bin/nv-fabricmanager -c /%s

LimitCORE=infinity

[Install]
WantedBy=multi-user.target
""" % CONFIG_PATH

CONFIG = """# gpuemu's stand-in for the package's fabricmanager.cfg; the emulated daemon does not
# read it. The values are the package's defaults for a bare-metal node.
LOG_FILE_NAME=/var/log/fabricmanager.log
DAEMONIZE=1
FABRIC_MODE=0
FM_STAY_RESIDENT_ON_FAILURES=0
ABORT_CUDA_JOBS_ON_FM_EXIT=1
"""

FILES = {UNIT_PATH: UNIT, CONFIG_PATH: CONFIG}
