# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container data path's fixed facts and pure parsers: where each container engine reads the NVIDIA
runtime, containerd's imports, Docker's size strings and what a CDI spec describes.

The files and keys follow NVIDIA Container Toolkit v1.19.1 (`nvidia-ctk runtime configure`,
cmd/nvidia-ctk/runtime/configure/configure.go and pkg/config/engine/ in NVIDIA/nvidia-container-toolkit);
the CDI folders the CDI specification's (cncf-tags/container-device-interface, SPEC.md: /etc/cdi and
/var/run/cdi, the latter taking precedence).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import posixpath
import re

ENGINES = ("docker", "containerd", "crio", "podman")
# The engines nvidia-ctk registers its runtime with; Podman reads CDI specs only.
CONFIGURED = ("docker", "containerd", "crio")
# What tells an engine is installed: its unit or its daemon (podman has no daemon).
UNITS = {"docker": "docker.service", "containerd": "containerd.service", "crio": "crio.service"}
BINARIES = {"docker": "dockerd", "containerd": "containerd", "crio": "crio", "podman": "podman"}
BINARY_DIRS = ("/usr/bin", "/usr/sbin", "/usr/local/bin", "/bin")
# nvidia-ctk runtime configure's defaults (configure.go, v1.19.1): the file each engine reads and the drop-in
# the toolkit writes. CRI-O reads /etc/crio/crio.conf.d by default; containerd only what config.toml imports.
CONFIG_PATHS = {"docker": "/etc/docker/daemon.json", "containerd": "/etc/containerd/config.toml",
                "crio": "/etc/crio/crio.conf"}
DROP_IN_PATHS = {"containerd": "/etc/containerd/conf.d/99-nvidia.toml", "crio": "/etc/crio/crio.conf.d/99-nvidia.toml"}
CONTAINERD_IMPORT = "/etc/containerd/conf.d/*.toml"
# containerd's CRI plugin: its id, and its URI in config version 2 and in version 3 (containerd 2.x).
CONTAINERD_CRI_PLUGINS = ("cri", "io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime")
PACKAGE = "nvidia-container-toolkit"
# The CDI spec: /var/run/cdi/nvidia.yaml is the file the toolkit's own refresh units write (v1.18.0 and later,
# deployments/systemd/nvidia-cdi-refresh.service), made again at every boot; without them, /etc/cdi/nvidia.yaml,
# the path NVIDIA's CDI guide uses, which a reboot keeps.
CDI_REFRESH_UNITS = ("nvidia-cdi-refresh.path", "nvidia-cdi-refresh.service")
CDI_SPEC_WITH_REFRESH = "/var/run/cdi/nvidia.yaml"
CDI_SPEC_WITHOUT_REFRESH = "/etc/cdi/nvidia.yaml"
# Whole GPUs and MIG devices by index and by UUID (nvidia-ctk cdi generate --device-name-strategy).
CDI_NAME_STRATEGIES = ("index", "uuid")

# Docker's size strings (go-units RAMInBytes, which default-shm-size goes through): a number, an optional unit
# letter, an optional i and b, any case: 64m, 1g, 8GiB, 512MB.
SIZE_RULE = "a size such as 64m, 1g or 8GiB (a number and an optional unit k, m, g, t or p), or empty to leave it"
_SIZE = re.compile(r"^[0-9]+(\.[0-9]+)? ?[kKmMgGtTpP]?[iI]?[bB]?$")


def valid_size(text):
    return bool(_SIZE.match(text))


_TABLE = re.compile(r"^\s*\[")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'')


def _top_level_strings(text, key):
    """The strings of a top-level array (before the first table) of a TOML text, or [] where it has none."""
    top = []
    for line in (text or "").splitlines():
        if _TABLE.match(line):
            break
        top.append(re.sub(r"#.*$", "", line))
    found = re.search(r"^\s*%s\s*=\s*\[(.*?)\]" % re.escape(key), "\n".join(top), re.S | re.M)
    if not found:
        return []
    return [double if double or not single else single for double, single in _STRING.findall(found.group(1))]


def containerd_imports(text):
    """The imports of a containerd config.toml text: the strings of its top-level `imports` array."""
    return _top_level_strings(text, "imports")


def containerd_cri_disabled(text):
    """Whether a containerd config.toml disables the CRI plugin (by its id or either of its URIs), as the
    config.toml of Docker's containerd.io package does (disabled_plugins = ["cri"]): that containerd serves
    Docker alone, and no CRI runtime of it is ever used."""
    return bool(set(_top_level_strings(text, "disabled_plugins")) & set(CONTAINERD_CRI_PLUGINS))


def imports_drop_in(imports, drop_in_path, config_path=None):
    """Whether containerd loads drop_in_path through one of imports (a path or a * pattern in its folder).

    As containerd's resolveImports does (containerd v1.7 and v2, config.go), each import is cleaned and a relative
    one is taken from the folder of config_path, the file that declares it."""
    folder, name = drop_in_path.rsplit("/", 1)
    for pattern in imports:
        if config_path and not pattern.startswith("/"):
            pattern = posixpath.join(posixpath.dirname(config_path), pattern)
        pattern = posixpath.normpath(pattern)
        if pattern == drop_in_path:
            return True
        if pattern.rsplit("/", 1)[0] == folder and re.match(
                "^%s$" % re.escape(pattern.rsplit("/", 1)[1]).replace("\\*", ".*"), name):
            return True
    return False


_TABLE_NAME = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]")


def toml_tables(text):
    """The table names a TOML text declares ([a.b] and [[a.b]] headers), as written."""
    return set(match.group(1) for match in map(_TABLE_NAME.match, (text or "").splitlines()) if match)


_DEVICE = re.compile(r"^(\s*)- name: (.+)$")
_DRIVER = re.compile(r"--host-driver-version=([0-9.]+)")
_PATH = re.compile(r"^\s*-?\s*(?:hostPath|path): (/\S+)$")


def cdi_summary(text):
    """What a CDI spec (YAML, as nvidia-ctk cdi generate writes it) describes: its device names, in order, the
    driver version its hooks name and every host path it mounts or passes in."""
    devices, paths, driver = [], set(), None
    in_devices, device_indent = False, None
    for line in (text or "").splitlines():
        if line[:1].isalpha():
            in_devices = line.startswith("devices:")
        device = _DEVICE.match(line)
        # A device is a list item right under devices:, at the indent of the first one.
        if in_devices and device and device_indent in (None, device.group(1)):
            device_indent = device.group(1)
            devices.append(device.group(2).strip().strip("'\""))
        version = _DRIVER.search(line)
        if version and driver is None:
            driver = version.group(1)
        path = _PATH.match(line)
        if path:
            paths.add(path.group(1))
    return {"devices": devices, "driver_version": driver, "paths": paths}


def cdi_changes(installed, generated):
    """What a spec generated now changes in the installed one, item by item: devices gone and new, the driver
    version and the host paths (device nodes, libraries) gone and new. Empty when only the layout differs."""
    before, after = cdi_summary(installed), cdi_summary(generated)
    changes = {}
    removed = [name for name in before["devices"] if name not in after["devices"]]
    added = [name for name in after["devices"] if name not in before["devices"]]
    if removed:
        changes["devices_removed"] = removed
    if added:
        changes["devices_added"] = added
    if before["driver_version"] != after["driver_version"]:
        changes["driver_version"] = {"before": before["driver_version"], "after": after["driver_version"]}
    if before["paths"] - after["paths"]:
        changes["paths_removed"] = sorted(before["paths"] - after["paths"])
    if after["paths"] - before["paths"]:
        changes["paths_added"] = sorted(after["paths"] - before["paths"])
    return changes
