# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulated CUDA application: CUDA initialisation with and without MPS as
nvidia-cuda-mps-control(1) describes it, compute modes (CUDA runtime API,
cudaErrorDevicesUnavailable), and the MPS guide's get_server_list / get_client_list."""

from __future__ import annotations

import os
import re
import signal
import time

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api

BUSY = "gpuemu-cuda-app: CUDA error 46 (cudaErrorDevicesUnavailable): CUDA-capable device(s) is/are busy or unavailable\n"


def control(path, env, commands):
    return api.run("nvidia-cuda-mps-control", [], path, env=env, stdin=commands)


def rows(path):
    return sorted((p["gpu"], p["pid"], p["type"]) for p in api.read_state(path)["processes"])


def wait_for(check, timeout=5.0):
    deadline = time.time() + timeout
    while not check() and time.time() < deadline:
        time.sleep(0.05)
    return check()


def compute_mode(mode, index=0):
    def _edit(state):
        state["gpus"][index]["compute_mode"] = mode
    return _edit


def test_without_a_daemon_it_is_a_plain_compute_process(make_state, mps_env, apps):
    path = make_state("l40s_4x")
    app = apps(path, dict(mps_env, CUDA_VISIBLE_DEVICES="2"))
    assert app.stdout.readline() == ("gpuemu-cuda-app: without MPS (control daemon at %s: No such file or directory): "
                                     "CUDA context on GPU 2\n" % mps_env["CUDA_MPS_PIPE_DIRECTORY"])
    assert rows(path) == [(2, app.pid, "C")]
    app.terminate()
    assert app.wait() == 128 + signal.SIGTERM
    assert rows(path) == []


def test_it_ends_on_its_own_and_leaves_the_table(make_state, mps_env):
    path = make_state("l40s_4x")
    rc, out, err = api.run("cuda-app", ["--seconds", "0.2"], path, env=mps_env)
    assert (rc, err) == (0, "") and "CUDA context on GPU 0" in out
    assert rows(path) == []


def test_exclusive_process_admits_one_context(make_state, mps_env, apps):
    path = make_state("l40s_4x", compute_mode("Exclusive_Process"))
    first = apps(path, mps_env)
    assert "CUDA context on GPU 0" in first.stdout.readline()
    assert api.run("cuda-app", [], path, env=mps_env) == (1, "", BUSY)
    first.terminate()
    first.wait()
    assert api.run("cuda-app", [], path, env=mps_env)[0] == 0


def test_prohibited_admits_none(make_state, mps_env):
    path = make_state("l40s_4x", compute_mode("Prohibited"))
    assert api.run("cuda-app", [], path, env=mps_env) == (1, "", BUSY)
    # The GPU the application uses is the first visible one.
    assert api.run("cuda-app", [], path, env=dict(mps_env, CUDA_VISIBLE_DEVICES="1"))[0] == 0


def test_mps_clients_share_the_server_in_exclusive_process_mode(make_state, mps_env, apps):
    path = make_state("l40s_4x", compute_mode("Exclusive_Process"))
    assert api.run("nvidia-cuda-mps-control", ["-d"], path, env=dict(mps_env, CUDA_VISIBLE_DEVICES="0")) == (0, "", "")
    first, second = apps(path, mps_env), apps(path, mps_env)
    lines = [first.stdout.readline(), second.stdout.readline()]
    server = int(control(path, mps_env, "get_server_list\n")[1])
    assert lines == ["gpuemu-cuda-app: MPS client of server %d on GPU 0\n" % server] * 2
    assert rows(path) == sorted([(0, server, "C"), (0, first.pid, "M+C"), (0, second.pid, "M+C")])
    listed = control(path, mps_env, "get_client_list %d\n" % server)[1]
    assert sorted(int(pid) for pid in listed.split()) == sorted([first.pid, second.pid])


def test_a_killed_client_leaves_the_table(make_state, mps_env, apps):
    path = make_state("l40s_4x")
    assert api.run("nvidia-cuda-mps-control", ["-d"], path, env=mps_env)[0] == 0
    app = apps(path, mps_env)
    assert "MPS client" in app.stdout.readline()
    app.kill()
    app.wait()
    assert wait_for(lambda: all(row[2] != "M+C" for row in rows(path)))


def test_a_server_for_another_user_waits_for_its_clients(make_state, mps_env, apps):
    path = make_state("l40s_4x")
    assert api.run("nvidia-cuda-mps-control", ["-d"], path, env=mps_env)[0] == 0
    alice = apps(path, dict(mps_env, GPUEMU_EUID="1000"))
    assert "MPS client" in alice.stdout.readline()
    first_server = control(path, mps_env, "get_server_list\n")[1]
    # Man page: the existing server shuts down once its clients are done, then a
    # server for the queued client's uid starts.
    bob = apps(path, dict(mps_env, GPUEMU_EUID="2000"))
    time.sleep(0.5)
    assert bob.poll() is None and control(path, mps_env, "get_server_list\n")[1] == first_server
    alice.terminate()
    alice.wait()
    assert "MPS client" in bob.stdout.readline()
    second_server = control(path, mps_env, "get_server_list\n")[1]
    assert second_server not in ("", first_server)
    with open(os.path.join(mps_env["CUDA_MPS_LOG_DIRECTORY"], "control.log"), encoding="utf-8") as handle:
        assert "Starting new server %s for user 2000\n" % second_server.strip() in handle.read()


def test_a_multiuser_daemon_serves_every_user_from_one_root_server(make_state, mps_env, apps):
    path = make_state("l40s_4x")
    assert api.run("nvidia-cuda-mps-control", ["-d", "-multiuser-server"], path, env=mps_env)[0] == 0
    alice = apps(path, dict(mps_env, GPUEMU_EUID="1000"))
    bob = apps(path, dict(mps_env, GPUEMU_EUID="2000"))
    assert alice.stdout.readline() == bob.stdout.readline()
    assert len(control(path, mps_env, "get_server_list\n")[1].split()) == 1


def test_control_users_cannot_send_a_client_request(make_state, mps_env):
    path = make_state("l40s_4x")
    assert api.run("nvidia-cuda-mps-control", ["-d"], path, env=mps_env)[0] == 0
    assert control(path, mps_env, "\0attach 1000\nattach 1000\n") == (0, "", "")
    assert control(path, mps_env, "get_server_list\n") == (0, "", "")
    with open(os.path.join(mps_env["CUDA_MPS_LOG_DIRECTORY"], "control.log"), encoding="utf-8") as handle:
        assert len(re.findall(r"Unknown command attach\n", handle.read())) == 2


def test_shutting_the_server_down_takes_its_clients_off_the_gpus(make_state, mps_env, apps):
    path = make_state("l40s_4x")
    assert api.run("nvidia-cuda-mps-control", ["-d"], path, env=dict(mps_env, CUDA_VISIBLE_DEVICES="3")) == (0, "", "")
    app = apps(path, mps_env)
    assert "MPS client" in app.stdout.readline()
    server = control(path, mps_env, "get_server_list\n")[1].strip()
    assert control(path, mps_env, "shutdown_server %s\n" % server) == (0, "", "")
    assert rows(path) == []


def test_bad_arguments(make_state):
    path = make_state("l40s_4x")
    assert api.run("cuda-app", ["--seconds", "-1"], path) == (2, "", "usage: gpuemu-cuda-app [--seconds N]\n")
