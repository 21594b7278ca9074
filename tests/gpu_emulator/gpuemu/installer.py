# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Installs the emulated tools into a node (or under --root): wrapper executables,
the state file, /dev/nvidia* nodes and the nvidia-persistenced unit the driver
packaging ships. Re-running changes nothing and never resets an existing state."""

import os
import stat
import sys

from . import catalog, cli, state as state_file

BIN_DIR = "usr/bin"
UNIT_PATH = "lib/systemd/system/nvidia-persistenced.service"
NVIDIA_MAJOR = 195
CTL_MINOR = 255

WRAPPER = """#!{python}
# {tool}: gpuemu's emulation of the NVIDIA tool, for tests and the lab only.
# Installed by `python3 -m gpuemu install`; see tests/gpu_emulator/README.md.
import os
import sys

sys.path.insert(0, {package_parent!r})
{state_default}from gpuemu.cli import main

sys.exit(main({tool!r}, sys.argv[1:]))
"""

UNIT = """[Unit]
Description=NVIDIA Persistence Daemon
Wants=syslog.target

[Service]
Type=forking
PIDFile=/var/run/nvidia-persistenced/nvidia-persistenced.pid
Restart=always
ExecStart=/usr/bin/nvidia-persistenced --verbose
ExecStopPost=/bin/rm -rf /var/run/nvidia-persistenced

[Install]
WantedBy=multi-user.target
"""


def _under(root, path):
    return os.path.join(root, path.lstrip("/"))


def _write_if_changed(path, content, mode):
    try:
        with open(path, encoding="utf-8") as handle:
            same = handle.read() == content
    except OSError:
        same = False
    if same and stat.S_IMODE(os.stat(path).st_mode) == mode:
        return False
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(content)
    os.chmod(path, mode)
    return True


def _device_node(path, minor):
    if os.path.exists(path):
        return False
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(NVIDIA_MAJOR, minor))
    except (OSError, AttributeError):
        # No CAP_MKNOD (or an unprivileged build): a plain file still marks the device.
        with open(path, "w", encoding="utf-8"):
            pass
        os.chmod(path, 0o666)
    return True


def install(profile, root="/", state_path=state_file.DEFAULT_PATH, omit=(), python=None):
    """Returns the list of paths changed."""
    changed = []
    package_parent = os.path.dirname(catalog.PACKAGE_DIR)
    full_state = _under(root, state_path)
    if not os.path.exists(full_state):
        state_file.write(state_file.new(profile), full_state)
        changed.append(full_state)
    state = state_file.load(full_state)
    state_default = ""
    if state_path != state_file.DEFAULT_PATH:
        state_default = "os.environ.setdefault(%r, %r)\n" % (state_file.ENV_VAR, state_path)
    for tool in cli.TOOLS:
        path = _under(root, os.path.join(BIN_DIR, tool))
        if tool in omit:
            if os.path.exists(path):
                os.unlink(path)
                changed.append(path)
            continue
        content = WRAPPER.format(python=python or sys.executable, tool=tool, package_parent=package_parent,
                                 state_default=state_default)
        if _write_if_changed(path, content, 0o755):
            changed.append(path)
    if _device_node(_under(root, "dev/nvidiactl"), CTL_MINOR):
        changed.append(_under(root, "dev/nvidiactl"))
    for gpu in state["gpus"]:
        path = _under(root, "dev/nvidia%d" % gpu["minor_number"])
        if _device_node(path, gpu["minor_number"]):
            changed.append(path)
    unit = _under(root, UNIT_PATH)
    if _write_if_changed(unit, UNIT, 0o644):
        changed.append(unit)
    return changed
