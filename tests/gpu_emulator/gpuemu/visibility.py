# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What nvidia-smi sees where only some of the driver's device nodes are present, as in a
container: the GPUs whose /dev/nvidia<minor> is there, and of a MIG-enabled GPU the MIG
devices whose two capability nodes (GPU instance access, compute instance access) are there.

Sources: NVIDIA Multi-Instance GPU User Guide, "Device Nodes and Capabilities" (access to a
MIG device is granted by its /dev/nvidia-caps/nvidia-cap<minor> nodes, whose minors
/proc/driver/nvidia-caps/mig-minors lists, and a container holds only the nodes it is given);
the NVIDIA Container Toolkit's CDI specs (pkg/nvcdi at v1.19.1: a GPU's device is its
/dev/nvidia<minor>, a MIG device's its parent's node and those two capability nodes). NVML
numbers the devices it can reach from 0, so a container given only /dev/nvidia3 lists it as
GPU 0, under its own UUID and bus id; a real capture of nvidia-smi in a container given one
1g.10gb MIG device of GPU instance 8 shows it as MIG device 0.

The rule applies only to a state whose driver made its nodes (`gpuemu install` records the
folder in settings.dev_dir), and only while that folder holds the control node
(<dev>/nvidiactl): a state written by a test, and a node with every node, see every GPU and
MIG device, as before. GPUEMU_DEV_ROOT names another /dev (a container's, in tests).
"""

import copy
import os

from . import mig, nvidia_caps

ENV_VAR = "GPUEMU_DEV_ROOT"
CAP_NODE = "nvidia-caps/nvidia-cap%d"
CAP_NODE_PATH = "dev/" + CAP_NODE


def dev_root(state, environ=None):
    """The /dev the emulated tools look at: GPUEMU_DEV_ROOT, else the one install made the
    state's nodes in; None where neither is known."""
    return (os.environ if environ is None else environ).get(ENV_VAR) or state["settings"].get("dev_dir")


def driver_loaded(dev):
    """The emulated driver's control node is in dev."""
    return bool(dev) and os.path.exists(os.path.join(dev, "nvidiactl"))


def cap_minors(gpu, instance, ci):
    """The mig-minors of a MIG device's GPU instance access and compute instance access."""
    minors = _minors()
    return (minors["gpu%d/gi%d/access" % (gpu["minor_number"], instance["id"])],
            minors["gpu%d/gi%d/ci%d/access" % (gpu["minor_number"], instance["id"], ci["id"])])


_MINORS = {}


def _minors():
    if not _MINORS:
        _MINORS.update(nvidia_caps.mig_minor_lines())
    return _MINORS


def _present(dev, name):
    return os.path.exists(os.path.join(dev, name))


def _mig_visible(dev, gpu, instance, ci):
    return all(_present(dev, CAP_NODE % minor) for minor in cap_minors(gpu, instance, ci))


def _visible_instances(dev, gpu):
    """The GPU's instances, each with only its reachable compute instances; None when all are."""
    kept, hidden = [], False
    for instance in gpu["gpu_instances"]:
        cis = [ci for ci in instance["compute_instances"] if _mig_visible(dev, gpu, instance, ci)]
        hidden = hidden or len(cis) != len(instance["compute_instances"])
        if cis:
            kept.append(dict(instance, compute_instances=cis))
    return kept if hidden else None


def _renumbered_faults(faults, new_index):
    """Per-GPU faults (dicts keyed by the index as text, and the gpu_busy list) under the new indexes."""
    remapped = {}
    for key, value in faults.items():
        if isinstance(value, dict) and value and all(str(name).isdigit() for name in value):
            value = dict((str(new_index[int(name)]), item) for name, item in value.items() if int(name) in new_index)
        elif key == "gpu_busy":
            value = [new_index[index] for index in value if index in new_index]
        remapped[key] = value
    return remapped


def _renumber(view, new_index):
    """The processes, the persistence daemon's GPUs and the faults under the new indexes."""
    view["processes"] = [dict(process, gpu=new_index[process["gpu"]]) for process in view["processes"]
                         if process["gpu"] in new_index]
    daemon = view["daemons"].get("persistenced")
    if daemon and daemon.get("gpus") is not None:
        daemon["gpus"] = [daemon["gpus"][old] for old in sorted(new_index, key=new_index.get)]
    view["faults"] = _renumbered_faults(view["faults"], new_index)


def visible_state(state, dev=None):
    """state as a process with only dev's nodes sees it: the same object when it sees everything."""
    dev = dev or dev_root(state)
    if not driver_loaded(dev):
        return state
    gpus = [gpu for gpu in state["gpus"] if _present(dev, "nvidia%d" % gpu["minor_number"])]
    instances = dict((gpu["uuid"], _visible_instances(dev, gpu)) for gpu in gpus if mig.enabled(gpu))
    if len(gpus) == len(state["gpus"]) and all(value is None for value in instances.values()):
        return state
    view = copy.deepcopy(state)
    new_index = dict((gpu["index"], number) for number, gpu in enumerate(gpus))
    view["gpus"] = []
    for gpu in gpus:
        seen = copy.deepcopy(gpu)
        seen["index"] = new_index[gpu["index"]]
        if instances.get(gpu["uuid"]) is not None:
            seen["gpu_instances"] = copy.deepcopy(instances[gpu["uuid"]])
        view["gpus"].append(seen)
    _renumber(view, new_index)
    return view
