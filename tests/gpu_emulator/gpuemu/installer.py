# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Installs the emulated tools into a node (or under --root): wrapper executables,
the state file, /dev/nvidia* nodes (with the NVSwitch ones), /proc/driver/nvidia-caps/mig-minors
(where /proc takes files), an nvidia-persistenced unit of one of the flavours in units.py,
when asked the Fabric Manager package (fabricmanager_package.py) and the NVIDIA Container
Toolkit's CDI refresh units (ctk_units.py). Re-running changes nothing and never resets an
existing state."""

import os
import stat
import sys

from . import catalog, cli, ctk_units, fabric, fabricmanager_package, mig, nvidia_caps, service_units, state as state_file, units, visibility

BIN_DIR = "usr/bin"
NVIDIA_MAJOR = 195
CTL_MINOR = 255
# The NVSwitch driver's nodes (NVIDIA/nvidia-modprobe modprobe-utils/nvidia-modprobe-utils.h:
# /dev/nvidia-nvswitchctl at minor 255, /dev/nvidia-nvswitch%d). Their major is allocated
# when the module loads (nvidia-modprobe reads it from /proc/devices), so any free one does.
NVSWITCH_MAJOR = 240
NVSWITCH_CTL = "dev/nvidia-nvswitchctl"
NVSWITCH_DEVICE = "dev/nvidia-nvswitch%d"
FABRIC_MANAGER_TOOL = "nv-fabricmanager"
CDI_HOOK_TOOL = "nvidia-cdi-hook"
# NVIDIA/nvidia-modprobe modprobe-utils/nvidia-modprobe-utils.h and nvidia-modprobe-utils.c:
# /dev/nvidia-modeset is the nvidia major's minor 254; /dev/nvidia-uvm and
# /dev/nvidia-uvm-tools are minors 0 and 1 of the nvidia-uvm module's major, and
# /dev/nvidia-caps/nvidia-cap<minor> the nvidia-caps module's, both allocated when the module
# loads (nvidia-modprobe reads them from /proc/devices), so any free ones do.
MODESET_MINOR = 254
UVM_MAJOR = 239
UVM_DEVICES = (("dev/nvidia-uvm", 0), ("dev/nvidia-uvm-tools", 1))
CAPS_MAJOR = 238
# Emulator choice: readable by all; the driver gives each node the mode of its
# /proc/driver/nvidia/capabilities file, which the emulator does not model.
CAP_MODE = 0o444

WRAPPER = """#!{python}
# {tool}: gpuemu's emulation of an NVIDIA tool or a CUDA application, for tests and the lab only.
# Installed by `python3 -m gpuemu install`; see tests/gpu_emulator/README.md.
import os
import sys

sys.path.insert(0, {package_parent!r})
{state_default}from gpuemu.cli import main

sys.exit(main({tool!r}, sys.argv[1:]))
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


def _device_node(path, minor, major=NVIDIA_MAJOR, mode=0o666):
    if os.path.exists(path):
        return False
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        os.mknod(path, mode | stat.S_IFCHR, os.makedev(major, minor))
        os.chmod(path, mode)
    except (OSError, AttributeError):
        # No CAP_MKNOD (or an unprivileged build): a plain file still marks the device.
        with open(path, "w", encoding="utf-8"):
            pass
        os.chmod(path, mode)
    return True


def mig_cap_nodes(state):
    """(path, minor, major, mode) of the MIG capability nodes: config and monitor once a GPU
    has MIG on, and the access nodes of every GPU instance and compute instance."""
    minors = set()
    for gpu in state["gpus"]:
        if mig.enabled(gpu):
            minors.update((nvidia_caps.CONFIG_MINOR, nvidia_caps.MONITOR_MINOR))
            for instance, ci in mig.mig_devices(gpu):
                minors.update(visibility.cap_minors(gpu, instance, ci))
    return [(visibility.CAP_NODE_PATH % minor, minor, CAPS_MAJOR, CAP_MODE) for minor in sorted(minors)]


def device_nodes(root, state):
    """/dev/nvidiactl, /dev/nvidia-modeset, /dev/nvidia-uvm, /dev/nvidia-uvm-tools and
    /dev/nvidiaN for the state's GPUs, the MIG capability nodes of its MIG instances, and
    on an NVSwitch board /dev/nvidia-nvswitchctl and /dev/nvidia-nvswitchN for its
    switches, as the drivers and nvidia-modprobe create them; returns the paths made. A
    container's /dev is new at each start, so a boot makes them again."""
    wanted = [("dev/nvidiactl", CTL_MINOR, NVIDIA_MAJOR, 0o666), ("dev/nvidia-modeset", MODESET_MINOR, NVIDIA_MAJOR, 0o666)]
    wanted += [(path, minor, UVM_MAJOR, 0o666) for path, minor in UVM_DEVICES]
    wanted += [("dev/nvidia%d" % gpu["minor_number"], gpu["minor_number"], NVIDIA_MAJOR, 0o666) for gpu in state["gpus"]]
    wanted += mig_cap_nodes(state)
    if fabric.nvswitch(state):
        wanted.append((NVSWITCH_CTL, CTL_MINOR, NVSWITCH_MAJOR, 0o666))
        wanted += [(NVSWITCH_DEVICE % n, n, NVSWITCH_MAJOR, 0o666) for n in range(state["nvlink"].get("nvswitches", 0))]
    return [_under(root, path) for path, minor, major, mode in wanted
            if _device_node(_under(root, path), minor, major, mode)]


def mig_minors(root):
    """The driver's mig-minors table (nvidia_caps.py); returns the paths changed.

    A real procfs (a container's /proc) takes no new files: there it is left out, and a
    reader finds it missing, as on a node whose driver is not loaded."""
    path = _under(root, nvidia_caps.PATH)
    try:
        return [path] if _write_if_changed(path, nvidia_caps.mig_minors_text(), 0o444) else []
    except OSError:
        return []


def _link(path, target):
    if os.path.islink(path) and os.readlink(path) == target:
        return False
    if os.path.lexists(path):
        os.unlink(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.symlink(target, path)
    return True


def _service_units(root, python, package_parent, state_path):
    """The fake GPU client units, and the boot oneshot with its wrapper, enabled."""
    files = {os.path.join(service_units.UNIT_DIR, name): text for name, text in service_units.CLIENTS.items()}
    files[os.path.join(service_units.UNIT_DIR, service_units.BOOT_UNIT)] = service_units.BOOT
    changed = [_under(root, path) for path, text in sorted(files.items()) if _write_if_changed(_under(root, path), text, 0o644)]
    wrapper = _under(root, os.path.join(BIN_DIR, service_units.BOOT_BINARY))
    if _write_if_changed(wrapper, service_units.boot_wrapper(python, package_parent, state_path), 0o755):
        changed.append(wrapper)
    wants = _under(root, service_units.BOOT_WANTS)
    if _link(wants, "/" + os.path.join(service_units.UNIT_DIR, service_units.BOOT_UNIT)):
        changed.append(wants)
    return changed


def _remove_own(path, content):
    """Remove a file only while it holds exactly what the installer wrote."""
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read() != content:
                return False
    except OSError:
        return False
    os.unlink(path)
    return True


def _persistenced_unit(root, flavour):
    """Lay down the unit flavour. The udev rule of the ubuntu flavour goes when another
    flavour is installed; a mask is never lifted, as `systemctl unmask` is the
    node's (or a role's) decision."""
    changed = []
    unit = _under(root, units.UNIT_PATH)
    if _write_if_changed(unit, units.unit_text(flavour), 0o644):
        changed.append(unit)
    mask = _under(root, units.MASK_PATH)
    if flavour == "masked" and _link(mask, os.devnull):
        changed.append(mask)
    rules = _under(root, units.UDEV_RULES_PATH)
    if flavour == "ubuntu":
        if _write_if_changed(rules, units.UBUNTU_UDEV_RULES, 0o644):
            changed.append(rules)
    elif _remove_own(rules, units.UBUNTU_UDEV_RULES):
        changed.append(rules)
    return changed


def _cdi_refresh_units(root, omit, wanted):
    """The toolkit's CDI refresh units (ctk_units.py), when asked for. Without the toolkit
    (nvidia-ctk omitted) they go too, as long as they are unchanged."""
    changed = []
    for path, text in sorted(ctk_units.files().items()):
        full = _under(root, path)
        if "nvidia-ctk" in omit:
            if _remove_own(full, text):
                changed.append(full)
        elif wanted and _write_if_changed(full, text, 0o644):
            changed.append(full)
    return changed


def _fabric_manager(full_state, version):
    """Record the package in the state (fabric.install); returns the paths changed."""
    with state_file.editing(full_state) as state:
        before = state.get("fabric_manager")
        fabric.install(state, version)
        changed = state["fabric_manager"] != before
    return [full_state] if changed else []


def _fabric_manager_files(root):
    return [_under(root, path) for path, text in sorted(fabricmanager_package.FILES.items())
            if _write_if_changed(_under(root, path), text, 0o644)]


def install(profile, root="/", state_path=state_file.DEFAULT_PATH, omit=(), python=None, unit=None,
            cdi_refresh_units=False, fabric_manager=False, fabric_manager_version=None):
    """Returns the list of paths changed. unit picks the nvidia-persistenced unit
    flavour (units.FLAVOURS); without it, the profile's persistenced_unit or "default".
    cdi_refresh_units lays down the NVIDIA Container Toolkit's CDI refresh units.
    fabric_manager (or a fabric_manager_version) installs the Fabric Manager package at
    that version, else the driver's; once installed, re-runs keep it."""
    flavour = unit or catalog.load_profile(profile).get("persistenced_unit") or "default"
    if flavour not in units.FLAVOURS:
        raise ValueError("unknown unit flavour %r; known: %s" % (flavour, ", ".join(units.FLAVOURS)))
    changed = []
    package_parent = os.path.dirname(catalog.PACKAGE_DIR)
    full_state = _under(root, state_path)
    if not os.path.exists(full_state):
        fresh = state_file.new(profile)
        # Where this driver's nodes are: nvidia-smi lists what a process with only some of them sees.
        fresh["settings"]["dev_dir"] = _under(root, "dev")
        state_file.write(fresh, full_state)
        changed.append(full_state)
    if fabric_manager or fabric_manager_version:
        changed += [path for path in _fabric_manager(full_state, fabric_manager_version) if path not in changed]
    state = state_file.load(full_state)
    state_default = ""
    if state_path != state_file.DEFAULT_PATH:
        state_default = "os.environ.setdefault(%r, %r)\n" % (state_file.ENV_VAR, state_path)
    for tool in cli.TOOLS:
        path = _under(root, os.path.join(cli.BIN_DIRS.get(tool, BIN_DIR), cli.BINARIES.get(tool, tool)))
        # nvidia-cdi-hook comes in the same package as nvidia-ctk (nvidia-container-toolkit-base).
        left_out = tool in omit or (tool == CDI_HOOK_TOOL and "nvidia-ctk" in omit)
        if left_out or (tool == FABRIC_MANAGER_TOOL and not state.get("fabric_manager")):
            if os.path.exists(path):
                os.unlink(path)
                changed.append(path)
            continue
        content = WRAPPER.format(python=python or sys.executable, tool=tool, package_parent=package_parent,
                                 state_default=state_default)
        if _write_if_changed(path, content, 0o755):
            changed.append(path)
    changed += device_nodes(root, state)
    changed += mig_minors(root)
    changed += _persistenced_unit(root, flavour)
    if state.get("fabric_manager"):
        changed += _fabric_manager_files(root)
    changed += _service_units(root, python or sys.executable, package_parent, state_path)
    changed += _cdi_refresh_units(root, omit, cdi_refresh_units)
    return changed
