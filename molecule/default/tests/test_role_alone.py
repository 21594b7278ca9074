# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A role used alone, in a play that gathered no facts, finds its platform variables and changes nothing on a tuned node."""

from __future__ import annotations

import os
import re
import subprocess

testinfra_hosts = ["gpu-train"]

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def test_memlock_alone_without_gathered_facts(host):  # pylint: disable=unused-argument
    run = subprocess.run(
        ["ansible-playbook", "molecule/default/plays/memlock_alone.yml", "--check",
         "-i", os.path.dirname(os.environ["MOLECULE_INVENTORY_FILE"]), "-l", "gpu-train"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=600, check=False,
        env=dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0"),
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "Gather the OS facts the platform variables need" in output
    assert re.search(r"gpu-train\s*:\s*ok=\d+\s+changed=0\s", output), output
