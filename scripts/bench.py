# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Times the whole site.yml against the floor on labs of 1, 8 and 32 nodes, and writes a table.

Usage: python scripts/bench.py OUTPUT_DIR

For each lab size (BENCH_SIZES, default "1 8 32"; fresh nodes of scripts/bench_lab.py,
16 forks) it times, in the same run: the floor (bench/floor.yml), the first converge
and the no-op re-converge of playbooks/site.yml (medians of BENCH_REPEATS, default 3),
counts the tasks each role ran on each node in a no-op run (the bench_round_trips
callback) and times each task; then what each speed measure buys (pipelining off,
gather_subset all) and, at 32 nodes, 32 forks. On node 1 (8x H100) it times the facts
module against a bare nvidia-smi, and, on the last lab, the MIG section (bench_mig).
A no-op that changes anything fails the bench; a ratio over its target does not.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import bench_facts
import bench_lab
import bench_mig
import bench_table

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPEATS = int(os.environ.get("BENCH_REPEATS", "3"))
SIZES = [int(size) for size in os.environ.get("BENCH_SIZES", "1 8 32").split()]
FORKS = 16
WIDE_FORKS = 32
RECAP = re.compile(r"^(\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)
SITE = ["playbooks/site.yml"]
FLOOR = ["bench/floor.yml"]
FLOOR_ALL_FACTS = FLOOR + ["-e", json.dumps({"bench_gather_subset": ["all"]})]


def playbook_env(forks=FORKS, pipelining=True, round_trips_file=None):
    env = dict(os.environ, ANSIBLE_PIPELINING="1" if pipelining else "0", ANSIBLE_FORKS=str(forks), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CONFIG=os.path.join(REPO_ROOT, "ansible.cfg"),
               # The checkout's collection for plays outside playbooks/, never an installed copy.
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO_ROOT, "playbooks", "collections"))
    if round_trips_file:
        env.update(ANSIBLE_CALLBACK_PLUGINS=os.path.join(REPO_ROOT, "bench", "callback_plugins"),
                   ANSIBLE_CALLBACKS_ENABLED="bench_round_trips", BENCH_ROUND_TRIPS_FILE=round_trips_file)
    return env


def run_playbook(inventory, playbook, env=None):
    """Run a playbook (a list: path, then extra arguments); returns (seconds, total changed)."""
    start = time.monotonic()
    proc = subprocess.run(
        ["ansible-playbook", "-i", inventory, os.path.join(REPO_ROOT, playbook[0])] + playbook[1:],
        cwd=REPO_ROOT, env=env or playbook_env(), capture_output=True, text=True, check=False,
    )
    elapsed = time.monotonic() - start
    recap = RECAP.findall(proc.stdout)
    if proc.returncode != 0 or not recap or any(int(r[3]) or int(r[4]) for r in recap):
        sys.stderr.write(proc.stdout[-8000:] + proc.stderr[-4000:])
        raise SystemExit("%s failed (exit %s)" % (" ".join(playbook), proc.returncode))
    return elapsed, sum(int(r[2]) for r in recap)


def median_run(inventory, playbook, env=None, repeats=REPEATS):
    """(median seconds, changed summed over the runs)."""
    times, changed = [], 0
    for dummy in range(repeats):
        elapsed, changed_now = run_playbook(inventory, playbook, env)
        times.append(elapsed)
        changed += changed_now
    return statistics.median(times), changed


def measure_size(nodes, workdir):
    """One lab size on fresh nodes: the figures, the no-op's round trips and task times."""
    inventory = os.path.join(workdir, "inventory-%d.yml" % nodes)
    bench_lab.down(max(SIZES))
    bench_lab.up(nodes, inventory)
    round_trips_file = os.path.join(workdir, "round-trips-%d.json" % nodes)
    result = {"nodes": nodes, "forks": FORKS, "inventory": inventory}
    result["floor_s"], dummy = median_run(inventory, FLOOR)
    result["first_s"], result["first_changed"] = run_playbook(inventory, SITE)
    result["noop_s"], result["noop_changed"] = median_run(inventory, SITE, playbook_env(round_trips_file=round_trips_file))
    with open(round_trips_file, encoding="utf-8") as handle:
        result["round_trips"] = json.load(handle)
    # Before/after, one run each: what pipelining and the min subset buy.
    result["noop_no_pipelining_s"], changed = run_playbook(inventory, SITE, playbook_env(pipelining=False))
    result["noop_changed"] += changed
    result["floor_all_facts_s"], dummy = run_playbook(inventory, FLOOR_ALL_FACTS)
    if nodes >= WIDE_FORKS:
        wide = playbook_env(forks=WIDE_FORKS)
        result["wide_floor_s"], dummy = median_run(inventory, FLOOR, wide)
        result["wide_noop_s"], changed = median_run(inventory, SITE, wide)
        result["noop_changed"] += changed
    result["kinds"] = dict((name, bench_lab.kind_label(host_vars)) for name, host_vars in bench_lab.spec(nodes).items())
    if nodes == SIZES[-1]:
        # On the last lab, which has a node of each kind once it has three or more.
        result["node_call"] = node_call_timings(inventory, workdir, result["kinds"])
    return result


def node_call_timings(inventory, workdir, kinds):
    """{kind label: {feature: seconds}} of one no-op node call on the first node of each kind (bench/node_call.yml)."""
    directory = os.path.join(workdir, "node-call")
    os.makedirs(directory, exist_ok=True)
    firsts = {}
    for name, label in sorted(kinds.items(), key=lambda item: int(item[0].rsplit("-", 1)[1])):
        firsts.setdefault(label, name)
    argv_vars = ["-e", json.dumps({"bench_timings_dir": directory}), "-l", ",".join(firsts.values())]
    run_playbook(inventory, ["bench/node_call.yml"] + argv_vars)
    found = {}
    for label, name in firsts.items():
        with open(os.path.join(directory, name + ".json"), encoding="utf-8") as handle:
            found[label] = json.load(handle)
    return found


def machine():
    """CPU model, cores, RAM, kernel and load of the controller (the lab shares it)."""
    model = "unknown"
    with open("/proc/cpuinfo", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo", encoding="utf-8") as handle:
        mem_kib = int(handle.readline().split()[1])
    return {"cpu": model, "cores": os.cpu_count(), "ram_gib": round(mem_kib / 1048576.0, 1),
            "kernel": os.uname().release, "load_at_start": os.getloadavg()[0]}


def main(argv):
    output_dir = argv[1]
    started = datetime.datetime.now(datetime.timezone.utc)
    stamp = started.strftime("%Y-%m-%d %H:%M UTC")
    host = machine()
    sizes, facts, mig_floor, mig_rows, mig_failures = [], None, None, [], []
    with tempfile.TemporaryDirectory(prefix="gpuops-bench-") as workdir:
        try:
            for nodes in SIZES:
                sizes.append(measure_size(nodes, workdir))
                if facts is None:
                    facts = bench_facts.measure(sizes[-1]["inventory"], "%s-1" % bench_lab.PREFIX, playbook_env())
            last = sizes[-1]
            mig_floor, mig_rows, mig_failures = bench_mig.measure(run_playbook, median_run, last["inventory"],
                                                                  "%s-1" % bench_lab.PREFIX, FLOOR, REPO_ROOT)
        finally:
            bench_lab.down(max(SIZES))
    host["load_at_end"] = os.getloadavg()[0]
    table = bench_table.render(stamp, host, REPEATS, sizes, facts, (mig_floor, mig_rows, mig_failures))
    print(table)
    os.makedirs(output_dir, exist_ok=True)
    # Each run keeps its own table (date and sizes in the name); latest.md is the newest.
    dated = "%s-nodes-%s.md" % (started.strftime("%Y-%m-%d-%H%M"), "-".join(map(str, SIZES)))
    for name in (dated, "latest.md"):
        with open(os.path.join(output_dir, name), "w", encoding="utf-8") as handle:
            handle.write(table)
    record = {"time": stamp, "machine": host, "repeats": REPEATS, "facts": facts,
              "node_call": sizes[-1].get("node_call") if sizes else None,
              "sizes": [dict((key, value) for key, value in size.items()
                             if key not in ("inventory", "round_trips", "node_call"))
                        for size in sizes],
              "round_trips": bench_table.round_trips_by_kind(sizes[-1]) if sizes else {},
              "mig_floor_s": mig_floor,
              "mig": [{"run": row[0], "seconds": row[1], "ratio": row[3], "resets": row[4], "destroyed": row[5]}
                      for row in mig_rows]}
    with open(os.path.join(output_dir, "history.jsonl"), "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, sort_keys=True) + "\n")
    not_idempotent = ["%d nodes: %d" % (size["nodes"], size["noop_changed"]) for size in sizes if size["noop_changed"]]
    if not_idempotent:
        raise SystemExit("the no-op re-converge changed items (%s): site.yml is not idempotent" % ", ".join(not_idempotent))
    if mig_failures:
        raise SystemExit("MIG: " + "; ".join(mig_failures))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
