# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpuops.hardening.gpu_numa_facts module's code. It lives here, not in the module file, so that
gpuops.hardening.precheck can run it in check mode in its own process (module_utils/precheck.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils.commands import CommandTimeout, run_outcome, run_together
from ansible_collections.gpuops.hardening.plugins.module_utils.gpu_topology import build_topology
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec, under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import ensure_content
from ansible_collections.gpuops.hardening.plugins.module_utils.nvidia_smi import (
    parse_gpu_list,
    parse_query_xml,
    parse_topology_matrix,
)
from ansible_collections.gpuops.hardening.plugins.module_utils.pci_bus_id import sysfs_bus_id
from ansible_collections.gpuops.hardening.plugins.module_utils.sysfs_topology import (
    read_numa_balancing,
    read_numa_nodes,
    read_pci_device,
    read_rdma_devices,
)
from ansible_collections.gpuops.hardening.plugins.module_utils.receipts import remember_call
from ansible_collections.gpuops.hardening.plugins.module_utils.run_lock import hold_node_lock

# Where driver containers and some images put the tool, off the usual PATH.
EXTRA_BIN_DIRS = ["/usr/local/nvidia/bin"]


class GpuToolProblem(Exception):
    """nvidia-smi is missing, failed, or printed nothing usable."""


def _error_text(rc, out, err):
    text = (err or out or "").strip().splitlines()
    return "exit code %s: %s" % (rc, text[-1] if text else "no output")


def query_nvidia_smi(module, binary, timeout):
    """(query, matrix, gpu_list, notes) from one -q -x and one topo -m, run at once, and, for MIG, one -L."""
    notes = []
    query_outcome, matrix_outcome = run_together(module, [[binary, "-q", "-x"], [binary, "topo", "-m"]], timeout=timeout)
    if isinstance(query_outcome, CommandTimeout):
        raise query_outcome
    rc, out, err = query_outcome
    if rc != 0:
        raise GpuToolProblem("nvidia-smi -q -x failed with %s" % _error_text(rc, out, err))
    try:
        query = parse_query_xml(out)
    except ValueError as error:
        raise GpuToolProblem("nvidia-smi -q -x printed no usable XML: %s" % error)
    if not query["gpus"]:
        raise GpuToolProblem("nvidia-smi reports no GPUs")

    matrix = None
    output = _optional_output("nvidia-smi topo -m", matrix_outcome, timeout, notes,
                              "links and nearest NICs come from sysfs alone")
    if output is not None:
        matrix = parse_topology_matrix(output)

    gpu_list = None
    if any(gpu["mig_mode"] == "Enabled" for gpu in query["gpus"]):
        output = _optional_output("nvidia-smi -L", run_outcome(module, [binary, "-L"], timeout=timeout), timeout, notes,
                                  "MIG device UUIDs are not reported")
        if output is not None:
            gpu_list = parse_gpu_list(output)
    return query, matrix, gpu_list, notes


def _optional_output(name, outcome, timeout, notes, consequence):
    """stdout of a call whose data is optional; None, with a note, when it failed or hung.

    outcome: run_outcome()'s (rc, stdout, stderr) or CommandTimeout. The -q -x data already read is kept either way.
    """
    if isinstance(outcome, CommandTimeout):
        notes.append("%s did not finish within %s seconds; %s" % (name, timeout, consequence))
        return None
    rc, out, err = outcome
    if rc != 0:
        notes.append("%s failed (%s); %s" % (name, _error_text(rc, out, err), consequence))
        return None
    return out


def main():
    argument_spec = host_argument_spec()
    argument_spec.update(
        require_gpu=dict(type="bool", default=True),
        nvidia_smi_path=dict(type="path"),
        # nvidia-smi answers in seconds; half a minute already means a wedged driver.
        timeout=dict(type="int", default=30),
        fact_path=dict(type="path"),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    hold_node_lock(module, "gpuops.hardening.gpu_numa_facts")
    remember_call(module, "gpu_numa_facts")
    params = module.params
    notes = []
    query = matrix = gpu_list = None

    try:
        binary = params["nvidia_smi_path"] or module.get_bin_path("nvidia-smi", opt_dirs=EXTRA_BIN_DIRS)
        if binary and not os.access(binary, os.X_OK):
            raise GpuToolProblem("nvidia-smi at %s is missing or not executable" % binary)
        if not binary:
            raise GpuToolProblem("nvidia-smi was not found on PATH or in %s; install the NVIDIA driver, "
                                 "or set require_gpu: false for nodes without GPUs" % ", ".join(EXTRA_BIN_DIRS))
        query, matrix, gpu_list, notes = query_nvidia_smi(module, binary, params["timeout"])
    except (GpuToolProblem, CommandTimeout) as problem:
        if params["require_gpu"]:
            module.fail_json(msg=str(problem))
        notes.append("%s; reporting no GPUs" % problem)

    sysfs_root = under_root(params["root"], "/sys")
    pci_devices = {}
    for gpu in (query or {}).get("gpus", []):
        address = sysfs_bus_id(gpu["pci_bus_id"])
        if address:
            pci_devices[address] = read_pci_device(sysfs_root, address)

    topology = build_topology(
        query,
        matrix=matrix,
        pci_devices=pci_devices,
        rdma_devices=read_rdma_devices(sysfs_root),
        numa_nodes=read_numa_nodes(sysfs_root),
        numa_balancing=read_numa_balancing(under_root(params["root"], "/proc")),
        gpu_list=gpu_list,
    )
    topology["warnings"] = notes + topology["warnings"]
    for warning in topology["warnings"]:
        module.warn(warning)
    result = {"changed": False, "ansible_facts": {"gpu_topology": topology},
              "numactl_path": module.get_bin_path("numactl")}
    if params["fact_path"]:
        result.update(write_fact_file(module, under_root(params["root"], params["fact_path"]), topology))
    module.exit_json(**result)


def fact_file_content(topology):
    """The fact as Ansible's to_nice_json(indent=2) prints it: sorted keys, so equal facts give equal bytes."""
    return json.dumps(topology, indent=2, sort_keys=True, separators=(",", ": ")) + "\n"


def write_fact_file(module, path, topology):
    """Converge the local fact file; the changed flag, the file and its diff for the result."""
    written, diff = ensure_content(module, path, fact_file_content(topology), mode=0o644)
    result = {"changed": written["changed"], "fact_file": path}
    if diff and module._diff:
        result["diff"] = diff
    return result
