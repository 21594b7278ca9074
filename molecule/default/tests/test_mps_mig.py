# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MPS on a GPU in MIG mode: site.yml refuses it before any change, naming
the GPU and the reason, and changes nothing; mps_allow_mig lets it run."""

from __future__ import annotations

import re
from lab_playbook import run_playbook

testinfra_hosts = ["gpu-mig"]

MIG_GPU_SET = {"mps_state": "present", "mps_gpu_sets": {"mig-0": [0]}}


def _state(host):
    """What a refused run must leave as it was."""
    files = host.check_output("find /etc/systemd/system /etc/gpuops-hardening /etc/tmpfiles.d -printf '%%p %%s\\n' "
                              "2>/dev/null | sort || true")
    return files, host.check_output("nvidia-smi --query-gpu=index,compute_mode,mig.mode.current --format=csv,noheader")


def _set_mig(host, mode):
    # This node's driver applies a MIG mode change at a GPU reset; resetting GPU 0
    # alone leaves the MIG layout of the node's other GPUs as it is.
    host.check_output("nvidia-smi -i 0 -mig %s", str(mode))
    host.check_output("nvidia-smi -i 0 -r")


def test_mps_on_a_mig_gpu_is_refused_unless_allowed(host):
    _set_mig(host, 1)
    try:
        assert host.check_output("nvidia-smi -i 0 --query-gpu=mig.mode.current --format=csv,noheader") == "Enabled"
        before = _state(host)
        rc, output = run_playbook("playbooks/site.yml", "gpu-mig", MIG_GPU_SET)
        assert rc != 0, output
        for fragment in ("GPU 0 (GPU-", "is in MIG mode", "one shared memory space", "mps_allow_mig"):
            assert fragment in output, "%r missing from:\n%s" % (fragment, output)
        # The node call checks MPS against the GPUs before any feature changes the node.
        assert re.search(r"gpu-mig\s*:\s*ok=\d+\s+changed=0\s+unreachable=0\s+failed=1", output), output
        assert _state(host) == before

        rc, output = run_playbook("molecule/default/plays/mps_alone.yml", "gpu-mig", dict(MIG_GPU_SET, mps_allow_mig=True))
        assert rc == 0, output
        assert host.service("gpuops-mps-mig-0.service").is_running
    finally:
        rc, output = run_playbook("molecule/default/plays/mps_alone.yml", "gpu-mig", {"mps_state": "absent"})
        _set_mig(host, 0)
    assert rc == 0, output
    assert not host.file("/etc/systemd/system/gpuops-mps-mig-0.service").exists
