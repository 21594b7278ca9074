# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_facts engine: what the containers audit judges, read from each container runtime on the node.

Read only, node call only (the audit's plan): for each runtime CLI found (docker, podman), its storage (data root,
driver, d_type), the data root's filesystem (mountinfo, sysfs rotational, free space), its running containers
(inspect with the writable layer's size, each process's memlock limit and /dev/shm) and its local images; through
crictl, a CRI runtime's running containers alone. A node with no runtime CLI pays only the PATH lookups. Parsing is
in module_utils/container_reads.py and cri_reads.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpuops.hardening.plugins.module_utils import container_reads, cri_reads
from ansible_collections.gpuops.hardening.plugins.module_utils.commands import CommandTimeout, run
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import (
    host_argument_spec,
    read_text,
    under_root,
)

# The CLIs looked for, and how each says its storage: podman's info is its own (podman-info(1), libpod's
# define/info.go: store.graphRoot, graphDriverName, graphStatus); its inspect output is Docker's shape.
# crictl reads a CRI runtime's (containerd's, CRI-O's) running containers; their images and storage are the
# runtime's own and are not read through it.
RUNTIMES = ("docker", "podman", "crictl")
INFO_COMMANDS = {"docker": ["info", "--format", "{{json .}}"], "podman": ["info", "--format", "json"]}


class RuntimeUnanswered(Exception):
    """A runtime command failed, hung or printed no JSON; the runtime is reported with the reason."""


def _output(feature, argv):
    try:
        rc, out, err = run(feature, argv, timeout=feature.params["timeout"])
    except CommandTimeout as error:
        raise RuntimeUnanswered(str(error))
    if rc != 0:
        lines = (err or out or "").strip().splitlines()
        raise RuntimeUnanswered("%s failed with exit code %s: %s" % (" ".join(argv[:3]), rc,
                                                                     lines[-1] if lines else "no output"))
    return out


def _parsed(parse, text, argv):
    try:
        return parse(text)
    except (ValueError, TypeError, AttributeError) as error:
        raise RuntimeUnanswered("%s printed no usable JSON: %s" % (" ".join(argv[:3]), error))


def parse_podman_info(text):
    """The storage of `podman info --format json`, in parse_docker_info's shape."""
    info = container_reads.json_document(text)
    store = info.get("store") or {}
    status = sorted((store.get("graphStatus") or {}).items())
    return {"version": (info.get("version") or {}).get("Version"), "root": store.get("graphRoot"),
            "driver": store.get("graphDriverName"), "backing_fs": dict(status).get("Backing Filesystem"),
            "d_type": container_reads._d_type(status), "runtimes": [], "default_runtime": None}


def _block_device(sys_root, device):
    """(name, rotational) of a MAJ:MIN block device (its disk's queue for a partition); (None, None) without one."""
    link = os.path.join(sys_root, "dev", "block", device)
    if not os.path.exists(link):
        return None, None
    path = os.path.realpath(link)
    if os.path.exists(os.path.join(path, "partition")):
        path = os.path.dirname(path)
    rotational = read_text(os.path.join(path, "queue", "rotational"), strip=True)
    return os.path.basename(path), {"1": True, "0": False}.get(rotational)


def read_filesystem(root, data_root):
    """The data root's filesystem: {path, mount_point, fstype, source, network, device, rotational, free_bytes,
    total_bytes}; a path that does not exist gives only {path, problem}."""
    path = os.path.realpath(under_root(root, data_root))
    if not os.path.isdir(path):
        return {"path": data_root, "problem": "%s does not exist" % data_root}
    # mountinfo names the node's own paths: the data root as the node sees it, below root.
    on_node = "/" + os.path.relpath(path, os.path.realpath(root or "/")).lstrip("./")
    mounts = container_reads.parse_mountinfo(read_text(under_root(root, "/proc/self/mountinfo")) or "")
    mount = container_reads.mount_of(on_node, mounts) or {}
    device, rotational = _block_device(under_root(root, "/sys"), mount.get("device") or "")
    stats = os.statvfs(path)
    return {"path": data_root, "problem": None, "mount_point": mount.get("mount_point"), "fstype": mount.get("fstype"),
            "source": mount.get("source"), "network": container_reads.is_network_filesystem(mount.get("fstype")),
            "device": device, "rotational": rotational, "free_bytes": stats.f_bavail * stats.f_frsize,
            "total_bytes": stats.f_blocks * stats.f_frsize}


def _in_process(root, container):
    """The container's memlock limit and /dev/shm size as its main process has them, where /proc shows it."""
    if not container["pid"]:
        return container
    proc = under_root(root, "/proc/%d" % container["pid"])
    limits = container_reads.parse_memlock_limit(read_text(os.path.join(proc, "limits")))
    shm = container_reads.tmpfs_size(container_reads.parse_mountinfo(read_text(os.path.join(proc, "mountinfo"))))
    return dict(container, memlock_in_process=limits, shm_in_process=shm)


def _ids(text):
    seen = []
    for word in (text or "").split():
        if word not in seen:
            seen.append(word)
    return seen


def read_cri(feature, entry):
    """The running containers of the CRI runtime crictl talks to (module_utils/cri_reads.py has the sources); each
    writable layer from `crictl stats`, where that answers."""
    path = entry["path"]
    argv = [path, "ps", "-o", "json"]
    running = _parsed(cri_reads.parse_ps, _output(feature, argv), argv)
    if not running:
        return
    argv = [path, "stats", "-o", "json"]
    try:
        writable = _parsed(cri_reads.parse_stats, _output(feature, argv), argv)
    except RuntimeUnanswered as problem:
        writable, entry["writable_problem"] = {}, str(problem)
    argv = [path, "inspect", "-o", "json"] + running
    containers = _parsed(lambda text: cri_reads.parse_inspect(text, writable), _output(feature, argv), argv)
    for item in containers:
        if item["writable_bytes"] is None:
            item["writable_unknown"] = entry.get("writable_problem") or "crictl stats reported no writable layer for it"
    entry["containers"] = [_in_process(feature.params["root"], item) for item in containers]


def read_runtime(feature, name, path):
    """One runtime's entry of the container_runtimes fact."""
    root = feature.params["root"]
    entry = {"name": name, "path": path, "problem": None, "storage": None, "filesystem": None, "containers": [],
             "images": []}
    if name == "crictl":
        try:
            read_cri(feature, entry)
        except RuntimeUnanswered as problem:
            entry["problem"] = str(problem)
        return entry
    try:
        argv = [path] + INFO_COMMANDS[name]
        parse = container_reads.parse_docker_info if name == "docker" else parse_podman_info
        entry["storage"] = _parsed(parse, _output(feature, argv), argv)
        if entry["storage"]["root"]:
            entry["filesystem"] = read_filesystem(root, entry["storage"]["root"])
        running = _ids(_output(feature, [path, "ps", "--quiet", "--no-trunc"]))
        if running:
            argv = [path, "container", "inspect", "--size"] + running
            entry["containers"] = [_in_process(root, item) for item in _parsed(
                container_reads.parse_containers, _output(feature, argv), argv)]
        images = _ids(_output(feature, [path, "image", "ls", "--quiet", "--no-trunc"]))
        if images:
            argv = [path, "image", "inspect"] + images
            entry["images"] = _parsed(container_reads.parse_images, _output(feature, argv), argv)
    except RuntimeUnanswered as problem:
        entry["problem"] = str(problem)
    return entry


NAME = "container_facts"
ARGUMENT_SPEC = host_argument_spec()
# Each runtime command answers in seconds; a daemon that takes half a minute is not answering.
ARGUMENT_SPEC["timeout"] = dict(type="int", default=30)
SPEC_RULES = {}


def converge(spec, host, check_mode):
    """Read every runtime the node has; changes nothing, in check mode or not."""
    feature = host.feature(NAME, spec, check_mode)
    runtimes = []
    for name in RUNTIMES:
        path = feature.get_bin_path(name)
        if path:
            runtimes.append(read_runtime(feature, name, path))
    return {"changed": False,
            "ansible_facts": {"container_runtimes": {"looked_for": list(RUNTIMES), "runtimes": runtimes}}}
