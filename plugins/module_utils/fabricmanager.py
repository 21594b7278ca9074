# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA Fabric Manager: whether a node needs it, which version it has, its unit's drop-in and
the fabric state of each GPU. Pure parsing, no judgement beyond equal versions.

Sources: NVIDIA's Fabric Manager user guide (NVSwitch-based systems need the daemon; its version
must equal the driver's; Debian/Ubuntu ship it as nvidia-fabricmanager-<branch>, RHEL as
nvidia-fabric-manager); the `nv-fabricmanager --version` line as leptonai/gpud's parser test shows it
(`Fabric Manager version is : 535.161.08`); the NVSwitch device nodes /dev/nvidia-nvswitchN the
NVSwitch driver creates beside /dev/nvidia-nvswitchctl.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from .managed_files import managed_header

UNIT = "nvidia-fabricmanager.service"
DROPIN_PATH = "/etc/systemd/system/nvidia-fabricmanager.service.d/90-gpuops-fabricmanager.conf"
DAEMON = "nv-fabricmanager"
# Ordering only (no Wants=): where both start, persistence mode comes first.
PERSISTENCED_UNIT = "nvidia-persistenced.service"
# One node per switch; the control node nvidia-nvswitchctl alone says the module loaded, not that switches exist.
NVSWITCH_DEVICE = re.compile(r"^nvidia-nvswitch\d+$")
NVSWITCH_GLOB = "/dev/nvidia-nvswitch[0-9]*"
DEB_PACKAGE = "nvidia-fabricmanager-%s"
RPM_PACKAGE = "nvidia-fabric-manager"
COMPLETED, SUCCESS = "Completed", "Success"

_VERSION_LINE = re.compile(r"Fabric Manager version is\s*:\s*(\S+)")
_DRIVER_VERSION = re.compile(r"^\d+(?:\.\d+)+$")


def nvswitch_devices(root="/"):
    """The NVSwitch device nodes under root's /dev, as /dev/... paths, sorted by switch number."""
    try:
        names = os.listdir(os.path.join(root, "dev"))
    except OSError:
        return []
    found = [name for name in names if NVSWITCH_DEVICE.match(name)]
    return ["/dev/" + name for name in sorted(found, key=lambda name: int(name[len("nvidia-nvswitch"):]))]


def fabric_expected(gpu_names, fabric_gpus):
    """The product names with at least as many GPUs on the node as their model's fabric_gpus (the count
    from which its boards carry NVSwitches, gpu_models on the controller): {name: count}."""
    counts = {}
    for name in gpu_names:
        counts[name] = counts.get(name, 0) + 1
    return dict((name, count) for name, count in counts.items()
                if fabric_gpus.get(name) is not None and count >= fabric_gpus[name])


def parse_daemon_version(text):
    """`nv-fabricmanager --version` output -> its version, or None."""
    match = _VERSION_LINE.search(text or "")
    return match.group(1) if match else None


def driver_branch(driver_version):
    """'535.104.05' -> '535', the branch Debian and Ubuntu name the package after."""
    return (driver_version or "").split(".")[0]


def package_name(manager, driver_version):
    """The Fabric Manager package for the driver: by branch with dpkg, one name with rpm."""
    return DEB_PACKAGE % driver_branch(driver_version) if manager == "dpkg" else RPM_PACKAGE


def package_query_argv(manager, tool_path, package):
    """The argv that prints the installed package's version, and nothing else."""
    if manager == "dpkg":
        # The status too: a removed package whose configuration stays still has a version.
        return [tool_path, "--show", "--showformat=${db:Status-Abbrev}|${Version}\\n", package]
    return [tool_path, "-q", "--queryformat", "%{VERSION}\\n", package]


def upstream_version(package_version):
    """A package's version less its epoch and its packaging revision: '1:535.104.05-1' -> '535.104.05'."""
    text = (package_version or "").strip()
    if not text:
        return None
    text = text.split(":", 1)[1] if ":" in text else text
    return text.split("-", 1)[0] or None


def parse_package_version(text):
    """package_query_argv's output -> the upstream version, or None (not installed). dpkg's line is
    'STATUS|VERSION', installed when the status begins 'ii'; rpm's is the version alone."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    if len(lines) != 1:
        return None
    line = lines[0]
    if "|" in line:
        status, line = line.split("|", 1)
        if not status.startswith("ii"):
            return None
    version = upstream_version(line)
    return version if version and _DRIVER_VERSION.match(version) else None


def offered_versions(madison_text, package):
    """`apt-cache madison PACKAGE` output -> the versions the configured repositories offer, as listed
    (apt-cache(8): one 'package | version | source' line per version and source)."""
    found = []
    for line in (madison_text or "").splitlines():
        fields = [field.strip() for field in line.split("|")]
        if len(fields) == 3 and fields[0] == package and fields[1] not in found:
            found.append(fields[1])
    return found


def version_for_driver(versions, driver_version):
    """The first package version whose upstream version is the driver's, or None."""
    for version in versions:
        if upstream_version(version) == driver_version:
            return version
    return None


def install_argv(manager, tool_path, package, version):
    """The argv that installs the package at that version: apt-get's PACKAGE=VERSION (the exact version
    apt-cache offers), dnf's NAME-VERSION (dnf(8), package specs)."""
    if manager == "dpkg":
        return [tool_path, "install", "-y", "-q", "--no-install-recommends", "%s=%s" % (package, version)]
    return [tool_path, "install", "-y", "%s-%s" % (package, version)]


def version_mismatch(daemon_version, driver_version, package):
    """The message for a Fabric Manager whose version is not the driver's, or None when they match."""
    if daemon_version == driver_version:
        return None
    return ("Fabric Manager %s does not match the NVIDIA driver %s: install %s at version %s "
            "(Fabric Manager must equal the driver's version exactly); nothing was changed") % (
                daemon_version or "(unknown version)", driver_version, package, driver_version)


def render_dropin(unit_path, clients):
    """The unit's drop-in; clients: the GPU clients Fabric Manager must start before (the MIG change's list)."""
    return "\n".join([
        managed_header("fabricmanager"),
        "# Fabric Manager only where the NVSwitch driver made its switch nodes: an image shared by PCIe",
        "# and NVSwitch nodes boots cleanly on both. The boot order: persistence, Fabric Manager, the MIG",
        "# boot service, the GPU clients; Before= holds the clients back also where no MIG boot service",
        "# is (a client that finds no trained fabric gets CUDA error 802). The packaged",
        "# %s stays as shipped." % unit_path,
        "[Unit]",
        "ConditionPathExistsGlob=%s" % NVSWITCH_GLOB,
        "After=%s" % PERSISTENCED_UNIT,
        "Before=%s" % " ".join(clients),
        "",
    ])


def fabric_states(health):
    """gpu_health's GPUs -> [{index, uuid, state, status}]; state None where the GPU reports no fabric."""
    return [{"index": gpu["index"], "uuid": gpu["uuid"], "state": gpu["fabric"]["state"],
             "status": gpu["fabric"]["status"]} for gpu in health]


def untrained(states):
    """The GPUs whose fabric is reported and not Completed with Success, as 'INDEX (UUID): STATE' (a status is
    meaningful only once Completed: 'Completed with status STATUS')."""
    return ["%d (%s): %s" % (gpu["index"], gpu["uuid"], gpu["state"] if gpu["state"] != COMPLETED
                             else "%s with status %s" % (COMPLETED, gpu["status"]))
            for gpu in states if gpu["state"] is not None and (gpu["state"], gpu["status"]) != (COMPLETED, SUCCESS)]


def fabric_reported(states):
    """Whether any GPU reports its fabric (Hopper and newer; an A100 board reads N/A)."""
    return any(gpu["state"] is not None for gpu in states)
