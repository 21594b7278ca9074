# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab node the execution environment's tests run against, and the host venv's playbook runs.

The node is the Molecule lab's first platform (scripts/lab_node.py: gpu-train, a
DGX H100-class node) started as a container of the caller's name, with the
emulated GPU tools molecule/default/prepare.yml installs, and inventory/lab.yml's
variables for gpu-train.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO_ROOT, "scripts"))
import lab_node  # noqa: E402 pylint: disable=wrong-import-position

HOST = "gpu-train"
LAB_INVENTORY = os.path.join(REPO_ROOT, "inventory", "lab.yml")
BIN = os.path.dirname(sys.executable)
# The repository's ansible.cfg settings that matter here, for runs without it (the EE's).
SETTINGS = {"ANSIBLE_PIPELINING": "1", "ANSIBLE_NOCOLOR": "1", "ANSIBLE_CALLBACK_RESULT_FORMAT": "json",
            "ANSIBLE_INTERPRETER_PYTHON": "auto_silent", "ANSIBLE_RETRY_FILES_ENABLED": "0"}
RECAP = re.compile(r"^%s\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)" % re.escape(HOST), re.M)


def recap(run):
    found = RECAP.findall(run.stdout)
    assert len(found) == 1, "no recap for %s:\n%s%s" % (HOST, run.stdout[-3000:], run.stderr[-3000:])
    return dict(zip(("ok", "changed", "unreachable", "failed"), map(int, found[0])))


def succeeded(run):
    counts = recap(run)
    assert run.returncode == 0 and counts["failed"] == 0 and counts["unreachable"] == 0, run.stdout[-5000:]
    return counts


def host_playbook(node_inventory, playbook, *args, env=None):
    """ansible-playbook of the host venv (the oldest supported ansible-core) on the checkout's collection."""
    return subprocess.run([os.path.join(BIN, "ansible-playbook"), "-i", LAB_INVENTORY, "-i", node_inventory,
                           "-l", HOST, playbook] + list(args),
                          cwd=REPO_ROOT, env=dict(os.environ, **SETTINGS, **(env or {})),
                          capture_output=True, text=True, check=False)


@contextlib.contextmanager
def prepared_node(work, container):
    """gpu-train as the container CONTAINER, prepared; yields the inventory (in WORK) that points gpu-train at it."""
    os.chmod(str(work), 0o755)
    node_inventory = os.path.join(str(work), "ee-node.yml")
    with open(node_inventory, "w", encoding="utf-8") as handle:
        handle.write("all:\n  hosts:\n    %s:\n      ansible_host: %s\n" % (HOST, container))
    os.chmod(node_inventory, 0o644)
    platform = lab_node.lab_platform()
    assert platform["name"] == HOST
    subprocess.run(["docker", "rm", "--force", container], capture_output=True, check=False)
    try:
        started = subprocess.run(lab_node.docker_run_argv(platform, container), capture_output=True, text=True,
                                 check=False)
        assert started.returncode == 0, started.stderr
        lab_node.wait_booted(container)
        succeeded(host_playbook(node_inventory, os.path.join(REPO_ROOT, "molecule", "default", "prepare.yml"),
                                env={"MOLECULE_EPHEMERAL_DIRECTORY": str(work)}))
        yield node_inventory
    finally:
        subprocess.run(["docker", "rm", "--force", container], capture_output=True, check=False)
