# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Markdown table of `make bench` (scripts/bench.py measures, this file only formats)."""

from __future__ import annotations

import os
import sys

import bench_facts

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "playbooks", "collections"))
from ansible_collections.gpuops.hardening.plugins.plugin_utils.node_plan import NODE_ROLES  # noqa: E402 pylint: disable=wrong-import-position

TARGET_RATIO = 2.0
SLOWEST_TASKS = 15
ROLE_ORDER = ["(play)", "validate"] + list(NODE_ROLES)


def verdict(ratio, target):
    return "within" if ratio <= target else "OVER"


def _growth(value, base):
    return "%.2f" % value if base is None else "%.2f (%.1fx)" % (value, value / base)


def size_rows(sizes):
    """Per lab size: floor, first, no-op, ratio; each figure also as a multiple of the smallest lab's."""
    lines = ["| nodes | forks | floor s | first converge s | no-op s | no-op / floor | target %.1fx |" % TARGET_RATIO,
             "|---:|---:|---:|---:|---:|---:|---|"]
    base = sizes[0]
    for size in sizes:
        scale = None if size is base else base
        ratio = size["noop_s"] / size["floor_s"]
        lines.append("| %d | %d | %s | %s | %s | %.2fx | %s |" % (
            size["nodes"], size["forks"], _growth(size["floor_s"], scale and scale["floor_s"]),
            _growth(size["first_s"], scale and scale["first_s"]), _growth(size["noop_s"], scale and scale["noop_s"]),
            ratio, verdict(ratio, TARGET_RATIO)))
        if "wide_noop_s" in size:
            ratio = size["wide_noop_s"] / size["wide_floor_s"]
            lines.append("| %d | %d | %.2f | - | %.2f | %.2fx | %s |" % (
                size["nodes"], 32, size["wide_floor_s"], size["wide_noop_s"], ratio, verdict(ratio, TARGET_RATIO)))
    return lines


def before_after_rows(sizes):
    lines = ["| nodes | measure | without s | with s | saves |", "|---:|---|---:|---:|---:|"]
    for size in sizes:
        lines.append("| %d | pipelining (site.yml no-op: off vs on) | %.2f | %.2f | %.0f%% |" % (
            size["nodes"], size["noop_no_pipelining_s"], size["noop_s"],
            100.0 * (1 - size["noop_s"] / size["noop_no_pipelining_s"])))
        lines.append("| %d | gather_subset min (floor play: all vs min) | %.2f | %.2f | %.0f%% |" % (
            size["nodes"], size["floor_all_facts_s"], size["floor_s"], 100.0 * (1 - size["floor_s"] / size["floor_all_facts_s"])))
    return lines


def facts_rows(facts):
    ratio = facts["ratio"]
    return ["| gpu_numa_facts s | nvidia-smi -q -x s | ratio | target %.1fx |" % bench_facts.TARGET_RATIO,
            "|---:|---:|---:|---|",
            "| %.3f | %.3f | %.2fx | %s |" % (facts["module_s"], facts["nvidia_smi_s"], ratio, verdict(ratio, bench_facts.TARGET_RATIO)),
            "", bench_facts.describe()]


def round_trips_by_kind(size):
    """{kind: {role: "tasks (module calls)"}} of the first node of each kind in a no-op run."""
    by_kind = {}
    for host, roles in sorted(size["round_trips"]["hosts"].items(), key=lambda item: int(item[0].rsplit("-", 1)[1])):
        kind = size["kinds"][host]
        if kind not in by_kind:
            by_kind[kind] = dict((role, "%d (%d)" % (counts["tasks"], counts["calls"])) for role, counts in roles.items())
    return by_kind


def round_trip_rows(size):
    by_kind = round_trips_by_kind(size)
    kinds = list(by_kind)
    roles = [role for role in ROLE_ORDER if any(role in counts for counts in by_kind.values())]
    lines = ["| role | " + " | ".join(kinds) + " |", "|---|" + "---:|" * len(kinds)]
    for role in roles:
        lines.append("| %s | %s |" % (role, " | ".join(by_kind[kind].get(role, "0") for kind in kinds)))
    return lines


def slowest_task_rows(size):
    tasks = sorted(size["round_trips"]["tasks"], key=lambda task: -task["seconds"])[:SLOWEST_TASKS]
    total = sum(task["seconds"] for task in size["round_trips"]["tasks"])
    per_role = {}
    for task in size["round_trips"]["tasks"]:
        per_role[task["role"]] = per_role.get(task["role"], 0.0) + task["seconds"]
    lines = ["Per role: " + ", ".join("%s %.1f s" % (role, per_role[role]) for role in ROLE_ORDER if role in per_role)
             + " (of %.1f s)." % total, "",
             "| task | role | action | nodes it ran on | s |", "|---|---|---|---:|---:|"]
    lines += ["| %s | %s | %s | %d | %.2f |" % (task["name"].replace("|", "/"), task["role"], task["action"],
                                                task["remote_hosts"], task["seconds"]) for task in tasks]
    return lines


def node_call_rows(node_call):
    """One row per feature, one column per node kind: the no-op node call's seconds (bench/node_call.yml)."""
    kinds = sorted(node_call)
    features = []
    for kind in kinds:
        features.extend(name for name in node_call[kind]["timings"] if name not in features)
    lines = ["| feature | %s |" % " | ".join(kinds), "|---|" + "---:|" * len(kinds)]
    for name in features:
        cells = [node_call[kind]["timings"].get(name) for kind in kinds]
        lines.append("| %s | %s |" % (name, " | ".join("-" if cell is None else "%.3f" % cell for cell in cells)))
    lines.append("| **the call's features, together** | %s |" % " | ".join(
        "%.3f" % sum(node_call[kind]["timings"].values()) for kind in kinds))
    return lines


def render(stamp, host, repeats, sizes, facts, mig):
    """The markdown table; mig: (floor of the MIG node alone, rows, failures) of bench_mig.measure."""
    mig_floor, mig_rows, mig_failures = mig
    largest = sizes[-1]
    lines = [
        "# site.yml benchmark", "",
        "%s on %s, %d cores, %.1f GiB RAM, kernel %s; load average %.1f at the start, %.1f at the end. The controller "
        "and every lab node share these cores, and any other work on the machine shows in the load at the start: "
        "seconds are noisy, so compare ratios measured in the same run." % (
            stamp, host["cpu"], host["cores"], host["ram_gib"], host["kernel"], host["load_at_start"], host["load_at_end"]),
        "",
        "Lab nodes: scripts/lab_nodes.py containers with emulated GPUs, kinds in rotation: %s. Docker connection, "
        "pipelining on. Floor: bench/floor.yml (setup with the min subset plus ping). "
        "Floor and no-op: median of %d runs; first converge and the before/after rows: one run."
        % (", ".join(sorted(set(largest["kinds"].values()))), repeats),
        "", "## Whole site.yml against the floor", "",
        "In brackets: the figure as a multiple of the %d-node lab's." % sizes[0]["nodes"], "",
    ]
    lines += size_rows(sizes)
    lines += ["", "## What each speed measure buys (same run)", ""] + before_after_rows(sizes)
    if facts:
        lines += ["", "## Facts module against one nvidia-smi", ""] + facts_rows(facts)
    lines += ["", "## Round trips per role in a no-op run (%d-node lab)" % largest["nodes"], "",
              "Tasks that ran on the node (first node of each kind); in brackets, module calls (a loop's items "
              "each count). Not counted: skipped tasks and controller-side actions (set_fact, assert, debug, fail, "
              "meta, include_*/import_*, include_vars, validate_argument_spec, validate_inputs). (play) is a task "
              "outside the roles.", ""]
    lines += round_trip_rows(largest)
    lines += ["", "## Where a no-op run's time goes (%d-node lab, last no-op run, slowest tasks)" % largest["nodes"], ""]
    lines += slowest_task_rows(largest)
    if largest.get("node_call"):
        lines += ["", "## The node call by feature (no-op, first node of each kind, %d-node lab)" % largest["nodes"], "",
                  "Seconds inside the node module (bench/node_call.yml, timings: true), after the validation play; "
                  "the task around it adds the connection, the module's transfer and Python's start.", ""]
        lines += node_call_rows(largest["node_call"])
    if mig_rows:
        lines += ["", "## MIG layout changes (node 1 of the %d-node lab, emulated 8x H100; its own floor %.2f s)"
                  % (largest["nodes"], mig_floor), "",
                  "| run | seconds | changed | x floor | GPUs reset | MIG instances destroyed |", "|---|---:|---:|---:|---|---|"]
        lines += ["| %s | %.2f | %s | %.2f | %s | %s |" % row for row in mig_rows]
        lines += ["", "MIG: " + ("; ".join(mig_failures) if mig_failures else
                                 "each change reset and destroyed only what differed on the GPU it was for.")]
    return "\n".join(lines) + "\n"
