# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Extra lab nodes outside Molecule, prepared as the Molecule lab prepares its own.

Usage: python scripts/lab_nodes.py up SPEC INVENTORY
       python scripts/lab_nodes.py down INVENTORY

SPEC is a YAML file {node name: host vars}. Each node's gpuops_gpu_profile picks
the Molecule platform with that profile (inventory/lab.yml says which), so the
node gets the same image, options and fake sysfs. `up` starts the containers,
writes INVENTORY (every node in gpu_nodes, with its vars) and runs
molecule/default/prepare.yml on them: the emulated GPUs, the stand-in Docker,
the login users and a stock server's clutter. `down` removes the nodes of
INVENTORY. Tests that need a fresh node, and the benchmark, use it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import yaml

from lab_node import REPO_ROOT, docker_run_argv, lab_platform, wait_booted

PREPARE = os.path.join(REPO_ROOT, "molecule", "default", "prepare.yml")
LAB_INVENTORY = os.path.join(REPO_ROOT, "inventory", "lab.yml")
CONNECTION_VARS = {"ansible_connection": "community.docker.docker", "ansible_python_interpreter": "/usr/bin/python3"}


def _lab_hosts(tree, inherited=None):
    """{host: vars} of an inventory tree, group vars applied."""
    hosts = {}
    merged = dict(inherited or {}, **(tree.get("vars") or {}))
    for name, host_vars in (tree.get("hosts") or {}).items():
        hosts[name] = dict(merged, **(host_vars or {}))
    for child in (tree.get("children") or {}).values():
        hosts.update(_lab_hosts(child or {}, merged))
    return hosts


def platform_for_profile(profile):
    """The Molecule platform whose lab host has this GPU profile."""
    with open(LAB_INVENTORY, encoding="utf-8") as handle:
        hosts = _lab_hosts(yaml.safe_load(handle)["all"])
    for name, host_vars in hosts.items():
        if host_vars.get("gpuops_gpu_profile") == profile:
            return lab_platform(name=name)
    raise SystemExit("no lab host in %s has gpuops_gpu_profile %s" % (LAB_INVENTORY, profile))


def _inventory_nodes(inventory):
    with open(inventory, encoding="utf-8") as handle:
        return list((yaml.safe_load(handle) or {}).get("gpu_nodes", {}).get("hosts", {}))


def remove(names):
    for name in names:
        subprocess.run(["docker", "rm", "--force", name], capture_output=True, check=False)


def prepare(inventory, limit=None):
    """molecule/default/prepare.yml on the nodes of inventory, with the checkout's collections."""
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_PIPELINING="1", ANSIBLE_FORKS="16",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO_ROOT, "playbooks", "collections"))
    argv = ["ansible-playbook", "-i", inventory, PREPARE] + (["-l", limit] if limit else [])
    done = subprocess.run(argv, cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit("prepare.yml failed on %s:\n%s%s" % (inventory, done.stdout[-6000:], done.stderr[-3000:]))


def up(spec, inventory):
    """Start, boot and prepare the nodes of spec ({name: host vars}); write their inventory."""
    remove(spec)
    for name, host_vars in spec.items():
        argv = docker_run_argv(platform_for_profile(host_vars["gpuops_gpu_profile"]), name)
        subprocess.run(argv, capture_output=True, check=True)
    for name in spec:
        wait_booted(name)
    os.makedirs(os.path.dirname(os.path.abspath(inventory)), exist_ok=True)
    with open(inventory, "w", encoding="utf-8") as handle:
        yaml.safe_dump({"gpu_nodes": {"vars": CONNECTION_VARS, "hosts": spec}}, handle, default_flow_style=False)
    prepare(inventory)


def main(argv):
    if len(argv) == 4 and argv[1] == "up":
        with open(argv[2], encoding="utf-8") as handle:
            up(yaml.safe_load(handle), argv[3])
    elif len(argv) == 3 and argv[1] == "down":
        remove(_inventory_nodes(argv[2]))
    else:
        raise SystemExit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
