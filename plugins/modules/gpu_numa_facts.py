#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gpu_numa_facts
short_description: Gather GPU, NIC and NUMA topology facts, with binding recommendations
version_added: "0.1.0"
description:
  - Sets C(ansible_facts.gpu_topology) from C(nvidia-smi -q -x), C(nvidia-smi topo -m) and sysfs
    (PCI devices, RDMA devices and NUMA nodes).
  - For each GPU it reports the NUMA nodes and CPUs local to it, its nearest RDMA NICs, and the
    C(numactl) and C(taskset) arguments that bind a job to them.
  - Runs nvidia-smi once per kind of data, never once per GPU. C(nvidia-smi -L) is only run when a
    GPU has MIG enabled, to report MIG device UUIDs. Every command runs under a timeout.
  - Sets C(ansible_facts.gpu_health) from the same C(nvidia-smi -q -x), with each GPU's PCIe link, ECC counters,
    retired pages, remapped rows, clock event reasons and fabric state, and, where C(nvidia-smi topo -m) shows
    NVLinks, each link's state from C(nvidia-smi nvlink -s); the audit's hardware checks judge them.
  - Sets C(ansible_facts.gpu_kernel_log) and each GPU's C(xid) in C(gpu_health) from one plain C(dmesg), with the NVIDIA
    driver's Xid lines in the kernel log since boot, per GPU and per code; those on a PCI address nvidia-smi does not
    list (a GPU fallen off the bus) are kept apart. A log that cannot be read is said so, never read as no Xid.
  - Sets C(ansible_facts.gpu_gpudirect) from sysfs and C(/proc/cmdline), with what GPUDirect RDMA needs on a node
    with RDMA NICs, for each GPU and its nearest NIC, the IOMMU mode of both and the ACS control of every PCI
    bridge between them, and whether C(nvidia_peermem) is loaded and registered; the audit's hardware checks
    judge them. The bridges' config space is read in full by root only; a shorter read is reported as it is.
  - Reads only, unless O(fact_path) is set; then it also writes C(gpu_topology) there as an Ansible local fact
    (never C(gpu_health) or C(gpu_gpudirect), which change from one read to the next).
author:
  - gpuops.hardening developers (@gpuops)
extends_documentation_fragment:
  - gpuops.hardening.host
  - gpuops.hardening.host.lock
options:
  require_gpu:
    description:
      - Fail when nvidia-smi is missing, fails, or reports no GPU.
      - When false, the facts are still set, with an empty C(gpus) list and a warning, so one play
        can cover nodes with and without GPUs.
    type: bool
    default: true
  nvidia_smi_path:
    description: Path to nvidia-smi. By default it is searched on E(PATH) and in C(/usr/local/nvidia/bin).
    type: path
  dmesg_path:
    description:
      - Path to C(dmesg), which reads the kernel log for the GPUs' Xid lines. By default it is searched on E(PATH).
    type: path
  timeout:
    description:
      - Seconds allowed for each nvidia-smi call, and for C(dmesg).
      - When C(nvidia-smi topo -m) or C(nvidia-smi -L) runs longer, the C(-q -x) data is kept and a warning names
        the timeout; only a C(-q -x) that runs longer counts as nvidia-smi failing.
    type: int
    default: 30
  fact_path:
    description:
      - Also write C(gpu_topology) to this file as sorted JSON (indent 2), so later plays see it as the local fact
        C(ansible_local.gpu_topology) when the file is in C(/etc/ansible/facts.d) and named C(gpu_topology.fact).
      - Taken below O(root). Written atomically with mode C(0644), its folder created with mode C(0755) when
        missing; a file already holding the same JSON is left alone, so an unchanged host rewrites nothing.
      - Unset, nothing is written.
    type: path
  numactl_packages:
    description:
      - The packages that bring C(numactl). When the node has no C(numactl), the node call
        (M(gpuops.hardening.node)) lists them in its C(handlers) for the play to install; this module only reads.
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    description: Reads in check mode too; a fact file that would change is reported, not written.
    support: full
  diff_mode:
    description: Shows the fact file's change.
    support: full
  facts:
    description: Sets C(ansible_facts.gpu_topology), C(ansible_facts.gpu_health) and C(ansible_facts.gpu_kernel_log).
    support: full
notes:
  - "One source decides each GPU's NUMA binding and its CPU list: sysfs (the PCI device's C(numa_node) and
    C(local_cpulist)) when C(numa_node) is 0 or more; otherwise nvidia-smi's C(NUMA Affinity) and C(CPU Affinity)
    from C(topo -m); otherwise, on a host with one node that has CPUs, that node. When sysfs and nvidia-smi
    disagree, sysfs wins and a warning says so. The CPU list is the source's local CPUs on the bound nodes, so
    C(numactl) and C(taskset) name the same CPUs. C(numa_affinity_source) says which source it was."
  - C(cuda_visible_devices) is the GPU's UUID, which CUDA accepts and which names the same GPU whatever the device
    order. CUDA's default order is fastest first, not nvidia-smi's; the index (C(nvidia_smi_index)) selects the same
    GPU only with C(CUDA_DEVICE_ORDER=PCI_BUS_ID).
  - A PCI device whose sysfs C(numa_node) is C(-1) (common in VMs) gets a null C(numa_node) and a warning.
  - On a GH200 the GPU's memory is a CPU-less NUMA node; it is reported as C(gpu_memory_numa_node),
    and the binding names the node of the Grace CPUs.
  - C(kernel.numa_balancing) being on is a warning where more than one NUMA node has CPUs; with one
    node there is nothing for it to migrate between.
  - RDMA devices are read from C(class/infiniband) and from the C(infiniband) folders of PCI functions.
  - The Xid lines since boot are those still in the kernel's ring buffer. They stay after a GPU reset until the next
    reboot (or C(dmesg --clear)), and a busy log may have pushed old ones out; journald keeps its own copy.
requirements:
  - nvidia-smi from the NVIDIA driver, on GPU nodes.
"""

EXAMPLES = r"""
- name: Read the GPU topology
  gpuops.hardening.gpu_numa_facts:

- name: Read the GPU topology and keep it as the local fact gpu_topology
  gpuops.hardening.gpu_numa_facts:
    fact_path: /etc/ansible/facts.d/gpu_topology.fact

- name: Cover GPU and CPU-only nodes in one play
  gpuops.hardening.gpu_numa_facts:
    require_gpu: false

- name: Show how to bind a job to GPU 5
  ansible.builtin.debug:
    msg: "{{ ansible_facts.gpu_topology.recommendations[5].numactl }} -- python train.py"
"""

RETURN = r"""
numactl_path:
  description:
    - Where C(numactl) is on the node (E(PATH) and the sbin folders), or None when it is not installed.
    - The binding recommendations and C(gpu-numa-exec) need it; the numa_binding role installs it only when this is None,
      so a node that has it costs no package manager call.
  returned: always
  type: str
  sample: /usr/bin/numactl
fact_file:
  description: The fact file written or left as it was, below O(root); only with O(fact_path).
  returned: when O(fact_path) is set
  type: str
  sample: /etc/ansible/facts.d/gpu_topology.fact
ansible_facts:
  description: The facts set.
  returned: always
  type: complex
  contains:
    gpu_topology:
      description: GPUs, RDMA NICs, NUMA nodes, links, binding recommendations and warnings.
      returned: always
      type: complex
      contains:
        driver_version:
          description: NVIDIA driver version, or None without nvidia-smi.
          type: str
          returned: always
          sample: "550.54.15"
        cuda_version:
          description: Highest CUDA version the driver supports.
          type: str
          returned: always
          sample: "12.4"
        gpus:
          description:
            - One item per GPU, in nvidia-smi index order.
            - C(mig_devices) lists each MIG device with C(index), C(profile) and C(uuid) from C(nvidia-smi -L), and
              C(gpu_instance_id) and C(compute_instance_id) from C(nvidia-smi -q -x); a value is null when its
              command gave nothing.
          type: list
          elements: dict
          returned: always
          sample:
            - index: 5
              uuid: GPU-5e0b4bd0-8d4c-4bb1-9a0e-6c3a2f1e7d55
              name: NVIDIA H100 80GB HBM3
              minor_number: 5
              pci_bus_id: "0000:ba:00.0"
              pci_bus_id_nvidia_smi: "00000000:BA:00.0"
              numa_node: 1
              numa_affinity: [1]
              numa_affinity_source: sysfs
              gpu_memory_numa_node: null
              cpus: [56, 57, 58]
              local_cpulist: "56-111,168-223"
              nearest_nics: [mlx5_5]
              memory_total_mib: 81559
              persistence_mode: Enabled
              mig_mode: Disabled
              mig_mode_pending: Disabled
              compute_mode: Default
              mig_devices: []
              driver_version: "550.54.15"
              cuda_version: "12.4"
        nics:
          description: RDMA devices with their netdevs, PCI address, NUMA node and nearest GPUs.
          type: list
          elements: dict
          returned: always
          sample:
            - name: mlx5_5
              netdevs: [ibp186s0]
              pci_bus_id: "0000:ba:00.1"
              numa_node: 1
              local_cpulist: "56-111,168-223"
              topology_label: NIC5
              nearest_gpus: [5]
        numa_nodes:
          description: NUMA nodes with CPUs, memory and distance row; CPU-less nodes have C(cpus=[]).
          type: list
          elements: dict
          returned: always
          sample:
            - id: 1
              cpus: [56, 57]
              cpulist: "56-111,168-223"
              has_cpu: true
              memory_total_kib: 1056768000
              distances: [21, 10]
              gpus: [4, 5, 6, 7]
              nics: [mlx5_4, mlx5_5]
        numa_balancing:
          description: Whether C(kernel.numa_balancing) is on; None when it cannot be read.
          type: bool
          returned: always
        links:
          description:
            - The parsed C(nvidia-smi topo -m) matrix.
            - "C(labels) in printed order, C(nics) mapping NIC labels to device names, and C(matrix)
              as C({label: {other_label: link}})."
          type: dict
          returned: always
          sample:
            labels: [GPU0, GPU1, NIC0]
            nics: {NIC0: mlx5_0}
            matrix: {GPU0: {GPU1: NV18, NIC0: PIX}}
        recommendations:
          description:
            - Per GPU, how to bind a job to it; C(numactl_args) is None when the affinity is unknown.
            - C(cuda_visible_devices) is the GPU UUID; C(nvidia_smi_index) is the index, which CUDA numbers the same
              way only with C(CUDA_DEVICE_ORDER=PCI_BUS_ID).
          type: list
          elements: dict
          returned: always
          sample:
            - gpu: 5
              uuid: GPU-5e0b4bd0-8d4c-4bb1-9a0e-6c3a2f1e7d55
              pci_bus_id: "0000:ba:00.0"
              numa_nodes: [1]
              numactl_args: ["--cpunodebind=1", "--membind=1"]
              numactl: numactl --cpunodebind=1 --membind=1
              taskset_cpus: "56-111,168-223"
              taskset: taskset -c 56-111,168-223
              cuda_visible_devices: GPU-5e0b4bd0-8d4c-4bb1-9a0e-6c3a2f1e7d55
              nvidia_smi_index: 5
        warnings:
          description: Findings worth acting on, also raised as module warnings.
          type: list
          elements: str
          returned: always
          sample:
            - "GPU 3: its nearest NIC (mlx5_6) is on another NUMA node; GPUDirect RDMA traffic crosses the socket interconnect"
    gpu_health:
      description:
        - One entry per GPU, in index order, from C(nvidia-smi -q -x); a value nvidia-smi gives as N/A is None.
        - C(pcie) (generations and widths, current and maximum, the device's and the host's), C(ecc) (modes and
          the volatile and aggregate error sums), C(retired_pages), C(remapped_rows), C(clock_event_reasons)
          (the active ones), C(fabric) (state and status) and C(nvlink) (the C(active) and C(inactive) link
          numbers, or None where NVLink is not read).
        - C(xid), the GPU's Xid lines in the kernel log since boot, one entry per code (C(xid), C(count),
          C(first_seconds) and C(last_seconds) since boot, and the last line's C(message), C(pid) and C(name)),
          or None where the kernel log was not read (C(gpu_kernel_log) says why).
      returned: always
      type: list
      elements: dict
      sample:
        - index: 0
          uuid: GPU-9518cbde-2de2-5aef-a78e-a4643ef52860
          name: NVIDIA H200
          pci_bus_id: "00000000:00:06.0"
          pcie: {gen_current: 5, gen_max: 5, gen_device_current: 5, gen_device_max: 5, gen_host_max: null,
                 width_current: 16, width_max: 16}
          ecc: {mode_current: Enabled, mode_pending: Enabled, volatile_correctable: 0, volatile_uncorrectable: 0,
                aggregate_correctable: 0, aggregate_uncorrectable: 0, sram_threshold_exceeded: false}
          retired_pages: {single_bit: null, double_bit: null, pending: null}
          remapped_rows: {correctable: 0, uncorrectable: 0, pending: false, failure: false}
          clock_event_reasons_reported: true
          clock_event_reasons: [gpu_idle]
          fabric: {state: null, status: null}
          nvlink: null
          xid:
            - {xid: 79, count: 1, first_seconds: 5107.644336, last_seconds: 5107.644336,
               message: GPU has fallen off the bus., pid: null, name: null}
    gpu_kernel_log:
      description:
        - Whether C(dmesg) was read (C(read)), and if not, why (C(problem)); each GPU's Xids are in C(gpu_health).
        - C(unlisted), the Xids on PCI addresses that no GPU nvidia-smi lists has, per address (C(pci_bus_id),
          C(uuid) as the driver logged it, or None, and C(xid) as in C(gpu_health)).
      returned: always
      type: dict
      sample:
        read: true
        problem: null
        unlisted:
          - pci_bus_id: "0000:2b:00.0"
            uuid: GPU-5e0b4bd0-8d4c-4bb1-9a0e-6c3a2f1e7d55
            xid:
              - {xid: 79, count: 1, first_seconds: 5107.644336, last_seconds: 5107.644336,
                 message: GPU has fallen off the bus., pid: null, name: null}
    gpu_gpudirect:
      description:
        - GPUDirect RDMA's state on the node; None without GPUs. On a node without RDMA NICs only
          C(rdma_devices) is filled, as an empty list.
        - C(rdma_devices), the RDMA NICs with a PCI address; C(iommu_cmdline), the IOMMU words of the kernel
          command line; C(peermem), C(loaded), C(initstate), C(registry) (whether
          C(/sys/kernel/mm/memory_peers) exists) and the C(clients) it lists.
        - C(gpus), one entry per GPU, with its C(iommu) (C(group), C(type) as the kernel names it, C(mode) one of
          C(off), C(passthrough), C(translated), C(unknown)), its nearest RDMA C(nic) (name, PCI address,
          C(iommu)) and the C(bridges) between them, each with its PCI address, how many C(config_bytes) were
          read and its C(acs) (C(readable), C(present), the C(capability) and C(control) registers,
          C(request_redirect), C(completion_redirect)); C(nic) and C(bridges) are None where no RDMA NIC is
          nearest, C(bridges) where sysfs lacks either device.
      returned: always
      type: dict
      sample:
        rdma_devices: [mlx5_0]
        iommu_cmdline: [intel_iommu=on, iommu=pt]
        peermem: {loaded: true, initstate: live, registry: true, clients: [nv_mem, nv_mem_nc]}
        gpus:
          - index: 0
            pci_bus_id: "0000:18:00.0"
            iommu: {group: "17", type: identity, mode: passthrough}
            nic:
              name: mlx5_0
              pci_bus_id: "0000:1a:00.0"
              iommu: {group: "18", type: identity, mode: passthrough}
            bridges:
              - pci_bus_id: "0000:16:00.0"
                config_bytes: 4096
                acs: {readable: true, present: true, capability: 95, control: 0, request_redirect: false,
                      completion_redirect: false}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import gpu_numa_facts as engine
from ansible_collections.gpuops.hardening.plugins.module_utils.feature_module import run_engine


def main():
    module = AnsibleModule(argument_spec=engine.ARGUMENT_SPEC, supports_check_mode=True, **engine.SPEC_RULES)
    run_engine(module, engine)


if __name__ == "__main__":
    main()
