# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every invalid input stops the run before any managed file changes.

Runs site.yml, a user's own play of three roles and the thp role alone against
one converged lab node, with one bad value at a time, and checks that the run
fails, that the message names the variable, the value and what is allowed, and
that no file under the managed directories changed.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

testinfra_hosts = ["gpu-train"]

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

# Everything the roles may write lives under these paths.
MANAGED_PATHS = (
    "/etc/fstab",
    "/etc/sysctl.d",
    "/etc/sysctl.conf",
    "/etc/security/limits.d",
    "/etc/systemd",
    "/etc/docker",
    "/etc/ansible/facts.d",
    "/usr/local/bin",
    "/usr/local/libexec",
    "/usr/local/lib/gpuops-hardening",
    "/etc/gpuops-hardening",
    "/etc/tmpfiles.d",
    "/etc/profile.d",
    "/var/lib/gpuops-hardening",
)

# (extra vars, fragments the failure message must contain). The wording of every
# rule is unit-tested (tests/unit/plugins/plugin_utils/test_role_inputs.py); these
# cases prove that each role's inputs stop a real run before anything changes.
SITE_CASES = [
    pytest.param({"gpuops_profile": "gaming"}, ["gpuops_profile", "gaming", "training, inference"], id="gpuops_profile"),
    pytest.param({"thp_defrag": "eager"}, ["thp_defrag", "eager", "defer+madvise"], id="thp_defrag"),
    pytest.param({"sysctl_settings": {"vm.swappiness": 300}},
                 ["sysctl_settings", '"vm.swappiness": 300', "vm.swappiness: an integer from 0 to 200"], id="sysctl_swappiness_300"),
    pytest.param({"sysctl_settings": {"vm.dirty_ratio": 10}}, ["sysctl_settings", '"vm.dirty_ratio": 10', "not both of a pair"],
                 id="sysctl_dirty_bytes_and_ratio"),
    pytest.param({"memlock_limit": "64K"}, ["memlock_limit", "64K", "unlimited or a positive integer"], id="memlock_limit_suffix"),
    pytest.param({"memlock_limits_domain": "bad domain"}, ["memlock_limits_domain", '"bad domain"', "everyone but root"],
                 id="memlock_limits_domain"),
]

NUMA_BINDING_CASES = [
    pytest.param({"numa_binding_nvidia_smi_timeout": 0}, ["numa_binding_nvidia_smi_timeout", "got 0", "from 1 to 600"],
                 id="numa_binding_timeout_zero"),
    pytest.param({"numa_binding_launcher_path": "bin/gpu-numa-exec"}, ["numa_binding_launcher_path", "absolute file path"],
                 id="numa_binding_relative_launcher"),
    pytest.param({"numa_binding_require_gpu": "sure"}, ["numa_binding_require_gpu", "sure", "bool"], id="numa_binding_require_gpu"),
]

# MPS on this training node: the GPU sets are checked against its GPUs in the
# validation play, before any role changes anything.
MPS_CASES = [
    pytest.param({"mps_state": "present", "mps_active_thread_percentage": 0},
                 ["mps_active_thread_percentage", "got 0", "from 1 to 100"], id="mps_thread_percentage_0"),
    pytest.param({"mps_state": "present", "mps_active_thread_percentage": 150},
                 ["mps_active_thread_percentage", "got 150", "from 1 to 100"], id="mps_thread_percentage_150"),
    pytest.param({"mps_state": "present", "mps_pinned_mem_limit": "2048"},
                 ["mps_pinned_mem_limit", '"2048"', "followed by M or G"], id="mps_pinned_limit_without_unit"),
    pytest.param({"mps_state": "present", "mps_gpu_sets": {"left": [0, 9]}},
                 ["mps_gpu_sets.left", "GPU 9 is not on this host", "7 (GPU-"], id="mps_unknown_gpu_index"),
    pytest.param({"mps_state": "present", "mps_gpu_sets": {"left": ["GPU-00000000-dead-beef-0000-000000000000"]}},
                 ["mps_gpu_sets.left", "GPU-00000000-dead-beef-0000-000000000000 is not on this host"], id="mps_unknown_gpu_uuid"),
    pytest.param({"mps_state": "present", "mps_pipe_directory": "/tmp/nvidia-mps"},
                 ["mps_pipe_directory", "/tmp/nvidia-mps", "outside /tmp"], id="mps_pipe_in_tmp"),
]

# MIG on this training node (its H100s have MIG off): the layout's form on the
# controller, the GPUs and the mig-parted config in the validation play.
MIG_CASES = [
    pytest.param({"mig_state": "present"}, ["mig_layouts", "mig_parted_file and mig_parted_config"], id="mig_nothing_declared"),
    pytest.param({"mig_state": "present", "mig_layouts": {"0": {"mig_enabled": True, "mig_devices": {"1g.10gb": -1}}}},
                 ["mig_layouts.0.mig_devices.1g.10gb", "got -1", "a count of 0 or more"], id="mig_negative_count"),
    pytest.param({"mig_state": "present", "mig_layouts": {"9": {"mig_enabled": True}}},
                 ["GPU 9 is not on this host", "nothing was changed"], id="mig_unknown_gpu"),
    pytest.param({"mig_state": "present", "mig_parted_config": "all-2g.20gb",
                  "mig_parted_file": os.path.join(REPO_ROOT, "molecule", "default", "files", "mig-parted-config.yaml")},
                 ["no config 'all-2g.20gb'", "all-1g.10gb, all-disabled, lab-mixed"], id="mig_parted_unknown_config"),
]

# The audit's inputs are checked with every other role's, so site.yml stops on them too.
AUDIT_CASES = [
    pytest.param({"audit_cuda_versions": ["14.1"]}, ["audit_cuda_versions", '"14.1"', "11.x, 12.x, 13.x"], id="audit_unknown_cuda"),
    pytest.param({"audit_save_baseline": "../etc"}, ["audit_save_baseline", '"../etc"', "letters, digits"], id="audit_baseline_path"),
    pytest.param({"gpuops_audit_fail_on_drift": True}, ["gpuops_audit_fail_on_drift", "audit_fail_on_fail"], id="audit_removed_variable"),
]

PERSISTENCED_CASES = [
    pytest.param({"persistenced_timeout": 0}, ["persistenced_timeout", "got 0", "from 1 to 600"], id="persistenced_timeout_zero"),
]


def _run(playbook, extra_vars):
    run = subprocess.run(
        [
            "ansible-playbook", playbook,
            # The whole inventory directory: the groups live in the linked lab inventory.
            "-i", os.path.dirname(os.environ["MOLECULE_INVENTORY_FILE"]),
            "-l", "gpu-train",
            "-e", json.dumps(extra_vars),
        ],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=600, check=False,
        env=dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0"),
    )
    output = run.stdout + run.stderr
    assert run.returncode != 0, output
    assert "gpu-train" in output, "the run never reached the node:\n" + output
    return output


def _assert_names(output, fragments):
    for fragment in fragments:
        assert fragment in output, "%r missing from:\n%s" % (fragment, output)


def _snapshot(host):
    paths = " ".join(MANAGED_PATHS)
    files = host.check_output("find %s -xdev -type f -exec sha256sum {} + 2>/dev/null | sort || true" % paths)
    # The GPUs too: a refused MPS or MIG run must not have touched their compute or MIG modes.
    return files, host.check_output("nvidia-smi --query-gpu=index,compute_mode,mig.mode.current,mig.mode.pending "
                                    "--format=csv,noheader")


@pytest.mark.parametrize("extra_vars, fragments", SITE_CASES + NUMA_BINDING_CASES + PERSISTENCED_CASES + MPS_CASES
                         + MIG_CASES + AUDIT_CASES)
def test_site_stops_in_its_validation_play(host, extra_vars, fragments):
    before = _snapshot(host)
    output = _run("playbooks/site.yml", extra_vars)
    _assert_names(output, fragments)
    assert "Validate every role's inputs" in output
    assert "Tune GPU nodes" not in output, "the run got past validation:\n" + output
    assert _snapshot(host) == before


def test_the_first_role_of_a_users_play_checks_the_later_roles(host):
    before = _snapshot(host)
    output = _run("molecule/default/plays/own_play.yml", {"thp_defrag": "sometimes"})
    _assert_names(output, ["thp_defrag", "sometimes"])
    assert "TASK [gpuops.hardening.sysctl : Validate the inputs of every gpuops.hardening role]" in output
    for later in ("gpuops.hardening.sysctl : Converge", "gpuops.hardening.thp :", "gpuops.hardening.memlock :"):
        assert later not in output, "%r ran:\n%s" % (later, output)
    assert _snapshot(host) == before


@pytest.mark.parametrize("extra_vars, fragments", [
    pytest.param({"gpuops_profile": "turbo"}, ["gpuops_profile", "turbo", "training, inference"], id="unknown_profile"),
    pytest.param({"thp_profile": "inference"}, ["thp_profile", "no longer an input", "gpuops_profile"], id="removed_thp_profile"),
])
def test_a_role_alone_names_a_bad_profile(host, extra_vars, fragments):
    before = _snapshot(host)
    output = _run("molecule/default/plays/thp_alone.yml", extra_vars)
    _assert_names(output, fragments)
    assert "has no attribute" not in output
    assert "Converge transparent hugepages" not in output
    assert _snapshot(host) == before
