# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fabric Manager on the converged NVSwitch node gpu-train (the emulated DGX H100, inventory/lab.yml): running
after nvidia-persistenced with every GPU's fabric trained; a version other than the driver's and a restart under
a running CUDA application refused with nothing changed; the restart once the application ended (every GPU
reset); Fabric Manager after persistence at boot; and on the PCIe node gpu-infer a no-op that says why. Every
test leaves the node converged."""

from __future__ import annotations

import subprocess
import time

from lab_gpus import emulator_state, events_since
from lab_playbook import node_result, run_playbook

testinfra_hosts = ["gpu-train"]

ROLE_PLAY = "molecule/default/plays/fabricmanager_alone.yml"
UNIT = "nvidia-fabricmanager.service"
DROPIN = "/etc/systemd/system/nvidia-fabricmanager.service.d/90-gpuops-fabricmanager.conf"
# The emulated DGX H100's driver (tests/gpu_emulator/profiles/dgx_h100.json) and its Fabric Manager package.
DRIVER, PACKAGE = "525.60.13", "nvidia-fabricmanager-525"
# gpuemu install as prepare.yml runs it on gpu-train, at a chosen Fabric Manager version.
REINSTALL = ("cd /opt/gpuemu && python3 -m gpuemu install --profile dgx_h100 --persistenced-unit upstream "
             "--fabricmanager-version %s")


def _fabric(host):
    out = host.check_output("nvidia-smi --query-gpu=fabric.state,fabric.status --format=csv,noheader")
    return [tuple(part.strip() for part in line.split(",")) for line in out.splitlines()]


def _snapshot(host):
    """What a refusal must leave as it was: the unit files, the daemon, the GPUs' fabric and the change log."""
    files = host.check_output("find /etc/systemd/system /lib/systemd/system -printf %s | sort", "%p %l %s %T@\\n")
    daemon = host.check_output("systemctl show --property=MainPID,ActiveState,UnitFileState %s", UNIT)
    return files, daemon, len(emulator_state(host).get("log", []))


def test_the_converged_node_runs_fabric_manager_after_persistence_with_every_fabric_trained(host):
    assert host.service(UNIT).is_running and host.service(UNIT).is_enabled
    dropin = host.file(DROPIN).content_string
    assert "ConditionPathExistsGlob=/dev/nvidia-nvswitch[0-9]*" in dropin and "After=nvidia-persistenced.service" in dropin
    assert "nvidia-persistenced.service" in host.check_output("systemctl show --property=After %s", UNIT)
    # Before= the GPU clients, also those the node lacks: systemd keeps the ordering of an absent unit.
    assert "nvidia-dcgm.service" in host.check_output("systemctl show --property=Before %s", UNIT)
    assert host.check_output("nv-fabricmanager --version").endswith(DRIVER)
    assert set(_fabric(host)) == {("Completed", "Success")}
    verify = host.run("systemd-analyze verify %s", UNIT)
    assert verify.rc == 0 and "gpuops-fabricmanager" not in verify.stderr, verify.stderr


def test_a_mismatched_version_is_refused_with_nothing_changed(host):
    host.check_output(REINSTALL, "525.60.11")
    try:
        before = _snapshot(host)
        rc, output = run_playbook(ROLE_PLAY, "gpu-train")
        assert rc != 0, output
        assert "Fabric Manager 525.60.11 does not match the NVIDIA driver %s: install %s at version %s" % (
            DRIVER, PACKAGE, DRIVER) in output, output
        assert _snapshot(host) == before
    finally:
        host.check_output(REINSTALL, DRIVER)


def test_a_restart_under_a_running_cuda_application_is_refused_then_resets_the_gpus_once_it_ended(host):
    host.check_output("systemd-run --unit=lab-fm-cuda-app /usr/bin/gpuemu-cuda-app --seconds 300")
    try:
        pid = None
        for _attempt in range(50):
            pids = [p["pid"] for p in emulator_state(host)["processes"] if p["name"].endswith("cuda-app")]
            if pids:
                pid = pids[0]
                break
            time.sleep(0.2)
        assert pid, host.run("journalctl -u lab-fm-cuda-app").stdout
        # Fabric Manager gone while the application runs: the fabric stays trained, so a start is a restart.
        host.check_output("systemctl stop %s", UNIT)
        before = _snapshot(host)
        rc, output = run_playbook(ROLE_PLAY, "gpu-train")
        assert rc != 0, output
        assert "pid %d" % pid in output and "force" in output and "nothing was changed" in output, output
        assert _snapshot(host) == before and not host.service(UNIT).is_running
    finally:
        host.run("systemctl stop lab-fm-cuda-app; systemctl reset-failed lab-fm-cuda-app")
    start = len(emulator_state(host).get("log", []))
    rc, output = run_playbook(ROLE_PLAY, "gpu-train", flags=("-v",))
    assert rc == 0, output
    assert node_result(output, "gpu-train")["features"]["fabricmanager"]["service_action"] == "restarted"
    assert sorted(event.get("gpu") for event in events_since(host, start) if event["event"] == "reset") == list(range(8))
    assert host.service(UNIT).is_running and set(_fabric(host)) == {("Completed", "Success")}


def _monotonic(host, unit, prop):
    return int(host.check_output("systemctl show --property=%s --value %s", prop, unit))


def test_after_a_reboot_fabric_manager_starts_after_persistence_and_trains_the_fabric(host):
    boots = emulator_state(host)["boot_count"]
    subprocess.run(["docker", "restart", "gpu-train"], check=True, capture_output=True, timeout=180)
    for _attempt in range(120):
        if host.run("systemctl is-system-running").stdout.strip() in ("running", "degraded"):
            break
        time.sleep(1)
    assert emulator_state(host)["boot_count"] == boots + 1, "the emulated driver did not boot"
    assert host.service(UNIT).is_running, host.run("journalctl -b -u %s", UNIT).stdout
    persistence_up = _monotonic(host, "nvidia-persistenced.service", "ActiveEnterTimestampMonotonic")
    assert 0 < persistence_up <= _monotonic(host, UNIT, "InactiveExitTimestampMonotonic")
    # The emulated fabric reports In Progress to the first nvidia-smi run after the start, then Completed.
    _fabric(host)
    assert set(_fabric(host)) == {("Completed", "Success")}
    rc, output = run_playbook("playbooks/site.yml", "gpu-train")
    assert rc == 0, output


def test_the_pcie_node_changes_nothing_and_says_why():
    def dropin_present():
        return subprocess.run(["docker", "exec", "gpu-infer", "test", "-e", DROPIN], check=False).returncode == 0
    rc, output = run_playbook(ROLE_PLAY, "gpu-infer", flags=("-v",))
    assert rc == 0 and "changed=0" in output, output
    feature = node_result(output, "gpu-infer")["features"]["fabricmanager"]
    assert not feature["changed"] and feature["skipped_reason"].startswith("no NVSwitch on this node"), feature
    assert not dropin_present()
