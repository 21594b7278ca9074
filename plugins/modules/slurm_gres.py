#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: slurm_gres
short_description: Describe a node's GPUs to Slurm in gres.conf, with the cores local to each, and constrain jobs in cgroup.conf
version_added: "1.1.0"
description:
  - Writes one C(Name=gpu) line per GPU into C(gres.conf), with C(Type=) (a short model name), C(File=/dev/nvidiaN)
    (the GPU's minor number) and C(Cores=) (the Slurm core indexes of the GPU's NUMA-local CPUs), or one
    C(AutoDetect=nvml) line when O(autodetect=nvml).
  - A GPU with MIG enabled gets one line per MIG device instead, as gres.conf(5) of Slurm 22.05 describes them,
    C(Type=<type>_<GPU instance profile>) (C(a100_3g.20gb)), C(MultipleFiles=) with the parent GPU's
    C(/dev/nvidiaN) and the C(/dev/nvidia-caps) nodes of the device's GPU instance and compute instance, and the
    parent GPU's C(Cores=). The capability minors come from C(/proc/driver/nvidia-caps/mig-minors) below O(root);
    the call fails before any change when MIG devices exist and that file cannot be read.
  - A GPU with MIG enabled but no MIG device gets no line, with a warning.
  - The lines live in a marked block; every other line of C(gres.conf) is kept as it is. A C(Name=gpu) line outside
    the block is refused, since Slurm would count those GPUs twice.
  - Sets C(ConstrainDevices=yes) and C(ConstrainCores=yes) in C(cgroup.conf), keeping its other keys.
  - Both files are backed up before a change and written atomically.
  - Slurm reads C(Cores=) as logical core indexes, not CPU ids. Core 0 is the first core of the first socket (Slurm's
    gres.conf(5), C(Cores)). The module reads each CPU's core and socket from sysfs and numbers the cores as hwloc
    does, socket by socket, so the hyperthreads of one core give one index.
author:
  - gpuops.hardening developers (@gpuops)
extends_documentation_fragment:
  - gpuops.hardening.host
  - gpuops.hardening.host.lock
options:
  gpus:
    description:
      - The GPUs, as C(ansible_facts.gpu_topology.gpus) from M(gpuops.hardening.gpu_numa_facts) lists them
        (C(index), C(name), C(minor_number), C(pci_bus_id), C(cpus), C(mig_mode), and C(mig_devices) with each
        device's C(index), C(profile), C(gpu_instance_id) and C(compute_instance_id)).
      - Not read when O(autodetect=nvml).
      - Unset, the module reads the node's GPUs itself as M(gpuops.hardening.gpu_numa_facts) does, or, in a
        M(gpuops.hardening.node) call, takes those of the feature O(topology_feature) names when it ran earlier in
        that call.
    type: list
    elements: dict
  topology_feature:
    description:
      - In a M(gpuops.hardening.node) call, the name of the C(gpu_numa_facts) feature whose GPUs to describe when
        O(gpus) is unset. A feature that did not run in the call (another tag) leaves the module to read them.
    type: str
  slurmd_action:
    description:
      - What a changed file asks of the play (RV(slurmd_installed)); the M(gpuops.hardening.node) call lists it in
        its C(handlers).
      - V(restart) restarts O(slurmd_unit) where it is installed, V(reconfigure) runs C(scontrol reconfigure).
    type: str
    choices: [restart, reconfigure, none]
    default: none
  slurmd_unit:
    description: slurmd's systemd unit.
    type: str
    default: slurmd.service
  autodetect:
    description:
      - V(nvml) writes C(AutoDetect=nvml) instead of explicit lines; slurmd then finds GPUs, MIG devices and cores
        itself. It needs a slurmd built with NVML.
    type: str
    choices: ['off', nvml]
    default: 'off'
  gpu_type:
    description: C(Type=) for every GPU, in place of the short model name derived from its product name.
    type: str
  config_dir:
    description: Slurm's configuration folder, where C(gres.conf) and C(cgroup.conf) sit beside C(slurm.conf).
    type: path
    default: /etc/slurm
  cgroup:
    description: Set C(ConstrainDevices=yes) and C(ConstrainCores=yes) in C(cgroup.conf).
    type: bool
    default: true
  backup:
    description: Back up each file before changing it.
    type: bool
    default: true
attributes:
  check_mode:
    description: Computes the lines and reports the changes and diffs, writing nothing.
    support: full
  diff_mode:
    description: Shows each file before and after.
    support: full
notes:
  - The C(Type=) rule drops brand words (NVIDIA, Tesla, Quadro, GeForce, TITAN), stops at the first word about memory
    or form factor (80GB, SXM4, PCIe, HBM3, NVL, Generation) and joins the rest in lower case. C(NVIDIA H100 80GB
    HBM3) is C(h100), C(NVIDIA RTX 6000 Ada Generation) is C(rtx6000ada). The node's C(Gres=) in C(slurm.conf) must
    name the same type.
  - A MIG device's type is the GPU's type, C(_) and the GPU instance part of its profile (C(3g.20gb) for a
    C(1c.3g.20gb) compute instance, C(1g.10gb) for C(1g.10gb+me)), the form Slurm's NVML autodetection gives.
    Slurm computes that part from the instance's memory, so on some GPUs its name differs from nvidia-smi's
    profile name, which this module uses.
  - Changes to C(Cores=) take effect after slurmctld restarts too (gres.conf(5)).
requirements:
  - A sysfs with C(devices/system/cpu/cpuN/topology) below O(root).
  - With MIG devices, C(/proc/driver/nvidia-caps/mig-minors) below O(root) (the NVIDIA driver's table).
"""

EXAMPLES = r"""
- name: Read the GPU topology
  gpuops.hardening.gpu_numa_facts:

- name: Describe the GPUs to Slurm
  gpuops.hardening.slurm_gres:
    gpus: "{{ ansible_facts.gpu_topology.gpus }}"

- name: Describe the GPUs as they are now, read by the module itself
  gpuops.hardening.slurm_gres:

- name: Let slurmd detect the GPUs and MIG devices through NVML
  gpuops.hardening.slurm_gres:
    autodetect: nvml
"""

RETURN = r"""
lines:
  description: The lines of the managed block.
  returned: always
  type: list
  elements: str
  sample: ["Name=gpu Type=a100_3g.20gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap12,/dev/nvidia-caps/nvidia-cap13 Cores=0-23",
           "Name=gpu Type=a100 File=/dev/nvidia1 Cores=24-47"]
wanted:
  description:
    - The GPU lines of the block as data; empty with O(autodetect=nvml).
    - C(file) holds C(MultipleFiles=) of a MIG device's line.
  returned: always
  type: list
  elements: dict
  sample: [{"file": "/dev/nvidia0", "type": "h100", "cores": [0, 1, 2]}]
current:
  description: Every C(Name=gpu) line C(gres.conf) held before the call, as data (C(cores) null when it has none).
  returned: always
  type: list
  elements: dict
  sample: [{"file": "/dev/nvidia0", "type": "h100", "cores": [0, 1, 2]}]
autodetect_current:
  description: Whether C(gres.conf) held an C(AutoDetect=nvml) line before the call.
  returned: always
  type: bool
gres_conf:
  description: What happened to C(gres.conf).
  returned: always
  type: dict
  sample: {"path": "/etc/slurm/gres.conf", "changed": true, "backup_file": null}
cgroup_conf:
  description: What happened to C(cgroup.conf); null when O(cgroup=false).
  returned: always
  type: dict
  sample: {"path": "/etc/slurm/cgroup.conf", "changed": false, "backup_file": null}
slurmd_installed:
  description: With O(slurmd_action=restart), whether systemd knows O(slurmd_unit) (read only after a change).
  returned: when a file changed and O(slurmd_action=restart)
  type: bool
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import slurm_gres as engine
from ansible_collections.gpuops.hardening.plugins.module_utils.feature_module import run_engine


def main():
    module = AnsibleModule(argument_spec=engine.ARGUMENT_SPEC, supports_check_mode=True, **engine.SPEC_RULES)
    run_engine(module, engine)


if __name__ == "__main__":
    main()
