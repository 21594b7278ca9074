# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure parsers of what the containers audit reads: a runtime's info, its containers and images, the data root's
filesystem, and a container process's limits and /dev/shm. Nothing here runs a command or reads a file.

The shapes are Docker's (`docker info --format '{{json .}}'`, `docker inspect --size`, `docker image inspect`),
held to captures of Docker 20.10 (tests/unit/plugins/module_utils/fixtures/docker_20.10/); the field names are
those of Docker's API types (moby api/types: Info, ContainerJSON, HostConfig, ImageInspect).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

# Filesystem types whose data crosses the network (mount(8), the kernel's fs/ and the vendors' clients):
# an image store on one of them reads every layer over the wire.
NETWORK_FILESYSTEMS = frozenset((
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "lustre", "ceph", "fuse.ceph", "fuse.cephfs", "glusterfs",
    "fuse.glusterfs", "gpfs", "beegfs", "afs", "9p", "fuse.sshfs", "ocfs2", "gfs2", "fuse.s3fs", "fuse.gcsfuse",
    "wekafs", "fuse.juicefs", "virtiofs",
))
# NVIDIA_VISIBLE_DEVICES values that give no GPU (the Container Toolkit's "void", "none" and empty).
NO_GPU_VALUES = ("", "void", "none")
_CUDA_REQUIREMENT = re.compile(r"(?:^|\s)cuda>=(\d+(?:\.\d+)?)")
_CUDA_VERSION = re.compile(r"^(\d+)\.(\d+)")
NVIDIA_DEVICE = re.compile(r"^/dev/nvidia\d+$")


def json_document(text):
    """The JSON of a capture or a command's output, '#' header lines left out; ValueError when it is not JSON."""
    lines = [line for line in (text or "").splitlines() if not line.startswith("#")]
    return json.loads("\n".join(lines))


def _d_type(status):
    value = dict((str(key), str(item)) for key, item in status).get("Supports d_type")
    return None if value is None else value.strip().lower() == "true"


def parse_docker_info(text):
    """{version, root, driver, backing_fs, d_type, runtimes, default_runtime} of `docker info --format '{{json .}}'`.

    d_type: overlay2's "Supports d_type" of DriverStatus (True, False, or None where the driver does not say).
    """
    info = json_document(text)
    status = info.get("DriverStatus") or []
    backing = dict((str(key), str(item)) for key, item in status).get("Backing Filesystem")
    return {"version": info.get("ServerVersion"), "root": info.get("DockerRootDir"), "driver": info.get("Driver"),
            "backing_fs": backing, "d_type": _d_type(status), "runtimes": sorted(info.get("Runtimes") or {}),
            "default_runtime": info.get("DefaultRuntime")}


def env_map(entries):
    """{name: value} of a Config.Env list (NAME=value; a bare NAME has an empty value)."""
    found = {}
    for entry in entries or []:
        name, _sep, value = str(entry).partition("=")
        found[name] = value
    return found


def _gpu_holder(host_config, env):
    """How a container holds a GPU, in words, or None: a device request for GPUs (--gpus, or a CDI device),
    an NVIDIA device node (--device /dev/nvidiaN), or NVIDIA_VISIBLE_DEVICES under an NVIDIA runtime (the Container
    Toolkit's runtime reads it; under runc it gives nothing)."""
    for request in host_config.get("DeviceRequests") or []:
        capabilities = [word for group in request.get("Capabilities") or [] for word in group or []]
        if request.get("Driver") == "nvidia" or "gpu" in capabilities:
            ids = request.get("DeviceIDs") or []
            return "device request: %s" % (",".join(ids) if ids else "%s GPU(s)" % request.get("Count"))
        cdi = [name for name in request.get("DeviceIDs") or [] if name.startswith("nvidia.com/")]
        if cdi:
            return "CDI device: %s" % ",".join(cdi)
    for device in host_config.get("Devices") or []:
        path = device.get("PathOnHost") or ""
        if NVIDIA_DEVICE.match(path) or path.startswith("nvidia.com/"):
            return "device: %s" % path
    visible = env.get("NVIDIA_VISIBLE_DEVICES")
    if visible is not None and visible.strip().lower() not in NO_GPU_VALUES and "nvidia" in (
            host_config.get("Runtime") or ""):
        return "NVIDIA_VISIBLE_DEVICES=%s under the %s runtime" % (visible, host_config["Runtime"])
    return None


def _memlock_ulimit(host_config):
    """The memlock --ulimit of a container ({soft, hard}, -1 for unlimited), or None where it has none. Docker names
    it memlock; Podman lists every limit by its kernel name (RLIMIT_MEMLOCK)."""
    for ulimit in host_config.get("Ulimits") or []:
        if str(ulimit.get("Name")).lower() in ("memlock", "rlimit_memlock"):
            return {"soft": ulimit.get("Soft"), "hard": ulimit.get("Hard")}
    return None


def parse_containers(text):
    """Each container of `docker inspect --size --type container ...`: {id, name, image, running, pid, gpu,
    shm_size, ipc_mode, memlock, network_mode, writable_bytes}. writable_bytes: SizeRw, None without --size."""
    found = []
    for item in json_document(text) or []:
        host_config = item.get("HostConfig") or {}
        config = item.get("Config") or {}
        state = item.get("State") or {}
        found.append({
            "id": (item.get("Id") or "")[:12],
            "name": (item.get("Name") or "").lstrip("/"),
            "image": config.get("Image"),
            "running": bool(state.get("Running")),
            "pid": state.get("Pid") or None,
            "gpu": _gpu_holder(host_config, env_map(config.get("Env"))),
            "shm_size": host_config.get("ShmSize"),
            "ipc_mode": host_config.get("IpcMode"),
            "memlock": _memlock_ulimit(host_config),
            "network_mode": host_config.get("NetworkMode"),
            "writable_bytes": item.get("SizeRw"),
        })
    return found


def cuda_requirement(env):
    """The CUDA version an image needs, from its environment: the cuda>= term of NVIDIA_REQUIRE_CUDA, else
    CUDA_VERSION's MAJOR.MINOR; (version, where it came from), or (None, None)."""
    required = _CUDA_REQUIREMENT.search(env.get("NVIDIA_REQUIRE_CUDA") or "")
    if required:
        return required.group(1), "NVIDIA_REQUIRE_CUDA=%s" % env["NVIDIA_REQUIRE_CUDA"]
    version = _CUDA_VERSION.match(env.get("CUDA_VERSION") or "")
    if version:
        return "%s.%s" % version.groups(), "CUDA_VERSION=%s" % env["CUDA_VERSION"]
    return None, None


def parse_images(text):
    """Each image of `docker image inspect ...`: {id, tags, size, cuda, cuda_source, require_disabled}."""
    found = []
    for item in json_document(text) or []:
        env = env_map((item.get("Config") or {}).get("Env"))
        cuda, source = cuda_requirement(env)
        found.append({"id": (item.get("Id") or "").split(":")[-1][:12], "tags": list(item.get("RepoTags") or []),
                      "size": item.get("Size"), "cuda": cuda, "cuda_source": source,
                      "require_disabled": (env.get("NVIDIA_DISABLE_REQUIRE") or "").lower() in ("1", "true")})
    return found


def _limit(word):
    return -1 if word == "unlimited" else int(word)


def parse_memlock_limit(text):
    """{soft, hard} in bytes (-1 for unlimited) of /proc/<pid>/limits' "Max locked memory" line, or None."""
    for line in (text or "").splitlines():
        if line.startswith("Max locked memory"):
            words = line[len("Max locked memory"):].split()
            return {"soft": _limit(words[0]), "hard": _limit(words[1])}
    return None


def _unescape(field):
    """A mountinfo path with the kernel's octal escapes (\\040 for a space) undone."""
    return re.sub(r"\\([0-7]{3})", lambda match: chr(int(match.group(1), 8)), field)


def parse_mountinfo(text):
    """Each line of /proc/<pid>/mountinfo: {mount_point, device, fstype, source, options} (proc(5))."""
    found = []
    for line in (text or "").splitlines():
        if line.startswith("#") or " - " not in line:
            continue
        before, after = line.split(" - ", 1)
        fields, tail = before.split(), after.split()
        if len(fields) < 5 or len(tail) < 2:
            continue
        found.append({"mount_point": _unescape(fields[4]), "device": fields[2], "fstype": tail[0],
                      "source": _unescape(tail[1]), "options": tail[2] if len(tail) > 2 else ""})
    return found


def mount_of(path, mounts):
    """The mount that holds path (an absolute path with no symbolic link): the last one mounted at the longest
    mount point above it, as the kernel resolves it; None when none does."""
    best = None
    for mount in mounts:
        point = mount["mount_point"].rstrip("/") or "/"
        if path == point or path.startswith(point if point == "/" else point + "/"):
            if best is None or len(point) >= len(best["mount_point"].rstrip("/") or "/"):
                best = mount
    return best


def tmpfs_size(mounts, mount_point="/dev/shm"):
    """The size= of the tmpfs at mount_point in bytes, or None (not a tmpfs, not mounted, or no size given)."""
    mount = next((item for item in reversed(mounts) if item["mount_point"] == mount_point), None)
    if not mount or mount["fstype"] != "tmpfs":
        return None
    for option in mount["options"].split(","):
        if option.startswith("size="):
            return size_bytes(option[len("size="):])
    return None


def size_bytes(text):
    """A tmpfs size option ("65536k", "8g", "1048576") in bytes."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    text = text.strip().lower()
    if text and text[-1] in units:
        return int(text[:-1]) * units[text[-1]]
    return int(text)


def is_network_filesystem(fstype):
    return (fstype or "") in NETWORK_FILESYSTEMS
