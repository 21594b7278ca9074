# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's containers area: how GPU containers get their data, judged from the container_runtimes fact
(module_utils/engines/container_facts.py reads it; docs/audit.md lists the checks).

- the runtime's data root: a network filesystem FAILs (every layer is read over the wire), a rotational disk WARNs,
  overlay2 without d_type FAILs (Docker's overlay2 documentation: the backing filesystem must support d_type; xfs
  needs ftype=1), free space under audit_container_free_space_gib WARNs;
- each running container that holds a GPU: a writable layer of audit_container_writable_layer_mib or more WARNs
  (data written into the image's layer, not a bind mount), /dev/shm of 64 MiB (Docker's default) or less WARNs, a
  memlock limit below unlimited FAILs (pinned host memory and GPUDirect RDMA register memory), a network other
  than the host's WARNs on a node with RDMA devices (collectives through NAT, not the RDMA NICs);
- each local image: the CUDA it needs (NVIDIA_REQUIRE_CUDA, else CUDA_VERSION) against the driver through the
  driver preflight's floor table (driver_compat): an image that cannot initialise CUDA here FAILs; its size is
  reported, and the images that declare no CUDA are one check with their count, size and the largest.
Each reason names the container or image and the fix.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.plugin_utils import driver_compat
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_checks import FAIL, PASS, SKIP, WARN, check

AREA = "containers"
DEFAULT_SHM_BYTES = 64 << 20
MIB, GIB = 1 << 20, 1 << 30
# The images without CUDA are one check, naming this many of the largest.
LARGEST_SHOWN = 5
DATA_ROOT_OPTION = {"docker": "data-root in /etc/docker/daemon.json",
                    "podman": "graphroot in /etc/containers/storage.conf"}
SHM_FIX = "run it with --shm-size (such as 16g) or --ipc=host; in Kubernetes, mount an emptyDir of medium Memory at /dev/shm"
MEMLOCK_FIX = ("run it with --ulimit memlock=-1:-1, or give the engine unlimited default-ulimits (the memlock role's "
               "memlock_docker_daemon_json)")
NETWORK_FIX = "run it with --network host (Kubernetes: hostNetwork: true), or give it the RDMA devices through an RDMA CNI"
WRITABLE_FIX = "write data to a bind mount or volume (-v /data:/data), not into the image's layer"


def size_text(size):
    """Bytes as people read them: 1.5 GiB, 64 MiB, 512 KiB."""
    if size is None:
        return "unknown"
    for unit, scale in (("TiB", 1 << 40), ("GiB", GIB), ("MiB", MIB), ("KiB", 1 << 10)):
        if abs(size) >= scale:
            return ("%.1f %s" % (float(size) / scale, unit)).replace(".0 ", " ")
    return "%d B" % size


def _check(check_id, title, verdict, expected, actual, reason):
    return check("containers." + check_id, AREA, title, verdict, expected, actual, reason)


def _filesystem(name, filesystem):
    check_id, title, expected = "%s.data_root" % name, "%s data root's filesystem" % name, "local, not rotational"
    where = filesystem.get("path")
    if filesystem.get("problem"):
        return _check(check_id, title, SKIP, expected, "unknown", filesystem["problem"])
    actual = "%s on %s (%s)" % (filesystem.get("fstype"), filesystem.get("mount_point"), filesystem.get("source"))
    move = "move it to a local SSD or NVMe filesystem (%s)" % DATA_ROOT_OPTION.get(name, "the runtime's data root")
    if filesystem.get("network"):
        return _check(check_id, title, FAIL, expected, actual, "%s's data root %s is on the network filesystem %s: "
                      "every image layer and writable layer is read over the network; %s" % (name, where, actual, move))
    if filesystem.get("rotational"):
        return _check(check_id, title, WARN, expected, "%s, rotational %s" % (actual, filesystem.get("device")),
                      "%s's data root %s is on a rotational disk (%s): %s" % (name, where, filesystem.get("device"), move))
    if filesystem.get("rotational") is None:
        return _check(check_id, title, PASS, expected, actual, "local filesystem; whether its disk is rotational is "
                      "unknown (sysfs shows no block device for it)")
    return _check(check_id, title, PASS, expected, "%s, %s not rotational" % (actual, filesystem.get("device")),
                  "local filesystem on a non-rotational disk")


def _d_type(name, storage):
    check_id, title, expected = "%s.d_type" % name, "%s overlay2 d_type" % name, "d_type supported"
    driver = storage.get("driver")
    if driver != "overlay2" and driver != "overlay":
        return _check(check_id, title, SKIP, expected, "driver %s" % driver, "d_type matters for overlay2; %s uses %s"
                      % (name, driver))
    actual = "driver %s on %s, d_type %s" % (driver, storage.get("backing_fs"),
                                             {True: "true", False: "false", None: "not reported"}[storage.get("d_type")])
    if storage.get("d_type") is False:
        return _check(check_id, title, FAIL, expected, actual, "%s's overlay2 runs on a backing filesystem without "
                      "d_type, which overlay does not support: recreate it with d_type (xfs: mkfs.xfs -n ftype=1; ext4 "
                      "has it)" % name)
    if storage.get("d_type") is None:
        return _check(check_id, title, SKIP, expected, actual, "%s does not report d_type" % name)
    return _check(check_id, title, PASS, expected, actual, "the backing filesystem supports d_type")


def _free_space(name, filesystem, limits):
    check_id, title = "%s.free_space" % name, "%s data root's free space" % name
    threshold = limits["audit_container_free_space_gib"]
    expected = "%d GiB or more free" % threshold
    if filesystem.get("problem") or filesystem.get("free_bytes") is None:
        return _check(check_id, title, SKIP, expected, "unknown", filesystem.get("problem") or "not read")
    free, total = filesystem["free_bytes"], filesystem.get("total_bytes")
    actual = "%s free of %s" % (size_text(free), size_text(total))
    if free < threshold * GIB:
        return _check(check_id, title, WARN, expected, actual, "%s's data root %s has %s free, under "
                      "audit_container_free_space_gib (%d): remove unused images and containers (%s system prune) "
                      "or grow the filesystem" % (name, filesystem.get("path"), size_text(free), threshold, name))
    return _check(check_id, title, PASS, expected, actual, "enough room to pull and unpack images")


def _writable(prefix, container, limits):
    threshold = limits["audit_container_writable_layer_mib"]
    expected = "under %d MiB" % threshold
    size = container.get("writable_bytes")
    title = "%s writable layer" % container["name"]
    if size is None:
        return _check(prefix + ".writable_layer", title, SKIP, expected, "unknown",
                      container.get("writable_unknown") or "the runtime reported no size")
    if size >= threshold * MIB:
        return _check(prefix + ".writable_layer", title, WARN, expected, size_text(size), "container %s has written "
                      "%s into its writable layer (audit_container_writable_layer_mib: %d): %s"
                      % (container["name"], size_text(size), threshold, WRITABLE_FIX))
    return _check(prefix + ".writable_layer", title, PASS, expected, size_text(size), "little is written into the "
                  "image's layer")


def _shm(prefix, container):
    expected = "more than %s" % size_text(DEFAULT_SHM_BYTES)
    title = "%s /dev/shm" % container["name"]
    size = container.get("shm_in_process")
    if size is None and container.get("ipc_mode") == "host":
        return _check(prefix + ".shm", title, PASS, expected, "the host's /dev/shm", "IPC mode host: the host's /dev/shm")
    if size is None:
        size = container.get("shm_size")
    if size is None:
        return _check(prefix + ".shm", title, SKIP, expected, "unknown", "neither /proc nor the runtime shows its size")
    if size <= DEFAULT_SHM_BYTES:
        return _check(prefix + ".shm", title, WARN, expected, size_text(size), "container %s has a /dev/shm of %s, "
                      "too small for a DataLoader's workers or NCCL's shared memory: %s"
                      % (container["name"], size_text(size), SHM_FIX))
    return _check(prefix + ".shm", title, PASS, expected, size_text(size), "/dev/shm larger than the default")


def _limit_text(limit):
    return "soft %s, hard %s" % tuple("unlimited" if value in (-1, None) else size_text(value)
                                      for value in (limit.get("soft"), limit.get("hard")))


def _memlock(prefix, container):
    title = "%s memlock" % container["name"]
    limit, source = container.get("memlock_in_process"), "its process"
    if limit is None:
        limit, source = container.get("memlock"), "its --ulimit"
    if limit is None:
        return _check(prefix + ".memlock", title, SKIP, "unlimited", "unknown", "no ulimit set and its process's "
                      "limits are not readable: it has the engine's default")
    if limit.get("soft") != -1 or limit.get("hard") != -1:
        return _check(prefix + ".memlock", title, FAIL, "unlimited", _limit_text(limit), "container %s may lock only "
                      "%s (%s): pinned memory and RDMA registration fail or fall back to pageable copies; %s"
                      % (container["name"], _limit_text(limit), source, MEMLOCK_FIX))
    return _check(prefix + ".memlock", title, PASS, "unlimited", _limit_text(limit), "unlimited locked memory")


def _network(prefix, container, rdma_devices):
    title = "%s network" % container["name"]
    mode = container.get("network_mode") or "unknown"
    if mode == "host":
        return _check(prefix + ".network", title, PASS, "host", mode, "the host's network and RDMA devices")
    if not rdma_devices:
        return _check(prefix + ".network", title, PASS, "host where RDMA NICs exist", mode, "no RDMA device on this "
                      "node: its collectives do not leave it through RDMA")
    return _check(prefix + ".network", title, WARN, "host", mode, "container %s uses the %s network on a node with "
                  "RDMA devices (%s): multi-node collectives go through NAT instead of the RDMA NICs; %s"
                  % (container["name"], mode, ", ".join(rdma_devices), NETWORK_FIX))


def _image_name(image):
    return (image.get("tags") or [image["id"]])[0]


def _images(name, images):
    """One check for the images that declare no CUDA: how many, their size, the largest (slim images start short
    jobs sooner)."""
    if not images:
        return []
    largest = sorted(images, key=lambda image: -(image.get("size") or 0))[:LARGEST_SHOWN]
    total = sum(image.get("size") or 0 for image in images)
    shown = ", ".join("%s (%s)" % (_image_name(image), size_text(image.get("size"))) for image in largest)
    return [_check("%s.images" % name, "%s images without CUDA" % name, PASS, "reported",
                   "%d image(s), %s" % (len(images), size_text(total)),
                   "%d local image(s) declare no CUDA version; the largest: %s" % (len(images), shown))]


def _image(name, image, driver):
    label = _image_name(image)
    check_id, title = "%s.image.%s" % (name, label), "image %s" % label
    size = size_text(image.get("size"))
    actual = "needs CUDA %s (%s), %s" % (image["cuda"], image["cuda_source"], size)
    if not driver.get("driver_version"):
        return _check(check_id, title, SKIP, "a driver that runs CUDA %s" % image["cuda"], actual,
                      "no NVIDIA driver was read on this node")
    verdict, expected, why = driver_compat.cuda_judgement(image["cuda"], driver["driver_version"],
                                                          driver.get("cuda_version"))
    if verdict == FAIL:
        why = "image %s cannot initialise CUDA on this node: %s; upgrade the driver or use an image built for an " \
              "older CUDA" % (label, why)
    elif verdict == WARN and not image.get("require_disabled"):
        why = "image %s: %s; the NVIDIA Container Toolkit refuses to start it unless a brand or driver term of its " \
              "NVIDIA_REQUIRE_CUDA matches this node" % (label, why)
    else:
        why = "image %s: %s; its size is %s" % (label, why, size)
    return _check(check_id, title, verdict, expected, actual, why)


def runtime_checks(runtime, limits, rdma_devices, driver):
    """Every check of one runtime's entry."""
    name = runtime["name"]
    found = []
    if runtime.get("problem"):
        verdict = WARN if runtime.get("storage") else SKIP
        found.append(_check("%s.read" % name, "%s read" % name, verdict, "answers", "failed",
                            "%s at %s did not answer the audit: %s" % (name, runtime.get("path"), runtime["problem"])))
    if runtime.get("storage"):
        filesystem = runtime.get("filesystem") or {"path": runtime["storage"].get("root"), "problem": "not read"}
        found.extend([_filesystem(name, filesystem), _d_type(name, runtime["storage"]),
                      _free_space(name, filesystem, limits)])
    gpu_containers = [item for item in runtime.get("containers") or [] if item.get("gpu")]
    # crictl reads no storage: its runtime answered when it read the containers.
    answered = runtime.get("storage") or (name == "crictl" and not runtime.get("problem"))
    if answered and not gpu_containers:
        found.append(_check("%s.gpu_containers" % name, "%s GPU containers" % name, SKIP, "checked when running",
                            "none", "no running %s container holds a GPU" % name))
    for container in gpu_containers:
        prefix = "%s.%s" % (name, container["name"])
        found.extend([_writable(prefix, container, limits), _shm(prefix, container), _memlock(prefix, container),
                      _network(prefix, container, rdma_devices)])
    images = runtime.get("images") or []
    found.extend(_image(name, image, driver) for image in images if image.get("cuda"))
    found.extend(_images(name, [image for image in images if not image.get("cuda")]))
    return found


def container_checks(fact, limits, rdma_devices, driver, why_missing=None):
    """The containers area: fact is the container_runtimes fact of this run's node call (None when the feature did
    not run); limits the audit's inputs; rdma_devices the node's RDMA device names; driver {driver_version,
    cuda_version}."""
    if fact is None:
        return [_check("runtime", "container runtimes", FAIL if why_missing else SKIP, "read", "unknown",
                       why_missing or "not collected: the audit's containers feature did not run")]
    if not fact.get("runtimes"):
        return [_check("runtime", "container runtimes", SKIP, "a runtime", "none", "no container runtime on this node "
                       "(looked for %s on PATH): nothing to check" % ", ".join(fact.get("looked_for") or []))]
    found = []
    for runtime in fact["runtimes"]:
        found.extend(runtime_checks(runtime, limits, rdma_devices, driver))
    return found
