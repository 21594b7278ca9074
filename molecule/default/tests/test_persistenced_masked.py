# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A masked nvidia-persistenced.service: the role refuses it, naming the mask and
changing nothing, and unmasks it with persistenced_unmask: true."""

from __future__ import annotations

import os
import subprocess

testinfra_hosts = ["gpu-mig"]

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
UNIT = "nvidia-persistenced.service"
MASK = "/etc/systemd/system/nvidia-persistenced.service"


def _run_role(extra_vars):
    run = subprocess.run(
        ["ansible-playbook", "molecule/default/plays/persistenced_alone.yml",
         "-i", os.path.dirname(os.environ["MOLECULE_INVENTORY_FILE"]), "-l", testinfra_hosts[0], "-e", extra_vars],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, check=False,
        env=dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0"),
    )
    return run.returncode, run.stdout + run.stderr


def _snapshot(host):
    """What a refusing run must leave as it was: the unit files and the running daemon."""
    files = host.check_output("find /etc/systemd/system /lib/systemd/system -printf %s | sort", "%p %l %s %T@\\n")
    return files, host.check_output("systemctl show --property=MainPID,ActiveState %s", UNIT)


def test_masked_unit_is_refused_then_unmasked_when_allowed(host):
    host.check_output("systemctl mask %s", UNIT)
    try:
        before = _snapshot(host)
        rc, output = _run_role('{"persistenced_unmask": false}')
        assert rc != 0, output
        assert "masked (%s -> /dev/null), nothing changed" % MASK in output, output
        assert _snapshot(host) == before
        rc, output = _run_role('{"persistenced_unmask": true}')
        assert rc == 0, output
        assert "changed=1" in output, output
        assert not host.file(MASK).exists
        assert host.service(UNIT).is_running
    finally:
        # Leave the node as converged, whatever failed above.
        host.run("systemctl unmask %s && systemctl start %s", UNIT, UNIT)
