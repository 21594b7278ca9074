# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the reliability tests share: their own lab nodes and playbook runs of the checkout.

Each test module starts the nodes it needs (scripts/lab_nodes.py: the Molecule
lab node with emulated GPUs, prepared as Molecule prepares it) under names of
its own, so that modules never disturb each other's nodes.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO_ROOT, "scripts"))
# lab_gpus: the emulated GPUs as Molecule's tests read them.
sys.path.insert(0, os.path.join(REPO_ROOT, "molecule", "default", "tests"))
import lab_nodes  # noqa: E402 pylint: disable=wrong-import-position

SITE = "playbooks/site.yml"
RECAP = re.compile(r"^(\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)


def start_nodes(spec, directory):
    """Start and prepare the nodes of spec ({name: host vars}); the path of their inventory."""
    inventory = os.path.join(str(directory), "inventory.yml")
    lab_nodes.up(spec, inventory)
    return inventory


def stop_nodes(spec):
    lab_nodes.remove(spec)


def playbook_env(**extra):
    """The environment of a run: the checkout's collection, never an installed copy; no colour."""
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", ANSIBLE_PIPELINING="1",
               ANSIBLE_CONFIG=os.path.join(REPO_ROOT, "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO_ROOT, "playbooks", "collections"))
    env.pop("GPUOPS_CHECK_RECAP", None)
    env.update(extra)
    return env


def playbook_argv(inventory, playbook=SITE, limit=None, extra_vars=None, flags=()):
    argv = ["ansible-playbook"] + list(flags) + [playbook, "-i", inventory]
    if limit:
        argv += ["-l", limit]
    if extra_vars:
        argv += ["-e", json.dumps(extra_vars)]
    return argv


def run_playbook(inventory, playbook=SITE, limit=None, extra_vars=None, flags=(), timeout=900):
    """(returncode, output) of ansible-playbook [FLAGS] PLAYBOOK (relative to the checkout)."""
    done = subprocess.run(playbook_argv(inventory, playbook, limit, extra_vars, flags), cwd=REPO_ROOT,
                          env=playbook_env(), capture_output=True, text=True, timeout=timeout, check=False)
    return done.returncode, done.stdout + done.stderr


def recap(output, host):
    """{ok, changed, unreachable, failed} of host's PLAY RECAP line; {} when the run has none."""
    for found in RECAP.finditer(output):
        if found.group(1) == host:
            return dict(zip(("ok", "changed", "unreachable", "failed"), (int(n) for n in found.groups()[1:])))
    return {}


def docker_exec(node, *argv, check=True, timeout=120):
    """stdout of a command run as root on a node."""
    done = subprocess.run(["docker", "exec", node] + list(argv), capture_output=True, text=True,
                          timeout=timeout, check=False)
    if check and done.returncode != 0:
        raise AssertionError("%s: %s failed (%d): %s%s" % (node, " ".join(argv), done.returncode, done.stdout, done.stderr))
    return done.stdout


class Node:
    """What lab_gpus needs of a testinfra host: check_output with shell-quoted arguments."""

    def __init__(self, name):
        self.name = name

    def check_output(self, command, *args):
        return docker_exec(self.name, "sh", "-c", command % tuple(shlex.quote(str(a)) for a in args)).strip()
