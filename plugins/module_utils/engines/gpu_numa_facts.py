# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_numa_facts engine: the GPU/NIC/NUMA topology fact from nvidia-smi and sysfs, and its local fact file.

converge(spec, host, check_mode) -> result, for the gpuops.hardening.gpu_numa_facts module and the node call.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.gpuops.hardening.plugins.module_utils.commands import CommandTimeout, run
from ansible_collections.gpuops.hardening.plugins.module_utils.gpu_health import (
    gpu_health,
    parse_nvlink_status,
    uses_nvlink,
    with_nvlinks,
)
from ansible_collections.gpuops.hardening.plugins.module_utils.gpu_topology import build_topology
from ansible_collections.gpuops.hardening.plugins.module_utils.gpudirect import read_gpudirect
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec, under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.kernel_xid import with_xids
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import ensure_content
from ansible_collections.gpuops.hardening.plugins.module_utils.nvidia_smi import (
    parse_gpu_list,
    parse_query_root,
    parse_topology_matrix,
    query_root,
)
from ansible_collections.gpuops.hardening.plugins.module_utils.pci_bus_id import sysfs_bus_id
from ansible_collections.gpuops.hardening.plugins.module_utils.smi_tool import NvidiaSmi
from ansible_collections.gpuops.hardening.plugins.module_utils.sysfs_topology import (
    read_numa_balancing,
    read_numa_nodes,
    read_pci_device,
    read_rdma_devices,
)

# Where driver containers and some images put the tool, off the usual PATH.
EXTRA_BIN_DIRS = ["/usr/local/nvidia/bin"]


class GpuToolProblem(Exception):
    """nvidia-smi is missing, failed, or printed nothing usable."""


def _error_text(rc, out, err):
    text = (err or out or "").strip().splitlines()
    return "exit code %s: %s" % (rc, text[-1] if text else "no output")


def query_nvidia_smi(smi):
    """(query, matrix, gpu_list, notes, health) from one -q -x and one topo -m, run at once, and, for MIG, one -L."""
    notes = []
    timeout = smi.timeout
    # The node's first look: reads the call made since the node last changed answer (smi_tool).
    query_outcome, matrix_outcome = smi.together(["-q", "-x"], ["topo", "-m"], survey=True)
    if isinstance(query_outcome, CommandTimeout):
        raise query_outcome
    rc, out, err = query_outcome
    if rc != 0:
        raise GpuToolProblem("nvidia-smi -q -x failed with %s" % _error_text(rc, out, err))
    try:
        root = query_root(out)
    except ValueError as error:
        raise GpuToolProblem("nvidia-smi -q -x printed no usable XML: %s" % error)
    # One parse of the XML serves the topology's query and the health.
    query = parse_query_root(root)
    if not query["gpus"]:
        raise GpuToolProblem("nvidia-smi reports no GPUs")
    health = gpu_health(root, query["gpus"])

    matrix = None
    output = _optional_output("nvidia-smi topo -m", matrix_outcome, timeout, notes,
                              "links and nearest NICs come from sysfs alone")
    if output is not None:
        matrix = parse_topology_matrix(output)

    if uses_nvlink(matrix):
        output = _optional_output("nvidia-smi nvlink -s", smi.outcome(["nvlink", "-s"], survey=True), timeout, notes,
                                  "the NVLinks' state is not reported")
        with_nvlinks(health, parse_nvlink_status(output) if output is not None else None)

    gpu_list = None
    if any(gpu["mig_mode"] == "Enabled" for gpu in query["gpus"]):
        output = _optional_output("nvidia-smi -L", smi.outcome(["-L"], survey=True), timeout, notes,
                                  "MIG device UUIDs are not reported")
        if output is not None:
            gpu_list = parse_gpu_list(output)
    return query, matrix, gpu_list, notes, health


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


def read_topology(feature, nvidia_smi_path, require_gpu):
    """The gpu_topology fact of the node as it is now (read_gpus' first part)."""
    return read_gpus(feature, nvidia_smi_path, require_gpu)[0]


def read_gpus(feature, nvidia_smi_path, require_gpu):
    """(gpu_topology, gpu_health, gpu_gpudirect) of the node as it is now: nvidia-smi (with the feature's timeout)
    and sysfs below its root; the health from the same -q -x, GPUDirect's state from sysfs and the kernel command
    line. Without a usable nvidia-smi it fails the feature, or, when require_gpu is false, reports no GPUs."""
    root = feature.params["root"]
    notes = []
    query = matrix = gpu_list = health = None
    try:
        smi = NvidiaSmi(feature, path=nvidia_smi_path, opt_dirs=EXTRA_BIN_DIRS)
        if smi.path and not os.access(smi.path, os.X_OK):
            raise GpuToolProblem("nvidia-smi at %s is missing or not executable" % smi.path)
        if not smi.path:
            raise GpuToolProblem("nvidia-smi was not found on PATH or in %s; install the NVIDIA driver, "
                                 "or set require_gpu: false for nodes without GPUs" % ", ".join(EXTRA_BIN_DIRS))
        query, matrix, gpu_list, notes, health = query_nvidia_smi(smi)
    except (GpuToolProblem, CommandTimeout) as problem:
        if require_gpu:
            # The kernel log still says why (a GPU fallen off the bus often takes nvidia-smi with it): its Xids,
            # all on GPUs nvidia-smi does not list now, reach the audit's verdict.
            feature.fail_json(msg=str(problem), ansible_facts={"gpu_kernel_log": read_kernel_xids(feature, None)})
        notes.append("%s; reporting no GPUs" % problem)

    sysfs_root = under_root(root, "/sys")
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
        numa_balancing=read_numa_balancing(under_root(root, "/proc")),
        gpu_list=gpu_list,
    )
    topology["warnings"] = notes + topology["warnings"]
    return topology, health, read_gpudirect(sysfs_root, under_root(root, "/proc"), topology)


def _kernel_log(problem=None, unlisted=None):
    return {"read": problem is None, "problem": problem, "unlisted": unlisted or []}


def read_kernel_xids(feature, health):
    """The gpu_kernel_log fact: the driver's Xid lines of the kernel log (one plain `dmesg`), each GPU's set on its
    health entry ("xid"), those on bus ids nvidia-smi does not list (a GPU fallen off the bus) kept apart.

    A log that cannot be read leaves every GPU's "xid" None and says why: unknown, never "no Xid". health None
    (nvidia-smi gave no GPU): every Xid is on a GPU it does not list."""
    health = health or []
    path = feature.params["dmesg_path"] or feature.get_bin_path("dmesg")
    problem = None
    if not path:
        problem = "dmesg was not found on PATH"
    else:
        try:
            rc, out, err = run(feature, [path], timeout=feature.params["timeout"])
            if rc != 0:
                problem = "dmesg failed with %s" % _error_text(rc, out, err)
                if "not permitted" in problem:
                    problem += " (with kernel.dmesg_restrict=1 only root, or CAP_SYSLOG, reads the kernel log)"
        except CommandTimeout as error:
            problem = str(error)
    if problem:
        with_xids(health, None)
        return _kernel_log(problem)
    return _kernel_log(unlisted=with_xids(health, out))


NAME = 'gpu_numa_facts'
ARGUMENT_SPEC = host_argument_spec()
ARGUMENT_SPEC.update(
    require_gpu=dict(type="bool", default=True),
    nvidia_smi_path=dict(type="path"),
    dmesg_path=dict(type="path"),
    # nvidia-smi answers in seconds; half a minute already means a wedged driver.
    timeout=dict(type="int", default=30),
    fact_path=dict(type="path"),
    numactl_packages=dict(type="list", elements="str", default=[]),
)
SPEC_RULES = {}


def handlers(spec, result):
    """What the play does after the call: install numactl's packages where the node has no numactl."""
    if spec["numactl_packages"] and not result.get("numactl_path"):
        return [{"action": "install", "packages": list(spec["numactl_packages"])}]
    return []


def converge(spec, host, check_mode):
    """Converge this feature on the node as spec says (check_mode: only say what would change); returns the result."""
    feature = host.feature(NAME, spec, check_mode)
    params = feature.params
    topology, health, gpudirect = read_gpus(feature, params["nvidia_smi_path"], params["require_gpu"])
    for warning in topology["warnings"]:
        feature.warn(warning)
    kernel_log = read_kernel_xids(feature, health)
    # The health changes from one read to the next (clock reasons, error counts), and so may GPUDirect's state
    # (a module loaded, ACS set at boot): facts, never in the fact file.
    result = {"changed": False,
              "ansible_facts": {"gpu_topology": topology, "gpu_health": health, "gpu_kernel_log": kernel_log,
                                "gpu_gpudirect": gpudirect},
              "numactl_path": feature.get_bin_path("numactl")}
    if params["fact_path"]:
        result.update(write_fact_file(feature, under_root(params["root"], params["fact_path"]), topology))
    return result


def fact_file_content(topology):
    """The fact as Ansible's to_nice_json(indent=2) prints it: sorted keys, so equal facts give equal bytes."""
    return json.dumps(topology, indent=2, sort_keys=True, separators=(",", ": ")) + "\n"


def write_fact_file(feature, path, topology):
    """Converge the local fact file; the changed flag, the file and its diff for the result."""
    written, diff = ensure_content(feature, path, fact_file_content(topology), mode=0o644)
    result = {"changed": written["changed"], "fact_file": path}
    if diff and feature._diff:
        result["diff"] = diff
    return result
