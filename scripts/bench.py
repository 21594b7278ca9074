# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Times the host roles and MIG changes against the floor on the bench lab and writes a table.

Usage: python scripts/bench.py INVENTORY NODES OUTPUT_DIR

The floor (fact gathering + ping), the first converge and the no-op re-converge
are measured in the same run, on the same nodes; the result is reported as the
ratio of the no-op re-converge to the floor. Repeated measurements report the
median.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import time

import bench_mig
from bench_lab import PREFIX as BENCH_PREFIX

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPEATS = 3
TARGET_RATIO = 4.0
RECAP = re.compile(r"^(\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)


HOST_ROLES = ["playbooks/site.yml", "--tags", "sysctl,thp,memlock"]
FLOOR = ["bench/floor.yml"]


def run_playbook(inventory, playbook):
    """Run a playbook (a list: path, then extra arguments); returns (seconds, total changed)."""
    env = dict(os.environ, ANSIBLE_PIPELINING="1", ANSIBLE_FORKS="16", ANSIBLE_NOCOLOR="1")
    # The checkout's collection for plays outside playbooks/ (bench/mig.yml), never an installed copy.
    env["ANSIBLE_COLLECTIONS_PATH"] = os.path.join(REPO_ROOT, "playbooks", "collections")
    start = time.monotonic()
    proc = subprocess.run(
        ["ansible-playbook", "-i", inventory, os.path.join(REPO_ROOT, playbook[0])] + playbook[1:],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False,
    )
    elapsed = time.monotonic() - start
    recap = RECAP.findall(proc.stdout)
    if proc.returncode != 0 or not recap or any(int(r[3]) or int(r[4]) for r in recap):
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit("%s failed (exit %s)" % (" ".join(playbook), proc.returncode))
    return elapsed, sum(int(r[2]) for r in recap)


def median_run(inventory, playbook):
    times = []
    changed = 0
    for dummy in range(REPEATS):
        elapsed, changed_now = run_playbook(inventory, playbook)
        times.append(elapsed)
        changed += changed_now
    return statistics.median(times), changed


def main(argv):
    inventory, nodes, output_dir = argv[1], int(argv[2]), argv[3]
    floor, dummy = median_run(inventory, FLOOR)
    first, first_changed = run_playbook(inventory, HOST_ROLES)
    noop, noop_changed = median_run(inventory, HOST_ROLES)
    ratio = noop / floor
    rows = [
        ("floor: gather_facts (min) + ping", floor, "-", 1.0, "-", "-"),
        ("first converge: site.yml --tags sysctl,thp,memlock", first, first_changed, first / floor, "-", "-"),
        ("no-op re-converge: the same", noop, noop_changed, ratio, "-", "-"),
    ]
    mig_rows, mig_failures = bench_mig.measure(run_playbook, median_run, inventory, "%s-1" % BENCH_PREFIX, floor, REPO_ROOT)
    rows += mig_rows
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Host roles benchmark",
        "",
        "%s; %d lab nodes (docker connection, pipelining on, 16 forks); median of %d runs for the floor and the no-op."
        % (stamp, nodes, REPEATS),
        "",
        "| run | seconds | changed | × floor | GPUs reset | MIG instances destroyed |",
        "|---|---:|---:|---:|---|---|",
    ]
    lines += ["| %s | %.2f | %s | %.2f | %s | %s |" % row for row in rows]
    verdict = "within" if ratio <= TARGET_RATIO else "OVER"
    lines += ["", "No-op re-converge / floor = **%.2f×** (%s the %.1f× target)." % (ratio, verdict, TARGET_RATIO)]
    lines += ["", "MIG: " + ("; ".join(mig_failures) if mig_failures else
                             "each change reset and destroyed only what differed on the GPU it was for."), ""]
    table = "\n".join(lines)
    print(table)
    os.makedirs(output_dir, exist_ok=True)
    with open(os.path.join(output_dir, "latest.md"), "w", encoding="utf-8") as handle:
        handle.write(table)
    record = {"time": stamp, "nodes": nodes, "floor_s": floor, "first_s": first, "noop_s": noop, "ratio": ratio, "noop_changed": noop_changed,
              "mig": [{"run": row[0], "seconds": row[1], "ratio": row[3], "resets": row[4], "destroyed": row[5]} for row in mig_rows]}
    with open(os.path.join(output_dir, "history.jsonl"), "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, sort_keys=True) + "\n")
    if noop_changed:
        raise SystemExit("the no-op re-converge changed %d items: the roles are not idempotent" % noop_changed)
    if mig_failures:
        raise SystemExit("MIG: " + "; ".join(mig_failures))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
