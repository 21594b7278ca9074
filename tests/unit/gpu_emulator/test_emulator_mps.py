# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-cuda-mps-control: pid file, environment defaults, servers and clients in
nvidia-smi, the multi-user server. Sources: the MPS guide ("Multi-Process Service":
environment variables, logging, nvidia-cuda-mps-server) and a real nvidia-smi process
table with MPS (NVIDIA/nvidia-docker #868: the server as "C", its clients as "M+C")."""

from __future__ import annotations

import os
import re
import time

import pytest

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api, mps, mps_commands
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import single_gpu


@pytest.fixture
def mps_env(tmp_path):
    return {"CUDA_MPS_PIPE_DIRECTORY": str(tmp_path / "pipe"), "CUDA_MPS_LOG_DIRECTORY": str(tmp_path / "log")}


def control(path, env, stdin=None, *argv):
    return api.run("nvidia-cuda-mps-control", list(argv), path, env=env, stdin=stdin)


def wait_gone(path, timeout=5.0):
    deadline = time.time() + timeout
    while os.path.exists(path) and time.time() < deadline:
        time.sleep(0.05)
    return not os.path.exists(path)


def test_default_directories():
    assert mps.directories({}) == ("/tmp/nvidia-mps", "/var/log/nvidia-mps")
    assert mps.directories({"CUDA_MPS_PIPE_DIRECTORY": "/p", "CUDA_MPS_LOG_DIRECTORY": "/l"}) == ("/p", "/l")


def test_pid_file_in_the_pipe_directory(make_state, mps_env):
    path = make_state("l40s_4x")
    assert control(path, mps_env, None, "-d") == (0, "", "")
    pid_file = os.path.join(mps_env["CUDA_MPS_PIPE_DIRECTORY"], "nvidia-cuda-mps-control.pid")
    with open(pid_file, encoding="utf-8") as handle:
        assert int(handle.read()) == api.read_state(path)["daemons"]["mps"][0]["pid"]
    assert control(path, mps_env, "quit\n") == (0, "", "")
    assert wait_gone(pid_file)


def test_defaults_come_from_the_daemon_environment(make_state, mps_env):
    path = make_state("l40s_4x")
    env = dict(mps_env, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE="25", CUDA_MPS_PINNED_DEVICE_MEM_LIMIT="0=1G,1=2G")
    assert control(path, env, None, "-d")[0] == 0
    asked = "get_default_active_thread_percentage\nget_default_device_pinned_mem_limit 1\nget_default_device_pinned_mem_limit 0\n"
    # The client's own environment does not matter, only the daemon's.
    assert control(path, mps_env, asked) == (0, "25.0\n2G\n1G\n", "")


def test_unknown_command_is_logged_and_not_answered(make_state, mps_env):
    path = make_state("l40s_4x")
    assert control(path, mps_env, None, "-d")[0] == 0
    assert control(path, mps_env, "frobnicate 3\nget_default_active_thread_percentage\n") == (0, "100.0\n", "")
    with open(os.path.join(mps_env["CUDA_MPS_LOG_DIRECTORY"], "control.log"), encoding="utf-8") as handle:
        logged = handle.read()
    assert "Cmd:frobnicate 3" in logged and "Unknown command frobnicate" in logged


def test_servers_and_clients_in_the_process_table(make_state, smi, mps_env):
    path = make_state("l40s_4x")
    env = dict(mps_env, CUDA_VISIBLE_DEVICES="1")
    assert control(path, env, None, "-d")[0] == 0
    assert control(path, mps_env, "start_server -uid 1000\n") == (0, "", "")
    server_pid = int(control(path, mps_env, "get_server_list\n")[1])
    state = api.read_state(path)
    assert [(p["gpu"], p["pid"], p["type"], p["name"]) for p in state["processes"]] == \
        [(1, server_pid, "C", "nvidia-cuda-mps-server")]
    api.add_process(state, gpu=1, pid=51818, name="python3", process_type="M+C")
    api.write_state(state, path)
    table = smi(path)[1]
    assert re.search(r"\|\s+1\s+N/A\s+N/A\s+%d\s+C\s+nvidia-cuda-mps-server\s+\d+MiB \|" % server_pid, table)
    assert re.search(r"\|\s+1\s+N/A\s+N/A\s+51818\s+M\+C\s+python3\s+\d+MiB \|", table)
    xml = smi(path, "-q", "-x")[1]
    assert "<type>M+C</type>" in xml and "<process_name>nvidia-cuda-mps-server</process_name>" in xml
    # The server holds its GPU like any compute process.
    assert smi(path, "-i", "1", "-r")[0] == 255
    assert control(path, mps_env, "shutdown_server %d\n" % server_pid)[0] == 0
    assert [p["name"] for p in api.read_state(path)["processes"]] == ["python3"]


@pytest.mark.parametrize("pick, expected", [
    (lambda uuids: uuids[2], [2]),
    (lambda uuids: "%s,%s" % (uuids[3], uuids[1][:12]), [3, 1]),
    (lambda uuids: "GPU-", []),
    (lambda uuids: uuids[0][4:], []),
    (lambda uuids: "2,%s,0" % uuids[2], [2, 0]),
    (lambda uuids: "1, 7,x", [1]),
])
def test_visible_devices_by_index_uuid_or_uuid_prefix(pick, expected):
    # MPS guide, environment variables appendix: indexes or UUIDs, also "the first
    # few characters of the UUID (including GPU-)", in the order given.
    state = api.new_state("l40s_4x")
    uuids = [gpu["uuid"] for gpu in state["gpus"]]
    assert mps_commands.visible_gpus(state, {"CUDA_VISIBLE_DEVICES": pick(uuids)}) == expected


def test_an_ambiguous_uuid_prefix_names_no_gpu():
    state = api.new_state("l40s_4x")
    state["gpus"][1]["uuid"] = state["gpus"][0]["uuid"][:-1] + "0"
    prefix = state["gpus"][0]["uuid"][:-1]
    assert mps_commands.visible_gpus(state, {"CUDA_VISIBLE_DEVICES": prefix}) == []
    assert mps_commands.visible_gpus(state, {"CUDA_VISIBLE_DEVICES": state["gpus"][1]["uuid"]}) == [1]


def test_daemon_servers_use_the_gpus_named_by_uuid(make_state, mps_env):
    path = make_state("l40s_4x")
    uuids = [gpu["uuid"] for gpu in api.read_state(path)["gpus"]]
    env = dict(mps_env, CUDA_VISIBLE_DEVICES="%s,%s" % (uuids[3], uuids[1][:10]))
    assert control(path, env, None, "-d")[0] == 0
    assert control(path, mps_env, "start_server -uid 0\n") == (0, "", "")
    assert sorted(p["gpu"] for p in api.read_state(path)["processes"]) == [1, 3]


def test_stopping_the_daemon_stops_its_servers(make_state, mps_env):
    path = make_state("l40s_4x")
    assert control(path, mps_env, None, "-d")[0] == 0
    control(path, mps_env, "start_server -uid 0\n")
    assert {p["gpu"] for p in api.read_state(path)["processes"]} == {0, 1, 2, 3}
    api.stop_daemons(path)
    assert api.read_state(path)["processes"] == []
    assert not os.path.exists(os.path.join(mps_env["CUDA_MPS_PIPE_DIRECTORY"], "nvidia-cuda-mps-control.pid"))


def test_multiuser_server_runs_one_root_server(make_state, mps_env):
    path = make_state("dgx_h100")
    assert control(path, mps_env, None, "-d", "-multiuser-server") == (0, "", "")
    assert api.read_state(path)["daemons"]["mps"][0]["multiuser"] is True
    control(path, mps_env, "start_server -uid 1000\n")
    with open(os.path.join(mps_env["CUDA_MPS_LOG_DIRECTORY"], "control.log"), encoding="utf-8") as handle:
        assert re.search(r"Starting new server \d+ for user 0\n", handle.read())


def test_multiuser_server_needs_root(make_state, mps_env):
    path = make_state("dgx_h100")
    rc, _out, err = control(path, dict(mps_env, GPUEMU_EUID="1000"), None, "-d", "-multiuser-server")
    assert rc == 1 and "superuser" in err
    assert api.read_state(path)["daemons"]["mps"] == []
    # A plain control daemon may run as any user (MPS guide: "As $UID, run ... -d").
    assert control(path, dict(mps_env, GPUEMU_EUID="1000"), None, "-d") == (0, "", "")


def test_multiuser_server_refused_before_volta(make_state, mps_env):
    def pascal(state):
        single_gpu("Tesla P100-PCIE-16GB", "00000000:04:00.0")(state)
        state["gpus"][0]["mig"] = None
    path = make_state("l40s_4x", pascal)
    rc, _out, err = control(path, mps_env, None, "-d", "-multiuser-server")
    assert rc == 1 and "Volta" in err
    assert control(path, mps_env, None, "-d")[0] == 0


def test_bad_arguments_print_the_usage(make_state, mps_env):
    path = make_state("l40s_4x")
    assert control(path, mps_env, None, "-multiuser-server") == (1, "", mps.USAGE)
    assert control(path, mps_env, None, "-d", "-f") == (1, "", mps.USAGE)
