# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who reaches the MPS control daemon: the pipe directory's permissions decide, not
the umask the daemon started with (connecting to a unix socket needs write permission
on it, unix(7)). A CUDA application of an allowed user becomes an MPS client; one of a
user outside the group runs without MPS (nvidia-cuda-mps-control(1))."""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
import tempfile

import pytest

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api, state as state_file, texts
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.mps_users import (
    AS_ROOT, OTHER_UID, Client, grant, run_as)


class Node(object):
    """A state, a pipe directory and a log directory that another uid can traverse
    (pytest's tmp_path is private to its owner)."""

    def __init__(self, profile="l40s_4x"):
        self.top = tempfile.mkdtemp(prefix="gpuemu-mps-")
        os.chmod(self.top, 0o711)
        self.state = os.path.join(self.top, "state.json")
        self.pipe = os.path.join(self.top, "pipe")
        os.mkdir(self.pipe, 0o700)
        state = api.new_state(profile)
        state["settings"]["persistenced_run_dir"] = os.path.join(self.top, "run-persistenced")
        api.write_state(state, self.state)
        self.env = {"CUDA_MPS_PIPE_DIRECTORY": self.pipe, "CUDA_MPS_LOG_DIRECTORY": os.path.join(self.top, "log")}

    def start_daemon(self, *argv, **env):
        # A strict umask: the socket must not depend on it.
        umask = os.umask(0o077)
        try:
            return api.run("nvidia-cuda-mps-control", ["-d"] + list(argv), self.state, env=dict(self.env, **env))
        finally:
            os.umask(umask)

    def control(self, commands):
        return api.run("nvidia-cuda-mps-control", [], self.state, env=self.env, stdin=commands)

    def child_env(self):
        return dict(os.environ, GPUEMU_STATE=self.state, **self.env)

    def rows(self):
        return sorted((p["gpu"], p["pid"], p["type"], p["name"]) for p in api.read_state(self.state)["processes"])

    def log(self):
        with open(os.path.join(self.env["CUDA_MPS_LOG_DIRECTORY"], "control.log"), encoding="utf-8") as handle:
            return handle.read()

    def remove(self):
        os.chmod(self.pipe, 0o700)
        api.stop_daemons(self.state)
        shutil.rmtree(self.top)


@pytest.fixture
def node():
    made = Node()
    yield made
    made.remove()


ASK = "get_default_active_thread_percentage\n"


def test_the_socket_does_not_follow_the_daemon_umask(node):
    assert node.start_daemon() == (0, "", "")
    mode = os.stat(os.path.join(node.pipe, "control")).st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o777


def test_a_member_of_the_pipe_directory_group_reaches_the_daemon(node):
    assert node.start_daemon()[0] == 0
    member = grant(node.pipe, member=True)
    assert run_as(member, "nvidia-cuda-mps-control", [], node.child_env(), ASK) == (0, "100.0\n", "")


def test_a_user_outside_the_group_does_not(node):
    assert node.start_daemon()[0] == 0
    outsider = grant(node.pipe, member=False)
    assert run_as(outsider, "nvidia-cuda-mps-control", [], node.child_env(), ASK) == (1, "", texts.MPS_NO_DAEMON)


def test_an_allowed_user_runs_an_mps_client_on_the_daemon_gpus(node):
    uuids = [gpu["uuid"] for gpu in api.read_state(node.state)["gpus"]]
    assert node.start_daemon(CUDA_VISIBLE_DEVICES="%s,%s" % (uuids[2], uuids[1]))[0] == 0
    client = Client(grant(node.pipe, member=True), "cuda-app", ["--seconds", "60"], node.child_env())
    line = client.first_line()
    server = int(node.control("get_server_list\n")[1])
    assert line == "gpuemu-cuda-app: MPS client of server %d on GPU 2,1\n" % server
    # The root daemon wrote the client's rows: the client could not.
    assert node.rows() == sorted([(1, server, "C", "nvidia-cuda-mps-server"), (2, server, "C", "nvidia-cuda-mps-server"),
                                  (1, client.pid, "M+C", "gpuemu-cuda-app"), (2, client.pid, "M+C", "gpuemu-cuda-app")])
    assert node.control("get_client_list %d\n" % server) == (0, "%d\n" % client.pid, "")
    uid = OTHER_UID if AS_ROOT else os.geteuid()
    assert re.search(r"Starting new server %d for user %d\n" % (server, uid), node.log())
    table = api.run("nvidia-smi", [], node.state)[1]
    assert re.search(r"\|\s+2\s+N/A\s+N/A\s+%d\s+M\+C\s+gpuemu-cuda-app\s+\d+MiB \|" % client.pid, table)
    os.kill(client.pid, signal.SIGTERM)
    assert client.finish()[0] == 128 + signal.SIGTERM
    assert [row[3] for row in node.rows()] == ["nvidia-cuda-mps-server"] * 2
    assert node.control("get_client_list %d\n" % server) == (0, "", "")


def test_a_user_outside_the_group_runs_without_mps(node):
    assert node.start_daemon()[0] == 0
    rc, out, err = run_as(grant(node.pipe, member=False), "cuda-app", [], node.child_env())
    assert (rc, err) == (0, "")
    assert out.startswith("gpuemu-cuda-app: without MPS (control daemon at %s: Permission denied): CUDA context on GPU 0"
                          % node.pipe)
    # Another user cannot write the root-owned state, so nvidia-smi does not show it.
    assert out.endswith(", not in the state (read-only)\n") == AS_ROOT
    assert node.control("get_server_list\n") == (0, "", "")


def test_exclusive_process_refuses_a_user_outside_the_group(node):
    with state_file.editing(node.state) as state:
        state["gpus"][0]["compute_mode"] = "Exclusive_Process"
    assert node.start_daemon(CUDA_VISIBLE_DEVICES="0")[0] == 0
    member = Client(grant(node.pipe, member=True), "cuda-app", ["--seconds", "60"], node.child_env())
    assert "MPS client" in member.first_line()
    rc, out, err = run_as(grant(node.pipe, member=False), "cuda-app", [], node.child_env())
    assert (rc, out) == (1, "")
    assert err == "gpuemu-cuda-app: CUDA error 46 (cudaErrorDevicesUnavailable): CUDA-capable device(s) is/are busy or unavailable\n"
    os.kill(member.pid, signal.SIGTERM)
    member.finish()
