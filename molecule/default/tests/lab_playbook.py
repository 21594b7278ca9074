# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Runs a playbook of the checkout against lab nodes from a test."""

from __future__ import annotations

import json
import re
import os
import subprocess
import textwrap

import yaml

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def _test_env():
    """The environment of a test's own run: never recorded as Molecule's check step, even with --check."""
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    env.pop("GPUOPS_CHECK_RECAP", None)
    return env


def run_playbook(playbook, limit, extra_vars=None, timeout=600, flags=(), env=None):
    """(returncode, output) of ansible-playbook [FLAGS] PLAYBOOK (relative to the checkout) on the hosts in limit;
    env adds to the run's environment (Ansible settings)."""
    argv = ["ansible-playbook"] + list(flags) + [
        playbook,
        # The whole inventory directory: the groups live in the linked lab inventory.
        "-i", os.path.dirname(os.environ["MOLECULE_INVENTORY_FILE"]), "-l", limit]
    if extra_vars:
        argv += ["-e", json.dumps(extra_vars)]
    run = subprocess.run(argv, cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout, check=False,
                         env=dict(_test_env(), **(env or {})))
    return run.returncode, run.stdout + run.stderr


def task_output(output, task, hostname):
    """What the run printed for hostname under TASK [task], from its status line to the next host's or task's.

    A task name the play uses twice (a role's check-mode pass under another condition) gives the first
    run that was not skipped there, or else the first skip; None when the host is not under that name.
    """
    printed = []
    for block in output.split("TASK [%s]" % task)[1:]:
        block = block.split("\nTASK [", 1)[0]
        found = re.search(r"^(ok|changed|skipping|failed|fatal): \[%s\]" % re.escape(hostname), block, re.M)
        if found:
            rest = block[found.start():]
            following = re.search(r"^(ok|changed|skipping|failed|fatal|included): \[", rest[1:], re.M)
            printed.append(rest if following is None else rest[:following.start() + 1])
    ran = [text for text in printed if not text.startswith("skipping")]
    return (ran or printed or [None])[0]


def task_status(output, task, hostname):
    """ok, changed, skipping, ... as the run printed it for hostname under TASK [task] (None when it is not there)."""
    printed = task_output(output, task, hostname)
    return None if printed is None else printed.split(":", 1)[0]


# The one node call of site.yml, mig.yml, mps.yml and of each node role used alone.
NODE_TASK = "gpuops.hardening.validate : Converge the node's features in one call"


def node_result(output, hostname):
    """The node call's result for hostname, from a run with -v (its YAML result format); None when it did not run."""
    printed = task_output(output, NODE_TASK, hostname)
    if printed is None or "=>" not in printed.split("\n", 1)[0]:
        return None
    lines = printed.split("\n")
    body = [lines[0].partition("=>")[2]] if lines[0].partition("=>")[2].strip() else []
    for line in lines[1:]:
        if line.strip() and not line.startswith(" "):
            break  # the result ends where unindented output starts (a warning, the next host)
        body.append(line)
    return yaml.safe_load(textwrap.dedent("\n".join(body)))


def feature_status(output, feature, hostname):
    """ok or changed, as the node call's result says for one of its features (run with -v); None when absent."""
    result = node_result(output, hostname) or {}
    found = (result.get("features") or {}).get(feature)
    if found is None:
        return None
    return "failed" if found.get("failed") else ("changed" if found.get("changed") else "ok")
