# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""/proc/driver/nvidia-caps/mig-minors as the NVIDIA kernel driver prints it.

Sources: NVIDIA Multi-Instance GPU User Guide, "Device Nodes and Capabilities" (the
file, its ``<name> <minor>`` lines and the /dev/nvidia-caps/nvidia-cap<minor> nodes),
and the driver's own table in NVIDIA/open-gpu-kernel-modules, kernel-open/nvidia/nv-caps.c.
The table is fixed when the driver loads, whatever the GPUs and their MIG instances: minors
count up from 0 in one order (nvlink's fabric-mgmt 0, mig config 1 and monitor 2, then
for each of 32 GPU slots, 15 GPU instances, each with its access and 8 compute instances).
So every possible instance has its line, existing or not, and "gpuN" is a GPU minor number.
"""

GPU_SLOTS = 32
GPU_INSTANCES = 15
COMPUTE_INSTANCES = 8
PATH = "proc/driver/nvidia-caps/mig-minors"
CONFIG_MINOR = 1
MONITOR_MINOR = 2


def mig_minor_lines():
    """The (name, minor) pairs of the file, in the driver's order."""
    pairs = [("config", CONFIG_MINOR), ("monitor", MONITOR_MINOR)]
    minor = 3
    for gpu in range(GPU_SLOTS):
        for gpu_instance in range(GPU_INSTANCES):
            pairs.append(("gpu%d/gi%d/access" % (gpu, gpu_instance), minor))
            minor += 1
            for compute_instance in range(COMPUTE_INSTANCES):
                pairs.append(("gpu%d/gi%d/ci%d/access" % (gpu, gpu_instance, compute_instance), minor))
                minor += 1
    return pairs


def mig_minors_text():
    return "".join("%s %d\n" % pair for pair in mig_minor_lines())
