# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every invalid input stops site.yml before any managed file changes.

Runs site.yml against one converged lab node with one bad value at a time and
checks that the run fails, that the message names the variable, the value and
what is allowed, and that no file under the managed directories changed.
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
)

# (extra vars, fragments the failure message must contain)
THP_CASES = [
    pytest.param({"thp_profile": "gaming"}, ["thp_profile", '"gaming"', "training, inference"], id="thp_profile"),
    pytest.param({"thp_enabled": "sometimes"}, ["thp_enabled", '"sometimes"', "always, madvise, never"], id="thp_enabled"),
    pytest.param({"thp_defrag": "eager"}, ["thp_defrag", '"eager"', "defer+madvise"], id="thp_defrag"),
    pytest.param({"thp_khugepaged_defrag": "maybe"}, ["thp_khugepaged_defrag", '"maybe"', "true or false"], id="thp_khugepaged_defrag"),
    pytest.param({"thp_cmdline_conflict_action": "panic"}, ["thp_cmdline_conflict_action", '"panic"', "warn, fail, ignore"], id="thp_conflict_action"),
    pytest.param({"gpuops_profile": "gaming"}, ["gpuops_profile", '"gaming"', "training, inference"], id="gpuops_profile"),
]

SYSCTL_CASES = [
    pytest.param({"sysctl_profile": "gaming"}, ["sysctl_profile", '"gaming"', "training, inference"], id="sysctl_profile"),
    pytest.param({"sysctl_settings": {"vm.swappiness": 300}},
                 ["sysctl_settings", '"vm.swappiness": 300', "vm.swappiness: an integer from 0 to 200"], id="sysctl_swappiness_300"),
    pytest.param({"sysctl_settings": "vm.swappiness=0"}, ["sysctl_settings", '"vm.swappiness=0"', "a mapping"], id="sysctl_settings_not_a_dict"),
    pytest.param({"sysctl_settings": {"vm.swappiness": {"value": 0}}},
                 ["sysctl_settings", '{"vm.swappiness": {"value": 0}}', "integers or one-line strings"], id="sysctl_setting_value_a_dict"),
    pytest.param({"sysctl_settings": {"net.ipv4.conf.*.rp_filter": 1}},
                 ["sysctl_settings", '["net.ipv4.conf.*.rp_filter"]', "no globs"], id="sysctl_setting_glob_key"),
    pytest.param({"sysctl_settings": {"vm.dirty_ratio": 10}},
                 ["sysctl_settings", '"vm.dirty_ratio": 10', "not both of a pair"], id="sysctl_dirty_bytes_and_ratio"),
    pytest.param({"sysctl_boot_conflict_action": "panic"},
                 ["sysctl_boot_conflict_action", '"panic"', "warn, fail, ignore"], id="sysctl_boot_conflict_action"),
    pytest.param({"sysctl_swapoff_margin_mib": -512},
                 ["sysctl_swapoff_margin_mib", "got -512", "an integer of at least 0"], id="sysctl_negative_margin"),
    pytest.param({"sysctl_disable_swap": "maybe"}, ["sysctl_disable_swap", '"maybe"', "true or false"], id="sysctl_disable_swap"),
    pytest.param({"sysctl_swapoff_force": "yes please"},
                 ["sysctl_swapoff_force", '"yes please"', "true or false"], id="sysctl_swapoff_force"),
]

MEMLOCK_CASES = [
    pytest.param({"memlock_limit": "abc"}, ["memlock_limit", '"abc"', "unlimited or a positive integer"], id="memlock_limit_text"),
    pytest.param({"memlock_limit": 0}, ["memlock_limit", "got 0;", "unlimited or a positive integer"], id="memlock_limit_zero"),
    pytest.param({"memlock_limit": -5}, ["memlock_limit", "got -5;", "unlimited or a positive integer"], id="memlock_limit_negative"),
    pytest.param({"memlock_limit": "64K"}, ["memlock_limit", '"64K"', "unlimited or a positive integer"], id="memlock_limit_suffix"),
    pytest.param({"memlock_limit": 9007199254740992}, ["memlock_limit", "got 9007199254740992;"], id="memlock_limit_too_big"),
    pytest.param({"memlock_service_units": "docker.service"}, ["memlock_service_units", '"docker.service"', "a list of service unit"],
                 id="memlock_units_not_a_list"),
    pytest.param({"memlock_service_units": ["docker"]}, ["memlock_service_units", '["docker"]', "a list of service unit"], id="memlock_units_not_services"),
    pytest.param({"memlock_limits_domain": "bad domain"}, ["memlock_limits_domain", '"bad domain"', "everyone but root"], id="memlock_limits_domain"),
    pytest.param({"memlock_docker_daemon_json": "sometimes"}, ["memlock_docker_daemon_json", '"sometimes"', "auto, always, never"],
                 id="memlock_docker_daemon_json"),
    pytest.param({"memlock_restart_services": "maybe"}, ["memlock_restart_services", '"maybe"', "true or false"], id="memlock_restart_services"),
    pytest.param({"memlock_login_sessions": "yes"}, ["memlock_login_sessions", '"yes"', "true or false"], id="memlock_login_sessions"),
]

NUMA_BINDING_CASES = []


def _snapshot(host):
    paths = " ".join(MANAGED_PATHS)
    return host.check_output("find %s -xdev -type f -exec sha256sum {} + 2>/dev/null | sort || true" % paths)


@pytest.mark.parametrize("extra_vars, fragments", THP_CASES + SYSCTL_CASES + MEMLOCK_CASES + NUMA_BINDING_CASES)
def test_bad_input_fails_before_any_change(host, extra_vars, fragments):
    before = _snapshot(host)
    run = subprocess.run(
        [
            "ansible-playbook", "playbooks/site.yml",
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
    for fragment in fragments:
        assert fragment in output, "%r missing from:\n%s" % (fragment, output)
    assert "Validate every role's inputs" in output
    assert "Tune GPU nodes" not in output, "the run got past validation:\n" + output
    assert _snapshot(host) == before
