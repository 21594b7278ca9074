# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's verdicts on sysctl, swap, THP and memlock, from module results shaped as the modules return them."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_checks import (
    CHECK_KEYS,
    check,
    memlock_checks,
    swap_checks,
    sysctl_checks,
    thp_checks,
)

SYSCTL_INPUTS = {"sysctl_settings": {"vm.swappiness": 0, "vm.dirty_bytes": 8589934592, "kernel.numa_balancing": 0},
                 "sysctl_disable_swap": True}
CONF = "/etc/sysctl.d/90-gpuops-hardening.conf"


def by_id(checks):
    assert all(tuple(item) == CHECK_KEYS and all(isinstance(v, str) for v in item.values()) for item in checks)
    return dict((item["id"], item) for item in checks)


def sysctl_state(**changes):
    state = {"changed": False, "before": {"vm.swappiness": "0", "vm.dirty_bytes": "8589934592", "kernel.numa_balancing": "0"},
             "live_skipped": {}, "unsupported": [], "conflicts": [], "masked_by": None,
             "file": {"path": CONF, "changed": False}}
    state.update(changes)
    return state


def test_a_check_refuses_an_unknown_verdict():
    with pytest.raises(ValueError, match="verdict: got 'OK'"):
        check("x", "sysctl", "x", "OK", "", "", "")


def test_tuned_sysctl_passes_live_and_at_boot():
    checks = by_id(sysctl_checks(sysctl_state(), SYSCTL_INPUTS))
    assert {item["verdict"] for item in checks.values()} == {"PASS"}
    assert checks["sysctl.boot.vm.swappiness"]["actual"] == "0 from " + CONF
    # NUMA balancing is reported under its own area.
    assert checks["sysctl.live.kernel.numa_balancing"]["area"] == "numa"


def test_a_live_value_that_differs_fails_and_a_read_only_one_warns():
    state = sysctl_state(before={"vm.swappiness": "60", "vm.dirty_bytes": "0", "kernel.numa_balancing": "0"},
                         live_skipped={"vm.dirty_bytes": "/proc/sys/vm/dirty_bytes is read-only inside this docker container"})
    checks = by_id(sysctl_checks(state, SYSCTL_INPUTS))
    assert checks["sysctl.live.vm.swappiness"]["verdict"] == "FAIL"
    assert (checks["sysctl.live.vm.swappiness"]["expected"], checks["sysctl.live.vm.swappiness"]["actual"]) == ("0", "60")
    assert checks["sysctl.live.vm.dirty_bytes"]["verdict"] == "WARN"
    assert "read-only inside this docker container" in checks["sysctl.live.vm.dirty_bytes"]["reason"]


def test_a_boot_conflict_fails_the_boot_check_only():
    conflict = {"key": "vm.swappiness", "wanted": "0", "value": "10", "file": "/etc/sysctl.d/99-zz-local.conf", "line": 1,
                "other_key": "vm.swappiness", "message": "vm.swappiness: /etc/sysctl.d/99-zz-local.conf line 1 sets 10"}
    checks = by_id(sysctl_checks(sysctl_state(conflicts=[conflict]), SYSCTL_INPUTS))
    assert checks["sysctl.live.vm.swappiness"]["verdict"] == "PASS"
    boot = checks["sysctl.boot.vm.swappiness"]
    assert boot["verdict"] == "FAIL"
    assert boot["actual"] == "10 from /etc/sysctl.d/99-zz-local.conf line 1"
    assert boot["reason"] == conflict["message"]


def test_the_partner_of_a_paired_key_fails_the_key_it_zeroes():
    conflict = {"key": "vm.dirty_bytes", "wanted": "8589934592", "value": "20", "file": "/etc/sysctl.conf", "line": 4,
                "other_key": "vm.dirty_ratio", "message": "vm.dirty_ratio in /etc/sysctl.conf zeroes vm.dirty_bytes"}
    boot = by_id(sysctl_checks(sysctl_state(conflicts=[conflict]), SYSCTL_INPUTS))["sysctl.boot.vm.dirty_bytes"]
    assert boot["verdict"] == "FAIL"
    assert boot["actual"] == "vm.dirty_ratio=20 from /etc/sysctl.conf line 4"


def test_a_missing_managed_file_or_a_mask_fails_at_boot():
    missing = by_id(sysctl_checks(sysctl_state(file={"path": CONF, "changed": True}), SYSCTL_INPUTS))
    assert missing["sysctl.boot.vm.swappiness"]["verdict"] == "FAIL"
    assert CONF in missing["sysctl.boot.vm.swappiness"]["reason"]
    masked = by_id(sysctl_checks(sysctl_state(masked_by="systemd-sysctl.service is masked"), SYSCTL_INPUTS))
    assert masked["sysctl.boot.vm.swappiness"]["reason"] == "systemd-sysctl.service is masked"


def test_a_key_the_kernel_lacks_is_skipped():
    state = sysctl_state(unsupported=["kernel.numa_balancing"])
    live = by_id(sysctl_checks(state, SYSCTL_INPUTS))["sysctl.live.kernel.numa_balancing"]
    assert live["verdict"] == "SKIP" and "no kernel.numa_balancing" in live["reason"]


def test_a_failed_role_fails_its_checks_and_a_task_that_did_not_run_is_skipped():
    failed = sysctl_checks({"failed": True, "msg": "boom"}, SYSCTL_INPUTS)
    assert [(c["verdict"], c["reason"]) for c in failed] == [("FAIL", "boom")]
    assert sysctl_checks(None, SYSCTL_INPUTS, role_error="the role failed early")[0]["verdict"] == "FAIL"
    assert sysctl_checks(None, SYSCTL_INPUTS)[0]["verdict"] == "SKIP"


def swap_state(**changes):
    state = {"changed": False, "swaps": [], "swapoff": [], "swap_used_kib": 0, "live_skipped_reason": None,
             "fstab": {"path": "/etc/fstab", "changed": False}, "masked_units": ["swap.target"], "masks_changed": [],
             "zram": {"devices": [], "dropin": "/etc/systemd/zram-generator.conf.d/99.conf", "changed": False}}
    state.update(changes)
    return state


def test_swap_off_everywhere_passes():
    assert {c["verdict"] for c in swap_checks(swap_state(), SYSCTL_INPUTS)} == {"PASS"}


def test_active_swap_fails_and_names_the_area():
    state = swap_state(changed=True, swaps=[{"path": "/swapfile", "used_kib": 2048}],
                       fstab={"path": "/etc/fstab", "changed": True, "commented": ["/swapfile none swap sw 0 0"]},
                       masks_changed=[{"unit": "swapfile.swap"}])
    checks = by_id(swap_checks(state, SYSCTL_INPUTS))
    assert checks["swap.live"]["verdict"] == "FAIL"
    assert checks["swap.live"]["actual"] == "/swapfile (2048 KiB used)"
    assert checks["swap.fstab"]["verdict"] == "FAIL" and "/swapfile none swap" in checks["swap.fstab"]["actual"]
    assert checks["swap.units"]["verdict"] == "FAIL" and "swapfile.swap" in checks["swap.units"]["actual"]


def test_swap_that_would_not_fit_in_memory_fails_without_stopping_the_audit():
    refused = {"failed": True, "changed": False, "msg": "refusing to turn swap off: 8 GiB used",
               "swaps": [{"path": "/swapfile", "used_kib": 8388608}]}
    checks = by_id(swap_checks(refused, SYSCTL_INPUTS))
    assert checks["swap.live"]["verdict"] == "FAIL"
    assert "refusing to turn swap off" in checks["swap.live"]["reason"]
    assert checks["swap.fstab"]["verdict"] == "SKIP" and "stopped first" in checks["swap.fstab"]["reason"]


def test_host_swap_seen_from_a_container_warns():
    state = swap_state(swaps=[{"path": "/dev/sda2", "used_kib": 0}],
                       live_skipped_reason="inside this docker container /proc/swaps shows the host kernel's swap")
    live = by_id(swap_checks(state, SYSCTL_INPUTS))["swap.live"]
    assert live["verdict"] == "WARN" and "host kernel's swap" in live["reason"]


def test_swap_left_alone_is_skipped():
    checks = swap_checks(None, dict(SYSCTL_INPUTS, sysctl_disable_swap=False))
    assert [(c["id"], c["verdict"]) for c in checks] == [("swap.live", "SKIP")]


THP_INPUTS = {"thp_enabled": "always", "thp_defrag": "defer+madvise", "thp_khugepaged_defrag": True, "thp_persist": True}


def thp_state(**changes):
    state = {"changed": False, "before": {"enabled": "always", "defrag": "defer+madvise", "khugepaged_defrag": True},
             "live_skipped_reason": None, "cmdline_value": None, "cmdline_conflict": False, "cmdline_message": None,
             "unit": {"path": "/etc/systemd/system/gpuops-thp.service", "changed": False, "present": True, "enabled": True}}
    state.update(changes)
    return state


def test_thp_verdicts_live_and_at_boot():
    assert {c["verdict"] for c in thp_checks(thp_state(), THP_INPUTS)} == {"PASS"}
    checks = by_id(thp_checks(thp_state(before={"enabled": "madvise", "defrag": "madvise", "khugepaged_defrag": True},
                                        live_skipped_reason="read-only inside this docker container"), THP_INPUTS))
    assert checks["thp.live.enabled"]["verdict"] == "WARN"
    assert checks["thp.live.khugepaged_defrag"]["verdict"] == "PASS"
    conflict = by_id(thp_checks(thp_state(cmdline_conflict=True, cmdline_value="never", cmdline_message="contradicts"),
                                THP_INPUTS))["thp.boot"]
    assert (conflict["verdict"], conflict["actual"]) == ("FAIL", "transparent_hugepage=never on the kernel command line")
    missing = by_id(thp_checks(thp_state(unit={"path": "/x", "changed": True, "enabled": False}), THP_INPUTS))["thp.boot"]
    assert missing["verdict"] == "FAIL"
    unpersisted = by_id(thp_checks(thp_state(), dict(THP_INPUTS, thp_persist=False)))["thp.boot"]
    assert unpersisted["verdict"] == "WARN"


MEMLOCK_INPUTS = {"memlock_limit": "unlimited", "memlock_login_sessions": True, "memlock_limits_domain": "*",
                  "memlock_services_default": True, "memlock_docker_daemon_json": "auto"}
LIMITS_FILE = "/etc/security/limits.d/90-gpuops-memlock.conf"


def memlock_state(**changes):
    unlimited = {"soft": "unlimited", "hard": "unlimited"}
    state = {
        "changed": False, "limit": "unlimited", "files": [{"path": LIMITS_FILE, "changed": False}],
        "left_alone": {"containerd.service": "unit not installed"},
        "effective": {
            "login_sessions": {"*": dict(unlimited, soft_source=LIMITS_FILE, hard_source=LIMITS_FILE)},
            "services_default": dict(unlimited),
            "units": {"docker.service": dict(unlimited, active=True)},
            "docker_default_ulimit": {"Name": "memlock", "Hard": -1, "Soft": -1},
        },
        "pam_limits": {"login": True, "sshd": None}, "ceiling": {"hard": "unlimited", "can_raise": True, "capped": False},
        "pending": {"daemon_reexec": False, "daemon_reload": False, "restart": []}, "conflicts": [],
    }
    state.update(changes)
    return state


def test_memlock_tuned_everywhere():
    checks = by_id(memlock_checks(memlock_state(), MEMLOCK_INPUTS))
    assert checks["memlock.login"]["verdict"] == "PASS"
    assert checks["memlock.services"]["verdict"] == "PASS"
    assert checks["memlock.unit.docker.service"]["verdict"] == "PASS"
    assert checks["memlock.unit.containerd.service"]["verdict"] == "SKIP"
    assert checks["memlock.containers"]["verdict"] == "PASS"
    assert checks["memlock.files"]["verdict"] == "PASS"


def test_a_more_specific_pam_limits_line_wins_and_fails_the_login_check():
    state = memlock_state()
    state["effective"]["login_sessions"]["@gpu"] = {"soft": 65536, "hard": 65536, "soft_source": "/etc/security/limits.conf",
                                                    "hard_source": "/etc/security/limits.conf", "takes_precedence_over": "*"}
    login = by_id(memlock_checks(state, MEMLOCK_INPUTS))["memlock.login"]
    assert login["verdict"] == "FAIL"
    assert "@gpu gets soft 65536, hard 65536 from /etc/security/limits.conf, which pam_limits applies before *" in login["reason"]


def test_a_session_stack_without_pam_limits_fails_the_login_check():
    login = by_id(memlock_checks(memlock_state(pam_limits={"login": True, "sshd": False}), MEMLOCK_INPUTS))["memlock.login"]
    assert login["verdict"] == "FAIL" and "sshd does not run pam_limits" in login["reason"]


def test_memlock_capped_in_a_container_warns_and_pending_work_fails():
    state = memlock_state(ceiling={"hard": 8192, "can_raise": False, "capped": True})
    state["effective"]["services_default"] = {"soft": 8192, "hard": 8192}
    checks = by_id(memlock_checks(state, MEMLOCK_INPUTS))
    assert checks["memlock.services"]["verdict"] == "WARN" and "8192 KiB" in checks["memlock.services"]["reason"]
    pending = memlock_state(pending={"daemon_reexec": True, "daemon_reload": False, "restart": ["docker.service"]})
    checks = by_id(memlock_checks(pending, MEMLOCK_INPUTS))
    assert checks["memlock.services"]["verdict"] == "FAIL"
    # Left for the user to restart: the configuration holds, the running process waits.
    assert checks["memlock.unit.docker.service"]["verdict"] == "WARN"
    assert "memlock_restart_services is false" in checks["memlock.unit.docker.service"]["reason"]
    restarting = by_id(memlock_checks(pending, dict(MEMLOCK_INPUTS, memlock_restart_services=True)))
    assert restarting["memlock.unit.docker.service"]["verdict"] == "FAIL"


def test_docker_default_ulimits_in_bytes_are_compared_in_kib():
    state = memlock_state(limit=65536)
    state["effective"]["docker_default_ulimit"] = {"Name": "memlock", "Hard": 65536 * 1024, "Soft": 65536 * 1024}
    containers = by_id(memlock_checks(state, dict(MEMLOCK_INPUTS, memlock_limit=65536)))["memlock.containers"]
    assert (containers["verdict"], containers["actual"]) == ("PASS", "soft 65536, hard 65536")
    no_docker = memlock_state(left_alone={"daemon.json": "Docker is not installed"})
    assert by_id(memlock_checks(no_docker, MEMLOCK_INPUTS))["memlock.containers"]["verdict"] == "SKIP"


def test_changed_memlock_files_fail():
    files = by_id(memlock_checks(memlock_state(files=[{"path": LIMITS_FILE, "changed": True}]), MEMLOCK_INPUTS))["memlock.files"]
    assert files["verdict"] == "FAIL" and LIMITS_FILE in files["actual"]
