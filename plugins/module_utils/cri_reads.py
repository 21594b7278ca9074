# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure parsers of what crictl prints about a CRI runtime's running containers, in container_reads' container shape.

The shapes follow the sources, not a capture (no Debian release packages cri-tools):
- `crictl ps -o json` and `crictl stats -o json`: the CRI API's ListContainersResponse and ListContainerStatsResponse
  through protojson (kubernetes-sigs/cri-tools v1.36, cmd/crictl/util.go outputProtobufObjAsJSON; k8s.io/cri-api
  v0.36 api.proto): lowerCamelCase names, 64-bit integers as strings (writableLayer.usedBytes.value);
- `crictl inspect -o json <id>...`: per container {"status": ContainerStatus, "info": the runtime's verbose info},
  one object for one id and a list for more (cri-tools cmd/crictl/util.go outputStatusData). containerd's info
  (v2.x, internal/cri/server/container_status.go, ContainerInfo) holds pid, runtimeType, runtimeOptions, the CRI
  ContainerConfig (encoding/json: envs, devices with host_path, CDI_devices, linux.security_context.namespace_options)
  and runtimeSpec, the OCI runtime spec (opencontainers/runtime-spec config.md: process.rlimits, mounts,
  linux.devices, linux.namespaces).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.hardening.plugins.module_utils.container_reads import (
    NO_GPU_VALUES, NVIDIA_DEVICE, env_map, json_document, size_bytes)

# An rlimit of RLIM_INFINITY (2^64-1 in the OCI spec's uint64) and anything at or above 2^63 is unlimited.
_UNLIMITED_FROM = 1 << 63


def parse_ps(text):
    """The container ids of `crictl ps -o json` (running containers, crictl's default filter), in order."""
    return [item.get("id") for item in (json_document(text) or {}).get("containers") or [] if item.get("id")]


def parse_stats(text):
    """{container id: writable layer bytes} of `crictl stats -o json` (ContainerStats.writableLayer.usedBytes)."""
    found = {}
    for item in (json_document(text) or {}).get("stats") or []:
        used = ((item.get("writableLayer") or {}).get("usedBytes") or {}).get("value")
        identifier = (item.get("attributes") or {}).get("id")
        if identifier and used is not None:
            found[identifier] = int(used)
    return found


def _limit(value):
    value = int(value)
    return -1 if value >= _UNLIMITED_FROM else value


def _memlock(spec):
    for rlimit in (spec.get("process") or {}).get("rlimits") or []:
        if rlimit.get("type") == "RLIMIT_MEMLOCK":
            return {"soft": _limit(rlimit.get("soft", 0)), "hard": _limit(rlimit.get("hard", 0))}
    return None


def _shm_size(spec):
    """The size= of a tmpfs /dev/shm in the spec, or None (containerd and CRI-O bind the pod's shm: no size there)."""
    for mount in spec.get("mounts") or []:
        if mount.get("destination") == "/dev/shm" and mount.get("type") == "tmpfs":
            for option in mount.get("options") or []:
                if re.match(r"^size=\d+[kmg]?$", option.lower()):
                    return size_bytes(option[len("size="):])
    return None


def _namespaces(spec):
    return [namespace.get("type") for namespace in (spec.get("linux") or {}).get("namespaces") or []]


def _gpu_holder(spec, config, runtime):
    """How the container holds a GPU, in the words of container_reads' Docker reading, or None."""
    cdi = [device.get("name") for device in config.get("CDI_devices") or []
           if (device.get("name") or "").startswith("nvidia.com/")]
    if cdi:
        return "CDI device: %s" % ",".join(cdi)
    paths = [device.get("path") for device in (spec.get("linux") or {}).get("devices") or []]
    paths.extend(device.get("host_path") for device in config.get("devices") or [])
    nvidia = [path for path in paths if NVIDIA_DEVICE.match(path or "")]
    if nvidia:
        return "device: %s" % ",".join(sorted(set(nvidia)))
    env = env_map((spec.get("process") or {}).get("env"))
    visible = env.get("NVIDIA_VISIBLE_DEVICES")
    if visible is not None and visible.strip().lower() not in NO_GPU_VALUES and "nvidia" in runtime:
        return "NVIDIA_VISIBLE_DEVICES=%s under the %s runtime" % (visible, runtime)
    return None


def _container(item, writable):
    status, info = item.get("status") or {}, item.get("info") or {}
    spec, config = info.get("runtimeSpec") or {}, info.get("config") or {}
    # containerd names the NVIDIA runtime in its options' binary_name (runc options), the handler in runtimeType.
    runtime = " ".join(str(word) for word in (info.get("runtimeType"), (info.get("runtimeOptions") or {}).get(
        "binary_name")) if word)
    namespaces = _namespaces(spec)
    identifier = status.get("id") or ""
    return {
        "id": identifier[:12],
        "name": (status.get("metadata") or {}).get("name") or identifier[:12],
        "image": (status.get("image") or {}).get("image"),
        "running": status.get("state") == "CONTAINER_RUNNING",
        "pid": info.get("pid") or None,
        "gpu": _gpu_holder(spec, config, runtime),
        "shm_size": _shm_size(spec),
        # No IPC or network namespace of its own in the OCI spec: the host's (hostIPC, hostNetwork).
        "ipc_mode": "host" if spec and "ipc" not in namespaces else "pod",
        "memlock": _memlock(spec),
        "network_mode": "host" if spec and "network" not in namespaces else "pod",
        "writable_bytes": writable.get(identifier),
    }


def parse_inspect(text, writable=None):
    """Each container of `crictl inspect -o json <id>...`, in container_reads.parse_containers' shape; writable:
    parse_stats' sizes, by full id."""
    document = json_document(text)
    items = document if isinstance(document, list) else [document]
    return [_container(item, writable or {}) for item in items if item]
