#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_baseline
short_description: Time the host-GPU path of each GPU through the CUDA driver API, changing nothing
version_added: "0.4.0"
author:
  - gpuops.hardening developers (@gpuops)
description:
  - Measures, per GPU, host-to-device and device-to-host copy bandwidth from pinned and from pageable memory at each
    size of O(sizes_mib); the same pinned host-to-device copy from a process bound to the GPU's NUMA node and from one
    bound to the farthest node (hosts with more than one NUMA node with CPUs); and the time to the first CUDA context
    (C(cuInit) and the primary context, C(cuDevicePrimaryCtxRetain)) in a fresh process, which persistence mode shortens.
  - It loads C(libcuda.so.1), which every NVIDIA driver installs, with Python's C(ctypes); no CUDA toolkit, compiler
    or PyTorch is needed. Each measurement runs in a fresh Python process (under C(numactl) for the NUMA figures),
    bounded by O(timeout).
  - Read-only toward the GPU's configuration; it never changes persistence, compute mode, clocks or MIG. It allocates
    at most O(max_memory_mib) of device memory and twice that of host memory (pinned and pageable) per process, and
    frees it.
  - Each figure is the median of O(repeats) runs, with the min and the max.
  - Right after the timed runs of its largest pinned host-to-device copy, the same process goes on copying and reads
    the GPU's PCIe link through NVML (C(libnvidia-ml.so.1)) while the copies run, for at most 10 seconds or a
    quarter of O(timeout). The link check passes when the link runs at its maximum generation and width under load
    and warns otherwise, naming what it read, what it expected and what to check (reseat, riser, BIOS). An idle link
    may lower its generation to save power; under load it must not.
  - A figure it cannot measure is a SKIP with the reason (no C(libcuda.so.1), MIG on, one NUMA node only, a size
    above O(max_memory_mib), no C(libnvidia-ml.so.1) for the link); a measurement that fails or runs past
    O(timeout) is a WARN with the error.
  - The result is an audit document (the keys of M(gpuops.hardening.audit_node)'s C(gpuops_audit)), so
    M(gpuops.hardening.audit_report) writes the report and the named baselines of the figures.
options:
  node:
    description: The node's name in the document, usually C(inventory_hostname).
    type: str
    required: true
  profile:
    description: The node's C(gpuops_profile), kept in the document.
    type: str
  topology:
    description: The C(gpu_topology) fact of M(gpuops.hardening.gpu_numa_facts) (GPUs, NUMA nodes, bindings).
    type: dict
    required: true
  sizes_mib:
    description: Copy sizes in MiB.
    type: list
    elements: int
    default: [1, 64, 1024]
  repeats:
    description: Timed runs per figure (and fresh processes for the start-up figure); the median is reported.
    type: int
    default: 5
  max_memory_mib:
    description: The most memory one buffer may take; sizes above it are skipped.
    type: int
    default: 1024
  timeout:
    description: Seconds each measuring process may run; one that runs longer is stopped and its figures are a WARN.
    type: int
    default: 120
  library:
    description: The CUDA driver library to load.
    type: str
    default: libcuda.so.1
  nvml_library:
    description:
      - The NVML library that reads each GPU's PCIe link while its copies run.
      - Without it the link check is a SKIP; the copy figures do not need it.
    type: str
    default: libnvidia-ml.so.1
  numactl_path:
    description: The C(numactl) binary; by default found on C(PATH). Without it the NUMA figures are skipped.
    type: path
  root:
    description:
      - The directory the node lock C(/run/gpuops-hardening/node.lock) is taken below.
      - Tests point it at a prepared tree; on a real host leave it at C(/).
    type: path
    default: /
extends_documentation_fragment:
  - gpuops.hardening.host.lock
attributes:
  check_mode:
    description:
      - It measures in check mode too; measuring changes nothing, and C(changed) is always false.
      - Unlike the modules that change the node, it takes the node lock in check mode too, since it does the same
        work in both modes; a measurement never overlaps another run's MIG, MPS or persistence change.
    support: full
  diff_mode:
    description: Nothing changes, so there is no diff.
    support: none
notes:
  - Other work on the GPU skews the figures; run it on an idle node.
  - It holds the node lock, in check mode too, from before its first measurement until it ends, so it waits for a
    gpuops.hardening run that is changing the node (up to O(lock_timeout)), and such a run waits for it.
"""

EXAMPLES = r"""
- name: Read the GPU topology
  gpuops.hardening.gpu_numa_facts:

- name: Time the host-GPU path
  gpuops.hardening.gpu_baseline:
    node: "{{ inventory_hostname }}"
    topology: "{{ gpu_topology }}"
    sizes_mib: [1, 64, 1024]
    repeats: 5
  register: gpu_baseline
"""

RETURN = r"""
ansible_facts:
  description: The same document as C(gpuops_audit), the fact M(gpuops.hardening.audit_report) reads.
  returned: success
  type: complex
  contains:
    gpuops_audit:
      description: The value of RV(document).
      type: dict
      returned: success
document:
  description: The figures as an audit document, one check per figure in the area C(baseline) (docs/baseline.md).
  returned: always
  type: dict
  sample:
    node: gpu-train
    summary: {PASS: 17, FAIL: 0, WARN: 0, SKIP: 3}
    checks:
      - id: baseline.gpu0.h2d.pinned.64MiB
        area: baseline
        title: GPU 0 pinned host to device copy, 64 MiB
        verdict: PASS
        expected: measured
        actual: 52.31 GB/s (min 51.90, max 52.44, 5 runs)
        reason: median of 5 timed cuMemcpyHtoD calls after one warm-up
"""

import inspect
import json
import sys

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils import cuda_driver
from ansible_collections.gpuops.hardening.plugins.module_utils import gpu_baseline as plan
from ansible_collections.gpuops.hardening.plugins.module_utils.commands import CommandTimeout, run
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import LOCK_TIMEOUT
from ansible_collections.gpuops.hardening.plugins.module_utils.run_lock import hold_node_lock


class Measurer(object):
    """Runs cuda_driver.py in a fresh Python process per request and reads its JSON answer."""

    def __init__(self, module, source):
        self.module = module
        self.source = source
        self.params = module.params

    def ask(self, request, prefix=None):
        """(answer, None) or (None, why not)."""
        request = dict(request, library=self.params["library"])
        # `python3 -` reads the program from stdin: the argv stays short and readable in errors.
        argv = list(prefix or []) + [sys.executable, "-", json.dumps(request, sort_keys=True)]
        what = "%s in a fresh process%s" % (request["op"], " under " + " ".join(prefix) if prefix else "")
        try:
            rc, out, err = run(self.module, argv, timeout=self.params["timeout"], data=self.source)
        except CommandTimeout:
            return None, "%s did not finish within %d seconds (the timeout option)" % (what, self.params["timeout"])
        lines = [line for line in (out or "").splitlines() if line.strip()]
        if rc != 0 or not lines:
            return None, "%s failed (exit code %s): %s" % (what, rc, (err or out or "no output").strip()[-400:])
        try:
            answer = json.loads(lines[-1])
        except ValueError:
            return None, "%s answered something other than JSON: %s" % (what, lines[-1][:200])
        if not answer.get("ok"):
            return None, answer.get("error") or "%s failed" % what
        return answer, None


def measure_gpu(measurer, gpu, topology, numactl_path, recommendation):
    params = measurer.params
    skip = plan.gpu_skip_reason(gpu)
    cases, skipped_sizes = plan.copy_cases(params["sizes_mib"], params["max_memory_mib"])
    found = []

    copy_answer, copy_error = None, None
    if not skip and cases:
        # The link is read in the same process, while its largest pinned host-to-device copy runs in a loop.
        link = {"library": params["nvml_library"], "seconds": plan.link_read_seconds(params["timeout"])}
        copy_answer, copy_error = measurer.ask({"op": "copy", "pci_bus_id": gpu["pci_bus_id"], "cases": cases,
                                                "repeats": params["repeats"], "link": link})
    found.extend(plan.copy_checks(gpu, params["sizes_mib"], skipped_sizes, (copy_answer or {}).get("seconds") or {},
                                  skip_reason=skip, error=copy_error))
    link_skip = skip or (None if cases else "no copy size is within baseline_max_memory_mib")
    found.append(plan.link_check(gpu, (copy_answer or {}).get("link"), skip_reason=link_skip, error=copy_error))

    numa = plan.numa_plan(gpu, topology, numactl_path, recommendation)
    numa_sizes = [size for size in params["sizes_mib"] if size not in skipped_sizes]
    numa_size = max(numa_sizes) if numa_sizes else min(params["sizes_mib"])
    numa_skip = skip or (None if numa_sizes else "no copy size is within baseline_max_memory_mib")
    sides = {}
    if not numa_skip and not numa[4]:
        size_bytes = numa_size * plan.MIB
        for side, prefix in (("local", numa[0]), ("remote", numa[1])):
            answer, error = measurer.ask({"op": "copy", "pci_bus_id": gpu["pci_bus_id"], "cases": [("h2d", "pinned", size_bytes)],
                                          "repeats": params["repeats"]}, prefix=prefix)
            sides[side] = (((answer or {}).get("seconds") or {}).get("h2d/pinned/%d" % size_bytes), error)
    found.extend(plan.numa_checks(gpu, numa_size, numa, sides.get("local", (None, None))[0], sides.get("remote", (None, None))[0],
                                  skip_reason=numa_skip, local_error=sides.get("local", (None, None))[1],
                                  remote_error=sides.get("remote", (None, None))[1]))

    startup, startup_error = [], None
    if not skip:
        for _run in range(params["repeats"]):
            answer, startup_error = measurer.ask({"op": "startup", "pci_bus_id": gpu["pci_bus_id"]})
            if startup_error:
                break
            startup.append(answer["seconds"])
    found.append(plan.startup_check(gpu, startup, skip_reason=skip, error=startup_error))
    return found


def worker_source():
    """cuda_driver.py's own text: it runs as the fresh process's program."""
    return inspect.getsource(cuda_driver)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            node=dict(type="str", required=True),
            profile=dict(type="str"),
            topology=dict(type="dict", required=True),
            sizes_mib=dict(type="list", elements="int", default=[1, 64, 1024]),
            repeats=dict(type="int", default=5),
            max_memory_mib=dict(type="int", default=1024),
            timeout=dict(type="int", default=120),
            library=dict(type="str", default=cuda_driver.LIBRARY),
            nvml_library=dict(type="str", default=cuda_driver.NVML_LIBRARY),
            numactl_path=dict(type="path"),
            root=dict(type="path", default="/"),
            lock_timeout=dict(type="int", default=LOCK_TIMEOUT),
        ),
        supports_check_mode=True,
    )
    params = module.params
    for name in ("repeats", "max_memory_mib", "timeout"):
        if params[name] < 1:
            module.fail_json(msg="%s: got %d; allowed: 1 or more" % (name, params[name]))
    if not params["sizes_mib"] or min(params["sizes_mib"]) < 1:
        module.fail_json(msg="sizes_mib: got %s; allowed: a non-empty list of sizes of 1 MiB or more" % params["sizes_mib"])
    # The same work in check mode, so the same lock: see the check_mode attribute.
    hold_node_lock(module, "gpuops.hardening.gpu_baseline", in_check_mode=True)

    topology = params["topology"]
    measurer = Measurer(module, worker_source())
    probe, probe_error = measurer.ask({"op": "probe"})
    checks = [plan.driver_check((probe or {}).get("driver_api_version"), probe_error)]
    numactl_path = params["numactl_path"] or module.get_bin_path("numactl")
    recommendations = dict((item.get("pci_bus_id"), item) for item in topology.get("recommendations") or [])
    for gpu in topology.get("gpus") or []:
        if probe_error:
            skip = plan.gpu_skip_reason(gpu) or probe_error
            cases, skipped_sizes = plan.copy_cases(params["sizes_mib"], params["max_memory_mib"])
            checks.extend(plan.copy_checks(gpu, params["sizes_mib"], skipped_sizes, {}, skip_reason=skip))
            checks.append(plan.link_check(gpu, None, skip_reason=skip))
            checks.extend(plan.numa_checks(gpu, max(params["sizes_mib"]), (None,) * 5, None, None, skip_reason=skip))
            checks.append(plan.startup_check(gpu, [], skip_reason=skip))
            continue
        checks.extend(measure_gpu(measurer, gpu, topology, numactl_path, recommendations.get(gpu.get("pci_bus_id"))))
    document = plan.document(params["node"], params["profile"], checks, topology)
    counts = document["summary"]
    # As audit_node does: the report writer reads each node's gpuops_audit fact.
    module.exit_json(changed=False, document=document, ansible_facts={"gpuops_audit": document},
                     msg="%d GPU(s): %d passed, %d skipped, %d warned%s" % (
                         len(topology.get("gpus") or []), counts["PASS"] - (0 if probe_error else 1), counts["SKIP"],
                         counts["WARN"], "; " + probe_error if probe_error else ""))


if __name__ == "__main__":
    main()
