# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MIG on the converged node gpu-mig (inventory/lab.yml): the declared layout, a
change that touches only what differs (counted from the emulator's change log),
refusals under running work and their override, the GPU clients stopped and
started again, faults that leave no half-applied GPU, and bad layouts refused
before any change. Every test leaves the node's declared layout in place."""

from __future__ import annotations

import os
import re
import subprocess
import time

import pytest

from lab_gpus import events_since, emulator_state, mig_devices, mig_modes, profile_counts, set_faults
from lab_playbook import REPO_ROOT, feature_status, node_result, run_playbook

testinfra_hosts = ["gpu-mig"]

ROLE_PLAY = "molecule/default/plays/mig_alone.yml"
DECLARED = {
    1: {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2},
    2: {"1g.10gb": 7},
    3: {"2g.20gb": 3},
}
INVENTORY_LAYOUTS = dict((str(gpu), {"mig_enabled": True, "mig_devices": devices}) for gpu, devices in DECLARED.items())
# GPU 2 of seven 1g.10gb: three of them stay (starts 0-2), a 3g.40gb takes starts 4-7.
CHANGED_GPU_2 = {"3g.40gb": 1, "1g.10gb": 3}
SPARE_GPU = 5


def _layouts(**changes):
    """The inventory's layouts with some GPUs' entries replaced."""
    layouts = dict(INVENTORY_LAYOUTS)
    layouts.update(dict((gpu.lstrip("g"), layout) for gpu, layout in changes.items()))
    return {"mig_layouts": layouts}


def _converge(extra_vars=None):
    rc, output = run_playbook(ROLE_PLAY, "gpu-mig", extra_vars, flags=("-v",))
    assert rc == 0, output
    return output


def _log_length(host):
    return len(emulator_state(host).get("log", []))


def _by_gpu(events, kind):
    counts = {}
    for event in events:
        if event["event"] == kind:
            counts[event["gpu"]] = counts.get(event["gpu"], 0) + 1
    return counts


@pytest.fixture
def declared_layout_back(host):
    """Whatever a test changes, the node ends with its declared layout (GPU 5 without MIG) and record."""
    yield
    if mig_modes(host)[SPARE_GPU] != ("Disabled", "Disabled") or mig_devices(host)[SPARE_GPU]:
        _converge(_layouts(g5={"mig_enabled": False}))
    _converge()


def test_the_declared_layout_is_in_place_and_other_gpus_are_untouched(host):
    devices = mig_devices(host)
    for gpu, counts in DECLARED.items():
        assert profile_counts(devices[gpu]) == counts, devices[gpu]
    modes = mig_modes(host)
    for gpu in (0, 4, 5, 6, 7):
        assert devices[gpu] == [] and modes[gpu] == ("Disabled", "Disabled")
    record = host.file("/etc/gpuops-hardening/mig/layout.json")
    assert record.exists and '"1g.10gb": 7' in record.content_string
    unit = host.service("gpuops-mig.service")
    assert unit.is_enabled


def test_a_change_to_one_gpu_keeps_every_other_instance(host, declared_layout_back):
    before = mig_devices(host)
    start = _log_length(host)
    output = _converge(_layouts(g2={"mig_enabled": True, "mig_devices": CHANGED_GPU_2}))
    assert "changed=1" in output or "changed=2" in output, output
    after = mig_devices(host)
    for gpu in before:
        if gpu != 2:
            assert after[gpu] == before[gpu], "GPU %d changed" % gpu
    assert profile_counts(after[2]) == CHANGED_GPU_2
    kept = set(uuid for _profile, uuid in after[2]) & set(uuid for _profile, uuid in before[2])
    assert len(kept) == 3, "the three 1g.10gb instances that stay must keep their UUIDs"
    events = events_since(host, start)
    assert _by_gpu(events, "gi_destroy") == {2: 4}
    assert _by_gpu(events, "gi_create") == {2: 1}
    assert _by_gpu(events, "reset") == {}


def _start_cuda_app(host, mig_uuid, seconds=300):
    """A CUDA application on one MIG device, as a transient unit; returns its pid."""
    host.check_output("systemd-run --unit=lab-cuda-app --setenv=CUDA_VISIBLE_DEVICES=%s "
                      "/usr/bin/gpuemu-cuda-app --seconds %s", mig_uuid, str(seconds))
    for _attempt in range(50):
        pids = [p["pid"] for p in emulator_state(host)["processes"] if p["name"].endswith("cuda-app")]
        if pids:
            return pids[0]
        time.sleep(0.2)
    raise AssertionError("the CUDA application did not start: " + host.run("journalctl -u lab-cuda-app").stdout)


def test_running_work_blocks_a_destroy_unless_forced(host, declared_layout_back):
    before = mig_devices(host)
    # start 6 is the last 1g.10gb: the change destroys it.
    doomed = sorted(before[2])[-1][1]
    pid = _start_cuda_app(host, doomed)
    try:
        rc, output = run_playbook(ROLE_PLAY, "gpu-mig", _layouts(g2={"mig_enabled": True, "mig_devices": CHANGED_GPU_2}))
        assert rc != 0, output
        assert "pid %d" % pid in output and "force" in output, output
        assert mig_devices(host) == before, "a refused change must change nothing"

        output = _converge(dict(_layouts(g2={"mig_enabled": True, "mig_devices": CHANGED_GPU_2}), mig_force=True))
        assert profile_counts(mig_devices(host)[2]) == CHANGED_GPU_2
        assert doomed not in [uuid for _profile, uuid in mig_devices(host)[2]]
    finally:
        host.run("systemctl stop lab-cuda-app; systemctl reset-failed lab-cuda-app")


def _invocation(host, unit):
    return host.check_output("systemctl show --property=InvocationID --value %s", unit)


def test_gpu_clients_that_ran_are_stopped_and_started_again_and_only_those(host, declared_layout_back):
    host.check_output("systemctl start nvidia-dcgm.service && systemctl stop dcgm-exporter.service")
    try:
        dcgm_before = _invocation(host, "nvidia-dcgm.service")
        start = _log_length(host)
        # A mode change and a reset on the spare GPU: the clients must let go of the GPUs.
        output = _converge(_layouts(g5={"mig_enabled": True, "mig_devices": {"7g.80gb": 1}}))
        assert profile_counts(mig_devices(host)[SPARE_GPU]) == {"7g.80gb": 1}, output
        assert host.service("nvidia-dcgm.service").is_running
        assert _invocation(host, "nvidia-dcgm.service") != dcgm_before, "nvidia-dcgm was not stopped around the change"
        assert not host.service("dcgm-exporter.service").is_running, "a client stopped before the run was started"
        assert _by_gpu(events_since(host, start), "reset") == {SPARE_GPU: 1}
    finally:
        host.run("systemctl stop nvidia-dcgm.service dcgm-exporter.service")


def test_a_hidden_holder_gives_a_clear_error_and_no_half_applied_gpu(host, declared_layout_back):
    host.check_output("systemctl start nvidia-dcgm.service")
    try:
        before = mig_devices(host)
        # Without nvidia-dcgm among the clients to stop, its hold on the GPUs stays.
        rc, output = run_playbook(ROLE_PLAY, "gpu-mig", dict(_layouts(g2={"mig_enabled": True, "mig_devices": CHANGED_GPU_2}),
                                                             mig_gpu_clients=[]))
        assert rc != 0, output
        assert "not a compute process" in output and "gpu_clients" in output, output
        assert [profile for profile, _uuid in mig_devices(host)[2]] == [profile for profile, _uuid in before[2]]
    finally:
        host.run("systemctl stop nvidia-dcgm.service")


@pytest.mark.parametrize("fault", [
    {"reset_fail": {str(SPARE_GPU): "In use by another client"}},
    {"nvidia_drm": "loaded"},
], ids=["reset-failure", "nvidia-drm"])
def test_a_reset_that_fails_names_the_cause_and_asks_for_a_reboot(host, fault, declared_layout_back):
    set_faults(host, **fault)
    try:
        start = _log_length(host)
        rc, output = run_playbook(ROLE_PLAY, "gpu-mig", _layouts(g5={"mig_enabled": True, "mig_devices": {"3g.40gb": 2}}))
        assert rc != 0, output
        assert "reboot_required" in output and "reset" in output, output
        assert mig_devices(host)[SPARE_GPU] == [], "instances were created on a GPU whose mode did not apply"
        assert [e for e in events_since(host, start) if e["event"] in ("gi_create", "gi_destroy")] == []
    finally:
        set_faults(host, reset_fail={}, nvidia_drm=None)
        host.check_output("nvidia-smi -i %s -mig 0", str(SPARE_GPU))


@pytest.mark.parametrize("layout, expected", [
    ({"mig_enabled": True, "mig_devices": {"5g.50gb": 1}}, ["GPU 3", "unknown MIG profile 5g.50gb", "1g.10gb", "7g.80gb"]),
    ({"mig_enabled": True, "mig_devices": {"3g.40gb": 3}}, ["GPU 3", "3g.40gb"]),
], ids=["invalid-profile", "impossible-layout"])
def test_a_bad_layout_fails_before_any_change(host, layout, expected):
    before, start = mig_devices(host), _log_length(host)
    rc, output = run_playbook("playbooks/site.yml", "gpu-mig", _layouts(g3=layout))
    assert rc != 0, output
    for fragment in expected:
        assert fragment in output, "%r missing from:\n%s" % (fragment, output)
    # The node call checks the layout against the GPUs before any feature changes the node.
    assert re.search(r"gpu-mig\s*:\s*ok=\d+\s+changed=0\s+unreachable=0\s+failed=1", output), output
    assert mig_devices(host) == before and events_since(host, start) == []


def test_a_mig_parted_file_applies_unchanged(host, declared_layout_back):
    output = _converge({"mig_layouts": {}, "mig_parted_file": os.path.join(REPO_ROOT, "molecule/default/files/mig-parted-config.yaml"),
                        "mig_parted_config": "lab-mixed"})
    devices = mig_devices(host)
    assert profile_counts(devices[1]) == DECLARED[1] and profile_counts(devices[2]) == DECLARED[2], output
    assert profile_counts(devices[3]) == {"3g.40gb": 2}, output


def test_the_boot_service_has_no_ordering_cycle(host):
    verify = host.run("systemd-analyze verify gpuops-mig.service")
    assert "cycle" not in verify.stdout + verify.stderr, verify.stdout + verify.stderr
    assert verify.rc == 0, verify.stdout + verify.stderr
    after = host.check_output("systemctl show --property=After --value gpuops-mig.service").split()
    before = host.check_output("systemctl show --property=Before --value gpuops-mig.service").split()
    assert {"nvidia-persistenced.service", "nvidia-fabricmanager.service"} <= set(after)
    assert {"nvidia-dcgm.service", "dcgm-exporter.service", "nvsm.service", "kubelet.service"} <= set(before)
    # No GPU client is also ordered before it.
    for client in ("nvidia-dcgm.service", "dcgm-exporter.service", "nvsm.service"):
        assert "gpuops-mig.service" not in host.check_output("systemctl show --property=Before --value %s", client)


BOOT_SERVICE_FILES = ("/etc/systemd/system/gpuops-mig.service", "/usr/local/libexec/gpuops-mig-boot",
                      "/etc/gpuops-hardening/mig/layout.json", "/usr/local/lib/gpuops-hardening/mig")


def test_mig_state_absent_disables_and_removes_the_boot_service_and_keeps_the_layout(host, declared_layout_back):
    before = mig_devices(host)
    output = _converge({"mig_state": "absent"})
    assert feature_status(output, "mig_boot", "gpu-mig") == "changed", output
    assert host.run("systemctl is-enabled gpuops-mig.service").rc != 0
    assert not host.file("/etc/systemd/system/multi-user.target.wants/gpuops-mig.service").exists
    for path in BOOT_SERVICE_FILES:
        assert not host.file(path).exists, path
    # systemd was reloaded: it no longer knows the unit.
    assert host.check_output("systemctl show --property=LoadState --value gpuops-mig.service") == "not-found"
    assert mig_devices(host) == before, "absent leaves the GPUs' MIG state as it is"

    again = _converge({"mig_state": "absent"})
    assert feature_status(again, "mig_boot", "gpu-mig") == "ok", again
    assert re.search(r"gpu-mig\s*:\s*ok=\d+\s+changed=0\s", again), again

    back = _converge()
    assert feature_status(back, "mig_boot", "gpu-mig") == "changed", back
    assert host.service("gpuops-mig.service").is_enabled
    for path in BOOT_SERVICE_FILES:
        assert host.file(path).exists, path


def test_a_no_op_site_run_converges_every_mig_call_on_the_node(host):
    """Every call reaches the node and reads it as it is: a converged node answers ok, never from a record."""
    run_playbook("playbooks/site.yml", "gpu-mig")
    rc, output = run_playbook("playbooks/site.yml", "gpu-mig", flags=("-v",))
    assert rc == 0, output[-3000:]
    assert "gpuops.hardening.precheck" not in output
    # -v prints the call's result: each feature ran on the node and found nothing to do.
    result = node_result(output, "gpu-mig")
    assert result and not result["changed"], output
    assert result["features"]["mig_layout"]["reboot_required"] is False, result
    assert feature_status(output, "mig_layout", "gpu-mig") == feature_status(output, "mig_boot", "gpu-mig") == "ok"


def test_after_a_reboot_the_boot_service_restores_the_layout(host):
    boots = emulator_state(host)["boot_count"]
    subprocess.run(["docker", "restart", "gpu-mig"], check=True, capture_output=True, timeout=180)
    for _attempt in range(120):
        state = host.run("systemctl is-system-running")
        if state.stdout.strip() in ("running", "degraded"):
            break
        time.sleep(1)
    assert emulator_state(host)["boot_count"] == boots + 1, "the emulated driver did not boot"
    unit = host.run("systemctl show --property=ActiveState --property=Result gpuops-mig.service")
    assert sorted(unit.stdout.split()) == ["ActiveState=active", "Result=success"], unit.stdout + host.run("journalctl -b -u gpuops-mig").stdout
    done = int(host.check_output("systemctl show --property=ExecMainExitTimestampMonotonic --value gpuemu-boot.service"))
    began = int(host.check_output("systemctl show --property=ExecMainStartTimestampMonotonic --value gpuops-mig.service"))
    assert done <= began, "the layout was applied before the emulated driver booted"
    fabric_up = int(host.check_output("systemctl show --property=ActiveEnterTimestampMonotonic --value "
                                      "nvidia-fabricmanager.service"))
    assert 0 < fabric_up <= began, "the layout was applied before Fabric Manager ran"
    devices = mig_devices(host)
    for gpu, counts in DECLARED.items():
        assert profile_counts(devices[gpu]) == counts, host.run("journalctl -b -u gpuops-mig").stdout
    assert host.service("nvidia-persistenced.service").is_running, "persistence did not come back after the boot"
    # The new instances have new UUIDs: a run after the boot records them in the topology fact again.
    rc, output = run_playbook("playbooks/site.yml", "gpu-mig")
    assert rc == 0, output
