# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-cdi-hook, the OCI hook the toolkit's CDI specs name (toolkit v1.19.1), as a runtime
runs it at createContainer: the container's state (OCI runtime-spec state: its bundle) on
stdin, the container's root from the bundle's config.json (internal/oci/state.go
GetContainerRoot: root.path, relative to the bundle unless absolute).

Sources, NVIDIA/nvidia-container-toolkit at tag v1.19.1, cmd/nvidia-cdi-hook/:
* create-symlinks/create-symlinks.go: each `--link target::link` becomes a symlink at link in
  the container's root; a link already pointing at target is kept; a spec without `::` fails;
* update-ldcache/update-ldcache.go and internal/ldconfig/ldconfig.go: the --folder values go
  into the container's /etc/ld.so.conf.d/00-nvcr-<random>.conf (and /etc/ld.so.conf gets an
  include line where it is missing), then the host's ldconfig (--ldconfig-path, default
  /sbin/ldconfig) rebuilds the container's cache;
* cudacompat/cudacompat.go (enable-cuda-compat): acts only where the container holds CUDA
  compat libraries in /usr/local/cuda/compat newer than the host driver;
* disable-device-node-modification/: acts only where the host has
  /proc/driver/nvidia/params with `ModifyDeviceFiles: 1`.

Emulator choices: the last two do nothing where the real ones would have nothing to do (no
compat libraries in the container, no params file on an emulated node) and say so on stderr
otherwise; ldconfig runs as `ldconfig -r <root>`, and its absence on the node is no error.
"""

import json
import os
import shutil
import subprocess
import tempfile

COMPAT_DIR = "usr/local/cuda/compat"
PARAMS = "/proc/driver/nvidia/params"
USAGE = "NAME:\n   NVIDIA CDI Hook - Tooling for CDI hooks\n"


def container_root(state_text):
    state = json.loads(state_text)
    bundle = state["bundle"]
    with open(os.path.join(bundle, "config.json"), encoding="utf-8") as handle:
        root = (json.load(handle).get("root") or {}).get("path", "")
    return root if os.path.isabs(root) else os.path.join(bundle, root)


def _values(argv, flag):
    found, index = [], 0
    while index < len(argv):
        name, has_value, value = argv[index].partition("=")
        if name == flag:
            if not has_value:
                index += 1
                value = argv[index] if index < len(argv) else ""
            found.append(value)
        index += 1
    return found


def _inside(root, path):
    return os.path.join(root, path.lstrip("/"))


def create_symlinks(root, argv):
    for spec in _values(argv, "--link"):
        target, separator, link = spec.partition("::")
        if not separator or "::" in link:
            raise ValueError("invalid symlink specification %s" % spec)
        path = _inside(root, link)
        if os.path.islink(path) and os.readlink(path) == target:
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(target, path)


def update_ldcache(root, argv):
    folders = _values(argv, "--folder")
    conf_dir = _inside(root, "etc/ld.so.conf.d")
    top = _inside(root, "etc/ld.so.conf")
    if not os.path.exists(top):
        os.makedirs(os.path.dirname(top), exist_ok=True)
        with open(top, "w", encoding="utf-8") as handle:
            handle.write("include /etc/ld.so.conf.d/*.conf\n")
    if folders:
        os.makedirs(conf_dir, exist_ok=True)
        handle, _path = tempfile.mkstemp(prefix="00-nvcr-", suffix=".conf", dir=conf_dir)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write("".join("%s\n" % folder for folder in folders))
    ldconfig = (_values(argv, "--ldconfig-path") or ["/sbin/ldconfig"])[-1]
    if shutil.which(ldconfig):
        subprocess.run([ldconfig, "-r", root], capture_output=True, check=False, timeout=30)


def main(argv, stdin, stderr):
    """Returns the exit code."""
    if not argv or argv[0] in ("-h", "--help", "help"):
        stderr.write(USAGE)
        return 0 if argv else 1
    command, options = argv[0], argv[1:]
    try:
        if command == "create-symlinks":
            create_symlinks(container_root(stdin.read()), options)
        elif command == "update-ldcache":
            update_ldcache(container_root(stdin.read()), options)
        elif command == "enable-cuda-compat":
            if os.path.isdir(_inside(container_root(stdin.read()), COMPAT_DIR)):
                stderr.write("gpuemu: CUDA compat libraries are not emulated; nothing done\n")
        elif command == "disable-device-node-modification":
            if os.path.exists(PARAMS):
                stderr.write("gpuemu: the driver's params file is not emulated; nothing done\n")
        else:
            stderr.write("No help topic for '%s'\n" % command)
            return 3
    except (OSError, ValueError, KeyError) as error:
        stderr.write("Error: %s\n" % error)
        return 1
    return 0
