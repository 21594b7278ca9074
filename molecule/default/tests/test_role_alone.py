# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A role used alone, in a play that gathered no facts, gathers them only when its platform values need them, and
changes nothing on a tuned node."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

testinfra_hosts = ["gpu-train"]

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
GATHER_TASK = "Gather the OS facts the platform values are chosen by"


def _check_alone(play):
    run = subprocess.run(
        ["ansible-playbook", os.path.join("molecule", "default", "plays", play), "--check",
         "-i", os.path.dirname(os.environ["MOLECULE_INVENTORY_FILE"]), "-l", "gpu-train"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=600, check=False,
        env=dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0"),
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert re.search(r"gpu-train\s*:\s*ok=\d+\s+changed=0\s", output), output
    assert "[WARNING]: file" not in output, output
    return output


@pytest.mark.parametrize("play, gathers", [("sysctl_alone.yml", True), ("memlock_alone.yml", False)])
def test_a_role_alone_without_gathered_facts(host, play, gathers):  # pylint: disable=unused-argument
    output = _check_alone(play)
    gathered = re.search(r"TASK \[gpuops\.hardening\.\w+ : %s\] \*+\nok: \[gpu-train\]" % GATHER_TASK, output)
    assert bool(gathered) == gathers, output
