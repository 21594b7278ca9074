# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the GPU baseline measures on a node, why it skips a figure, and its figures as audit checks.

Pure functions: the module (plugins/modules/gpu_baseline.py) runs the fresh
processes and hands their answers here. Each figure becomes an audit check in the
area ``baseline`` (the keys of the audit's checks), so the audit's report, its
named baselines and their comparison show the figures unchanged. docs/baseline.md
documents the ids and verdicts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.module_utils.baseline_stats import (
    MIB,
    bandwidths,
    figure_text,
    ratio,
    size_label,
    summarize,
)

AREA = "baseline"
PASS, WARN, SKIP = "PASS", "WARN", "SKIP"
DIRECTIONS = (("h2d", "host to device"), ("d2h", "device to host"))
MEMORIES = ("pinned", "pageable")
DOCUMENT_SCHEMA_VERSION = 1
# The longest the copies go on while the PCIe link is read under load, and the share of the timeout it may take.
LINK_READ_SECONDS = 10
LINK_READ_SHARE = 0.25
# What to check when the link runs below its generation or width under load.
LINK_FIX = "reseat the GPU, check its riser and cabling, and the slot's PCIe generation setting in the BIOS"


def check(check_id, title, verdict, expected, actual, reason):
    """One check with the audit's keys (plugins/plugin_utils/audit_checks.py CHECK_KEYS), every value text."""
    return {"id": check_id, "area": AREA, "title": title, "verdict": verdict, "expected": expected,
            "actual": actual, "reason": reason}


def gpu_prefix(gpu):
    return "baseline.gpu%s" % gpu.get("index")


def gpu_skip_reason(gpu):
    """Why no figure of this GPU can be measured, or None."""
    if gpu.get("mig_mode") == "Enabled":
        return ("MIG is on: CUDA uses only its MIG instances there, and the baseline measures whole GPUs, so it skips "
                "this GPU rather than one instance; measure with MIG off")
    if not gpu.get("pci_bus_id"):
        return "nvidia-smi gave no PCI bus id for this GPU, so the driver API cannot open it"
    return None


def copy_cases(sizes_mib, max_memory_mib):
    """([(direction, memory, bytes)], {size in MiB: why it is skipped}) for the sizes within the memory bound."""
    cases, skipped = [], {}
    for size in sizes_mib:
        if size > max_memory_mib:
            skipped[size] = "%s is above baseline_max_memory_mib (%d MiB)" % (size_label(size * MIB), max_memory_mib)
            continue
        for direction, _words in DIRECTIONS:
            for memory in MEMORIES:
                cases.append((direction, memory, size * MIB))
    return cases, skipped


def _cpu_nodes(topology):
    return [node for node in topology.get("numa_nodes") or [] if node.get("has_cpu")]


def numa_plan(gpu, topology, numactl_path, recommendation=None):
    """(local argv, remote argv, local node, remote node, None), or Nones and why the comparison is skipped.

    The local binding is the facts module's recommendation for the GPU; the remote
    node is the CPU node farthest from it by the kernel's distance table.
    """
    nothing = (None, None, None, None)
    if not numactl_path:
        return nothing + ("numactl is not installed (the numa_binding role installs it)",)
    cpu_nodes = _cpu_nodes(topology)
    if len(cpu_nodes) < 2:
        return nothing + ("one NUMA node with CPUs only: there is no remote node to compare with",)
    local = gpu.get("numa_node")
    if local is None:
        return nothing + ("the GPU reports no NUMA node (sysfs numa_node -1), so no node is local to it",)
    ids = [node.get("id") for node in topology.get("numa_nodes") or []]
    by_id = dict((node.get("id"), node) for node in topology.get("numa_nodes") or [])
    if local not in [node.get("id") for node in cpu_nodes]:
        return nothing + ("the GPU's NUMA node %s has no CPUs to run the copy from" % local,)
    distances = by_id[local].get("distances") or []

    def distance(node_id):
        position = ids.index(node_id)
        return distances[position] if position < len(distances) else 0

    remotes = sorted((node.get("id") for node in cpu_nodes if node.get("id") != local), key=lambda node_id: (-distance(node_id), node_id))
    remote = remotes[0]
    local_args = list((recommendation or {}).get("numactl_args") or ["--cpunodebind=%s" % local, "--membind=%s" % local])
    remote_args = ["--cpunodebind=%s" % remote, "--membind=%s" % remote]
    return [numactl_path] + local_args, [numactl_path] + remote_args, local, remote, None


def copy_checks(gpu, sizes_mib, skipped_sizes, seconds, skip_reason=None, error=None):
    """The copy figures of one GPU, and pinned over pageable for host to device at the largest size measured."""
    prefix, found = gpu_prefix(gpu), []
    summaries = {}
    for size in sizes_mib:
        for direction, words in DIRECTIONS:
            for memory in MEMORIES:
                check_id = "%s.%s.%s.%dMiB" % (prefix, direction, memory, size)
                title = "GPU %s %s %s copy, %s" % (gpu.get("index"), memory, words, size_label(size * MIB))
                key = "%s/%s/%d" % (direction, memory, size * MIB)
                why = skip_reason or skipped_sizes.get(size)
                if why:
                    found.append(check(check_id, title, SKIP, "measured", "not measured", why))
                elif error:
                    found.append(check(check_id, title, WARN, "measured", "not measured", error))
                elif key in seconds:
                    summary = summarize(bandwidths(size * MIB, seconds[key]))
                    summaries[key] = summary
                    found.append(check(check_id, title, PASS, "measured", figure_text(summary, "GB/s"),
                                       "median of %d timed cuMemcpy%s calls after one warm-up" % (
                                           summary["runs"], "HtoD" if direction == "h2d" else "DtoH")))
    found.append(_pinned_over_pageable(gpu, sizes_mib, skipped_sizes, summaries, skip_reason or error))
    return found


def _pinned_over_pageable(gpu, sizes_mib, skipped_sizes, summaries, why):
    check_id = "%s.pinned_over_pageable" % gpu_prefix(gpu)
    both = set(key.split("/")[2] for key in summaries if key.startswith("h2d/pinned/")) & set(
        key.split("/")[2] for key in summaries if key.startswith("h2d/pageable/"))
    measured = [size for size in sizes_mib if size not in skipped_sizes and "%d" % (size * MIB) in both]
    title = "GPU %s pinned \u00f7 pageable, host to device" % gpu.get("index")
    if not measured:
        return check(check_id, title, SKIP, "measured", "not measured", why or "no size was measured")
    size = max(measured)
    value = ratio(summaries["h2d/pinned/%d" % (size * MIB)], summaries["h2d/pageable/%d" % (size * MIB)])
    return check(check_id, title, PASS, "measured", "%.2fx at %s" % (value, size_label(size * MIB)),
                 "medians of pinned and pageable host-to-device bandwidth at the largest size measured")


def numa_checks(gpu, size_mib, plan, local_seconds, remote_seconds, skip_reason=None, local_error=None, remote_error=None):
    """Pinned host-to-device copies from the GPU's NUMA node and from the farthest one, and their ratio."""
    prefix, index = gpu_prefix(gpu), gpu.get("index")
    _local_argv, _remote_argv, local, remote, plan_reason = plan
    why = skip_reason or plan_reason
    found, summaries = [], {}
    for side, node, seconds, error in (("local", local, local_seconds, local_error), ("remote", remote, remote_seconds, remote_error)):
        check_id = "%s.numa.%s" % (prefix, side)
        title = "GPU %s pinned host to device, %s from a %s NUMA node" % (index, size_label(size_mib * MIB), side)
        if why:
            found.append(check(check_id, title, SKIP, "measured", "not measured", why))
        elif error or not seconds:
            found.append(check(check_id, title, WARN, "measured", "not measured", error or "no answer"))
        else:
            summaries[side] = summarize(bandwidths(size_mib * MIB, seconds))
            found.append(check(check_id, title, PASS, "measured", figure_text(summaries[side], "GB/s"),
                               "process bound with numactl --cpunodebind=%s --membind=%s" % (node, node)))
    title = "GPU %s local \u00f7 remote NUMA node, pinned host to device" % index
    value = ratio(summaries.get("local"), summaries.get("remote"))
    if value is None:
        verdict = SKIP if why else WARN
        found.append(check("%s.numa.local_over_remote" % prefix, title, verdict, "measured", "not measured",
                           why or "a side was not measured"))
    else:
        found.append(check("%s.numa.local_over_remote" % prefix, title, PASS, "measured",
                           "%.2fx (node %s over node %s)" % (value, local, remote), "medians of the two figures"))
    return found


def link_read_seconds(timeout):
    """How long the copies may go on for the link read: bounded by LINK_READ_SECONDS and a share of the timeout,
    so the copy process stays within it."""
    return max(1.0, min(float(LINK_READ_SECONDS), timeout * LINK_READ_SHARE))


def link_check_id(index):
    """The id of GPU <index>'s link check; the audit's idle pcie_gen SKIP names it."""
    return "%s.pcie_link_under_load" % gpu_prefix({"index": index})


def _link_text(generation, width):
    return "Gen%s x%s" % (generation, width)


def link_check(gpu, outcome, skip_reason=None, error=None):
    """The GPU's PCIe link as NVML read it while pinned host-to-device copies ran (cuda_driver.LinkUnderLoad):
    PASS at its maximum generation and width, WARN below either. An idle link may lower its generation to save
    power; under load it must not."""
    check_id = link_check_id(gpu.get("index"))
    title = "GPU %s PCIe link under load" % gpu.get("index")
    if skip_reason:
        return check(check_id, title, SKIP, "read under load", "not read", skip_reason)
    if error or not outcome:
        return check(check_id, title, WARN, "read under load", "not read", error or "no answer")
    if not outcome.get("ok"):
        verdict = SKIP if outcome.get("unsupported") else WARN
        return check(check_id, title, verdict, "read under load", "not read", outcome.get("error") or "no answer")
    link = outcome["link"]
    expected = _link_text(link["gen_max"], link["width_max"])
    actual = _link_text(link["gen_current"], link["width_current"])
    during = "read during back-to-back pinned host-to-device copies of %s (%d copies; the read began after copy %d)" % (
        size_label(outcome.get("bytes") or 0), outcome["copies"], outcome["copies_before"])
    if link["gen_current"] >= link["gen_max"] and link["width_current"] >= link["width_max"]:
        return check(check_id, title, PASS, expected, actual,
                     "the link runs at its generation and width under load; " + during)
    return check(check_id, title, WARN, expected, actual, "under load the link runs at %s, below its %s: %s; %s" % (
        actual, expected, LINK_FIX, during))


def startup_check(gpu, seconds, skip_reason=None, error=None):
    """Time to the first CUDA context (cuInit and the primary context) in a fresh process: what persistence mode saves."""
    check_id = "%s.startup" % gpu_prefix(gpu)
    title = "GPU %s time to first CUDA context" % gpu.get("index")
    if skip_reason:
        return check(check_id, title, SKIP, "measured", "not measured", skip_reason)
    if error or not seconds:
        return check(check_id, title, WARN, "measured", "not measured", error or "no answer")
    summary = summarize(seconds)
    return check(check_id, title, PASS, "measured", figure_text(summary, "ms", scale=1000.0, digits=1),
                 "cuInit to a current primary context in %d fresh processes; persistence mode is %s" % (
                     summary["runs"], gpu.get("persistence_mode") or "unknown"))


def driver_check(version, error):
    """Whether libcuda answered at all: the reason every figure is skipped when it did not."""
    title = "CUDA driver API (libcuda.so.1) answers"
    if error:
        return check("baseline.driver_api", title, SKIP, "loaded", "not loaded", error)
    return check("baseline.driver_api", title, PASS, "loaded", "CUDA %d.%d" % (version // 1000, (version % 1000) // 10),
                 "cuInit and cuDriverGetVersion in a fresh process")


def summary(checks):
    counts = dict((verdict, 0) for verdict in ("FAIL", "WARN", "PASS", "SKIP"))
    for item in checks:
        counts[item["verdict"]] += 1
    return counts


def document(node, profile, checks, topology, error=None):
    """The node's figures as an audit document (plugins/plugin_utils/audit_document.py node_document)."""
    topology = topology or {}
    return {
        "schema_version": DOCUMENT_SCHEMA_VERSION, "node": node, "profile": profile, "error": error,
        # The baseline measures; it judges no readiness (the audit's hardware area does).
        "readiness": {"verdict": None, "reasons": [error or "the GPUs' health was not read"]},
        "summary": summary(checks), "checks": checks,
        "driver": {"driver_version": topology.get("driver_version"), "cuda_version": topology.get("cuda_version")},
        "topology": topology,
    }
