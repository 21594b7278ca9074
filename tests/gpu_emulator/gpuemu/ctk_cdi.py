# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CDI spec `nvidia-ctk cdi generate` of NVIDIA Container Toolkit v1.19.1 writes,
built from the emulator's state (GPUs, MIG devices, driver version).

Sources, NVIDIA/nvidia-container-toolkit at tag v1.19.1:
* cmd/nvidia-ctk/cdi/generate/generate.go: the "all" device added last, kind
  nvidia.com/gpu, default strategies index then uuid, yaml unless the output ends .json;
* pkg/nvcdi/lib-nvml.go getDeviceSpecGeneratorsForAllDevices: every GPU whose MIG mode is
  off, in index order, then every MIG device (a GPU with MIG on gets no device of its own);
* pkg/nvcdi/namer.go: names "0" / "gpu0" (type-index) / the GPU UUID, and for a MIG
  device "<gpu>:<mig index>" / "mig0:1" / the MIG UUID;
* pkg/nvcdi/full-gpu-nvml.go, mig-device-nvml.go and internal/platform-support/dgpu/nvml.go:
  a GPU's edits are its /dev/nvidiaN; a MIG device's are its parent's node and the
  /dev/nvidia-caps/nvidia-cap<minor> of its GPU instance and compute instance access
  (minors from /proc/driver/nvidia-caps/mig-minors, nvidia_caps.py);
* pkg/nvcdi/common-nvml.go and driver-nvml.go: the common edits: the control nodes, the
  driver's libraries named with the driver version, the GSP firmware of that version, the
  driver binaries, the hooks (create-symlinks for libcuda.so, enable-cuda-compat with the
  host driver version, update-ldcache, disable-device-node-modification) and the
  NVIDIA_CTK_LIBCUDA_DIR and NVIDIA_VISIBLE_DEVICES=void environment;
* cmd/nvidia-ctk/cdi/generate/generate_test.go: the layout of the written spec (field
  order, `---`, four-space indent, cdiVersion 0.5.0).

* internal/edits/device.go fromPathOrDefault: a device node that is a character device on
  the node (runc's DeviceFromPath) carries its major, minor, permission bits (fileMode, left
  out when 0), the permissions "rwm" and its group when not 0; any other path carries only
  its path, for the runtime to fill in.

Emulator choices: the libraries are a fixed compute driver set (the real tool mounts every
*.so.<version> the ld cache lists), and the node's /dev nodes are taken as the driver makes
them (all four control nodes, one per GPU, the caps of each MIG device), whether present or
not; where `gpuemu install` could make them (CAP_MKNOD) they are character devices and the
spec carries their numbers as the real tool's does.
"""

import os
import stat

from . import mig, visibility

CDI_VERSION = "0.5.0"
KIND = "nvidia.com/gpu"
HOOK_PATH = "/usr/bin/nvidia-cdi-hook"
STRATEGIES = ("index", "uuid", "type-index")
DEFAULT_STRATEGIES = ("index", "uuid")
CONTROL_NODES = ("/dev/nvidia-modeset", "/dev/nvidia-uvm-tools", "/dev/nvidia-uvm", "/dev/nvidiactl")
LIBRARIES = ("libcuda.so", "libcudadebugger.so", "libnvidia-cfg.so", "libnvidia-ml.so", "libnvidia-nvvm.so",
             "libnvidia-opencl.so", "libnvidia-ptxjitcompiler.so")
FIRMWARE = ("gsp_ga10x.bin", "gsp_tu10x.bin")
BINARIES = ("nvidia-smi", "nvidia-persistenced", "nvidia-cuda-mps-control")
MOUNT_OPTIONS = ["ro", "nosuid", "nodev", "rbind", "rprivate"]


def library_dir(state):
    return "/usr/lib/%s-linux-gnu" % state.get("architecture", "x86_64")


def _under(root, path):
    """A host path under the driver or dev root; "" and "/" are the host's own root."""
    return path if root in ("", "/") else root.rstrip("/") + path


def _node_to_read(host):
    """GPUEMU_DEV_ROOT stands for the node's /dev (tests keep the host's own nodes out)."""
    override = os.environ.get(visibility.ENV_VAR)
    if override and host.startswith("/dev/"):
        return os.path.join(override, host[len("/dev/"):])
    return host


def _node(path, dev_root):
    """internal/edits/device.go: hostPath only where it differs from the container path; a
    character device's numbers, mode and group as the node has them."""
    host = _under(dev_root, path)
    node = {"path": path} if host == path else {"path": path, "hostPath": host}
    try:
        found = os.stat(_node_to_read(host))
    except OSError:
        return node
    if not stat.S_ISCHR(found.st_mode):
        return node
    node.update(major=os.major(found.st_rdev), minor=os.minor(found.st_rdev))
    if stat.S_IMODE(found.st_mode):
        node["fileMode"] = stat.S_IMODE(found.st_mode)
    node["permissions"] = "rwm"
    if found.st_gid:
        node["gid"] = found.st_gid
    return node


def _mount(path, driver_root=""):
    return {"hostPath": _under(driver_root, path), "containerPath": path, "options": list(MOUNT_OPTIONS)}


def _hook(*args):
    return {"hookName": "createContainer", "path": HOOK_PATH, "args": ["nvidia-cdi-hook"] + list(args),
            "env": ["NVIDIA_CTK_DEBUG=false"]}


def common_edits(state, driver_root="", dev_root=""):
    version = state["driver_version"]
    libdir = library_dir(state)
    mounts = [_mount("%s/%s.%s" % (libdir, name, version), driver_root) for name in LIBRARIES]
    mounts += [_mount("/lib/firmware/nvidia/%s/%s" % (version, name), driver_root) for name in FIRMWARE]
    mounts += [_mount("/usr/bin/%s" % name, driver_root) for name in BINARIES]
    return {
        "env": ["NVIDIA_CTK_LIBCUDA_DIR=%s" % libdir, "NVIDIA_VISIBLE_DEVICES=void"],
        "deviceNodes": [_node(path, dev_root) for path in CONTROL_NODES],
        "hooks": [
            _hook("create-symlinks", "--link", "libcuda.so.1::%s/libcuda.so" % libdir),
            _hook("enable-cuda-compat", "--host-driver-version=%s" % version),
            _hook("update-ldcache", "--folder", libdir),
            _hook("disable-device-node-modification"),
        ],
        "mounts": mounts,
    }


def _gpu_names(strategy, gpu):
    return {"index": str(gpu["index"]), "type-index": "gpu%d" % gpu["index"], "uuid": gpu["uuid"]}[strategy]


def mig_uuid(state, gpu, instance, ci):
    """The MIG device UUID as NVML gives it (the same spelling as nvidia-smi -L)."""
    if state["settings"].get("mig_uuid_format") == "legacy":
        return "MIG-%s/%d/%d" % (gpu["uuid"], instance["id"], ci["id"])
    return ci["uuid"]


def _mig_name(strategy, state, gpu, number, instance, ci):
    return {"index": "%d:%d" % (gpu["index"], number), "type-index": "mig%d:%d" % (gpu["index"], number),
            "uuid": mig_uuid(state, gpu, instance, ci)}[strategy]


def devices(state, strategies=DEFAULT_STRATEGIES, all_device=True, dev_root=""):
    """The spec's devices, in the order the real tool lists them."""
    found = []
    for gpu in state["gpus"]:
        if mig.enabled(gpu):
            continue
        edits = {"deviceNodes": [_node("/dev/nvidia%d" % gpu["minor_number"], dev_root)]}
        found += [{"name": _gpu_names(strategy, gpu), "containerEdits": edits} for strategy in strategies]
    for gpu in state["gpus"]:
        if not mig.enabled(gpu):
            continue
        for number, (instance, ci) in enumerate(mig.mig_devices(gpu)):
            gi_cap, ci_cap = visibility.cap_minors(gpu, instance, ci)
            edits = {"deviceNodes": [_node("/dev/nvidia%d" % gpu["minor_number"], dev_root),
                                     _node("/dev/nvidia-caps/nvidia-cap%d" % gi_cap, dev_root),
                                     _node("/dev/nvidia-caps/nvidia-cap%d" % ci_cap, dev_root)]}
            found += [{"name": _mig_name(strategy, state, gpu, number, instance, ci), "containerEdits": edits}
                      for strategy in strategies]
    if all_device and found:
        # transform/merged-device.go: every device's edits, duplicates dropped.
        nodes = []
        for device in found:
            nodes += [node for node in device["containerEdits"]["deviceNodes"] if node not in nodes]
        found.append({"name": "all", "containerEdits": {"deviceNodes": nodes}})
    return found


def spec(state, strategies=DEFAULT_STRATEGIES, all_device=True, vendor="nvidia.com", device_class="gpu",
         driver_root="", dev_root=""):
    """The whole spec. dev_root (default: driver_root) prefixes the device nodes' host paths,
    driver_root the mounts' (cmd/nvidia-ctk/cdi/generate/generate_test.go)."""
    dev_root = dev_root or driver_root
    return {"cdiVersion": CDI_VERSION, "kind": "%s/%s" % (vendor, device_class),
            "devices": devices(state, strategies, all_device, dev_root),
            "containerEdits": common_edits(state, driver_root, dev_root)}


def normalize_path(path, spec_format):
    """spec.go normalizePath: a name without .yaml or .json gets the format's extension
    (so .yml becomes .yml.yaml); a bare file name is taken in the working folder."""
    if os.path.splitext(path)[1] not in (".yaml", ".json"):
        path += "." + spec_format
    if os.path.dirname(path) in ("", "."):
        path = os.path.join(os.getcwd(), os.path.basename(path))
    return path


def format_from_filename(path):
    extension = os.path.splitext(path)[1].lower()
    return {".json": "json", ".yaml": "yaml", ".yml": "yaml"}.get(extension, "")
