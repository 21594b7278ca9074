# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MPS on the converged inference node (inventory/lab.yml, gpu-infer): two daemons,
each answering through its own pipe with the configured settings, also after a
restart; only members of the MPS group get in; mps_state absent restores each
GPU's compute mode (prepare.yml set GPU 3 to PROHIBITED before the converge)."""

from __future__ import annotations

import pytest

from lab_playbook import run_playbook

testinfra_hosts = ["gpu-infer"]

# daemon: the GPU UUIDs it serves, in its CUDA_VISIBLE_DEVICES order (l40s_4x profile)
DAEMONS = {
    "infer-a": ["GPU-9558bc6e-512b-5a22-59da-181ce165bfe2", "GPU-0b8f1093-8345-455f-a471-1b0f97498c21"],
    "infer-b": ["GPU-965552e3-98bc-9824-62c3-7c70ee4a6fe2", "GPU-816f7f71-9105-fa5e-5ac3-b6bc2cbc3275"],
}
PIPE_ROOT = "/run/nvidia-mps"
LOG_ROOT = "/var/log/nvidia-mps"
GROUP = "gpu-mps"
ALLOWED_USER = "gpuuser"
OUTSIDER = "gpuoutsider"
# What each GPU had before MPS took it.
MODES_BEFORE = ["Default", "Default", "Default", "Prohibited"]


def _ask(host, daemon, command, user=None):
    """A control command through the daemon's pipe, as root or as user."""
    shell = "echo %s | CUDA_MPS_PIPE_DIRECTORY=%s/%s nvidia-cuda-mps-control" % (command, PIPE_ROOT, daemon)
    if user:
        return host.run("runuser -u %s -- sh -c %s", user, shell)
    return host.run("sh -c %s", shell)


def _compute_modes(host):
    out = host.check_output("nvidia-smi --query-gpu=compute_mode --format=csv,noheader")
    return [line.strip() for line in out.splitlines()]


def _main_pid(host, daemon):
    return host.check_output("systemctl show --property=MainPID --value gpuops-mps-%s.service", daemon)


@pytest.mark.parametrize("daemon", sorted(DAEMONS))
def test_each_daemon_runs_as_an_enabled_service_outside_tmp(host, daemon):
    unit = host.service("gpuops-mps-%s.service" % daemon)
    assert unit.is_running and unit.is_enabled
    text = host.file("/etc/systemd/system/gpuops-mps-%s.service" % daemon).content_string
    assert "\nType=forking\n" in text and "\nPIDFile=%s/%s/nvidia-cuda-mps-control.pid\n" % (PIPE_ROOT, daemon) in text
    assert "\nEnvironment=CUDA_VISIBLE_DEVICES=%s\n" % ",".join(DAEMONS[daemon]) in text
    # L40S is Ada (compute capability 8.9): the multi-user server applies.
    assert "ExecStart=/usr/bin/nvidia-cuda-mps-control -d -multiuser-server\n" in text
    assert "=/tmp/" not in text
    pid = host.file("%s/%s/nvidia-cuda-mps-control.pid" % (PIPE_ROOT, daemon)).content_string.strip()
    assert pid == _main_pid(host, daemon)


@pytest.mark.parametrize("daemon", sorted(DAEMONS))
def test_the_pipe_answers_with_the_configured_settings_also_after_a_restart(host, daemon):
    for attempt in ("converged", "restarted"):
        if attempt == "restarted":
            before = _main_pid(host, daemon)
            host.check_output("systemctl restart gpuops-mps-%s.service", daemon)
            assert _main_pid(host, daemon) != before
        servers = _ask(host, daemon, "get_server_list")
        assert servers.rc == 0, servers.stderr
        percentage = _ask(host, daemon, "get_default_active_thread_percentage")
        assert percentage.rc == 0 and float(percentage.stdout) == 50.0, (attempt, percentage.stdout, percentage.stderr)
        for device in range(len(DAEMONS[daemon])):
            limit = _ask(host, daemon, "'get_default_device_pinned_mem_limit %d'" % device)
            assert limit.stdout.strip() == "8G", (attempt, device, limit.stdout, limit.stderr)


def test_directories_let_in_only_root_and_the_group(host):
    for root in (PIPE_ROOT, LOG_ROOT):
        parent = host.file(root)
        # Traversable for every client, writable for root alone.
        assert (parent.user, parent.group, parent.mode) == ("root", "root", 0o755)
        for daemon in DAEMONS:
            folder = host.file("%s/%s" % (root, daemon))
            assert folder.is_directory
            assert (folder.user, folder.group, folder.mode) == ("root", GROUP, 0o770)
    assert host.run("find %s %s -perm -0002 -type d", PIPE_ROOT, LOG_ROOT).stdout == ""
    assert GROUP in host.user(ALLOWED_USER).groups
    assert GROUP not in host.user(OUTSIDER).groups


def test_a_group_member_reaches_the_daemon_and_an_outsider_does_not(host):
    allowed = _ask(host, "infer-a", "get_server_list", user=ALLOWED_USER)
    assert allowed.rc == 0, allowed.stderr
    outsider = _ask(host, "infer-a", "get_server_list", user=OUTSIDER)
    assert outsider.rc != 0
    assert "Cannot find MPS control daemon process" in outsider.stderr
    # The outsider cannot even see into the pipe directory.
    assert host.run("runuser -u %s -- ls %s/infer-a", OUTSIDER, PIPE_ROOT).rc != 0


def _start_client(host, daemon, seconds):
    """An emulated CUDA application of the allowed user, left running on the daemon's GPUs."""
    host.check_output("runuser -u %s -- env CUDA_MPS_PIPE_DIRECTORY=%s/%s "
                      "setsid gpuemu-cuda-app --seconds %s > /tmp/gpuemu-cuda-app.out 2>&1 &",
                      ALLOWED_USER, PIPE_ROOT, daemon, str(seconds))
    for dummy in range(50):
        if "M+C" in host.check_output("nvidia-smi"):
            return
        host.run("sleep 0.2")
    raise AssertionError("the client never appeared: " + host.check_output("cat /tmp/gpuemu-cuda-app.out"))


def _stop_clients(host):
    host.run("pkill -f gpuemu-cuda-app")
    host.run("sleep 1")


def test_a_cuda_client_of_the_group_runs_on_mps_and_an_outsider_is_kept_off(host):
    _start_client(host, "infer-a", 30)
    try:
        assert "MPS client of server" in host.check_output("cat /tmp/gpuemu-cuda-app.out")
        table = host.check_output("nvidia-smi")
        assert table.count("M+C   gpuemu-cuda-app") == 2, table
        assert _ask(host, "infer-a", "get_server_list").stdout.split(), "no server for the client"
        # Without the pipe the outsider gets no MPS, and EXCLUSIVE_PROCESS keeps it off GPUs the server holds.
        outsider = host.run("runuser -u %s -- env CUDA_MPS_PIPE_DIRECTORY=%s/infer-a gpuemu-cuda-app", OUTSIDER, PIPE_ROOT)
        assert outsider.rc != 0 and "busy or unavailable" in outsider.stdout + outsider.stderr
    finally:
        _stop_clients(host)


def test_a_restart_under_running_clients_is_refused_unless_forced(host):
    changed_setting = {"mps_active_thread_percentage": 40}
    before = _main_pid(host, "infer-a")
    _start_client(host, "infer-a", 60)
    try:
        rc, output = run_playbook("molecule/default/plays/mps_alone.yml", "gpu-infer", changed_setting)
        assert rc != 0, output
        assert "MPS daemon infer-a must restart, but client processes run on its GPUs" in output
        assert "mps_force_restart" in output
        assert _main_pid(host, "infer-a") == before
        rc, output = run_playbook("molecule/default/plays/mps_alone.yml", "gpu-infer",
                                  dict(changed_setting, mps_force_restart=True))
        assert rc == 0, output
        assert _main_pid(host, "infer-a") != before
        assert float(_ask(host, "infer-a", "get_default_active_thread_percentage").stdout) == 40.0
    finally:
        _stop_clients(host)
        rc, output = run_playbook("molecule/default/plays/mps_alone.yml", "gpu-infer")
    assert rc == 0, output
    assert float(_ask(host, "infer-a", "get_default_active_thread_percentage").stdout) == 50.0


def test_a_stop_gives_each_gpu_its_mode_back_and_a_start_takes_it_again(host):
    host.check_output("systemctl stop gpuops-mps-infer-b.service")
    try:
        assert _compute_modes(host)[2:] == MODES_BEFORE[2:]
    finally:
        host.check_output("systemctl start gpuops-mps-infer-b.service")
    assert _compute_modes(host) == ["Exclusive_Process"] * 4


def test_clients_source_the_environment_file(host):
    for daemon in DAEMONS:
        env = host.file("/etc/gpuops-hardening/mps/%s.env" % daemon).content_string
        assert "\nCUDA_MPS_PIPE_DIRECTORY=%s/%s\nCUDA_MPS_LOG_DIRECTORY=%s/%s\n" % (PIPE_ROOT, daemon, LOG_ROOT, daemon) in env
    shell = "set -a; . /etc/gpuops-hardening/mps/infer-b.env; set +a; echo get_server_list | nvidia-cuda-mps-control"
    assert host.run("runuser -u %s -- sh -c %s", ALLOWED_USER, shell).rc == 0
    # Two daemons: no single one to give every login shell.
    assert not host.file("/etc/profile.d/gpuops-mps.sh").exists


def test_the_gpus_run_exclusive_process_and_absent_restores_their_modes(host):
    assert _compute_modes(host) == ["Exclusive_Process"] * 4
    try:
        rc, output = run_playbook("molecule/default/plays/mps_alone.yml", "gpu-infer", {"mps_state": "absent"})
        assert rc == 0, output
        assert _compute_modes(host) == MODES_BEFORE
        for daemon in DAEMONS:
            assert not host.file("/etc/systemd/system/gpuops-mps-%s.service" % daemon).exists
            assert not host.file("%s/%s" % (PIPE_ROOT, daemon)).exists
            assert not host.run("systemctl is-active gpuops-mps-%s.service", daemon).rc == 0
        for leftover in ("/etc/tmpfiles.d/gpuops-mps.conf", "/var/lib/gpuops-hardening/mps/compute-modes.json", PIPE_ROOT):
            assert not host.file(leftover).exists, leftover
        rc, output = run_playbook("molecule/default/plays/mps_alone.yml", "gpu-infer", {"mps_state": "absent"})
        assert rc == 0 and "changed=0" in output, output
    finally:
        # Back to the converged node for the tests after this one.
        rc, output = run_playbook("molecule/default/plays/mps_alone.yml", "gpu-infer")
    assert rc == 0, output
    assert _compute_modes(host) == ["Exclusive_Process"] * 4
