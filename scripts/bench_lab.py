# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Starts and removes the bench lab: N containers of the Molecule lab node.

Usage: python scripts/bench_lab.py up NODES INVENTORY
       python scripts/bench_lab.py down NODES

Each container is the lab node of molecule/default/molecule.yml (scripts/lab_node.py).
`up` writes an inventory of the nodes, alternating the training and inference
profiles, and waits until systemd in each has booted.
"""

from __future__ import annotations

import os
import subprocess
import sys

import yaml

from lab_node import docker_run_argv, lab_platform, wait_booted

PREFIX = "gpuops-bench"


def node_names(nodes):
    return ["%s-%d" % (PREFIX, number) for number in range(1, nodes + 1)]


def down(nodes):
    for name in node_names(nodes):
        subprocess.run(["docker", "rm", "--force", name], capture_output=True, check=False)


def up(nodes, inventory):
    platform = lab_platform()
    down(nodes)
    hosts = {}
    for number, name in enumerate(node_names(nodes), start=1):
        subprocess.run(docker_run_argv(platform, name), capture_output=True, check=True)
        hosts[name] = {"gpuops_profile": "training" if number % 2 else "inference"}
    for name in hosts:
        wait_booted(name)
    os.makedirs(os.path.dirname(inventory), exist_ok=True)
    with open(inventory, "w", encoding="utf-8") as handle:
        yaml.safe_dump({"gpu_nodes": {
            "vars": {"ansible_connection": "community.docker.docker", "ansible_python_interpreter": "/usr/bin/python3"},
            "hosts": hosts,
        }}, handle, default_flow_style=False)


def main(argv):
    if len(argv) == 4 and argv[1] == "up":
        up(int(argv[2]), argv[3])
    elif len(argv) == 3 and argv[1] == "down":
        down(int(argv[2]))
    else:
        raise SystemExit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
