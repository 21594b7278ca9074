# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures for the emulator tests: state files in tmp_path, daemons stopped afterwards."""

from __future__ import annotations

import subprocess

import pytest

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api


@pytest.fixture(autouse=True)
def no_host_device_nodes(tmp_path, monkeypatch):
    """The emulated tools read device nodes from an empty folder, never from the test host's /dev
    (a host may hold an emulator's nodes); a test that needs nodes points GPUEMU_DEV_ROOT at its own."""
    monkeypatch.setenv("GPUEMU_DEV_ROOT", str(tmp_path / "no-dev"))


@pytest.fixture
def make_state(tmp_path):
    """make_state(profile or state dict, edit=None) -> path of a written state file.

    Daemons started against these states are stopped when the test ends."""
    paths = []

    def _make(profile, edit=None, name="state.json"):
        state = api.new_state(profile) if isinstance(profile, str) else profile
        # Keep the daemons' pid files and sockets inside the test's folder.
        state["settings"]["persistenced_run_dir"] = str(tmp_path / "run-persistenced")
        state["settings"]["fabricmanager_run_dir"] = str(tmp_path / "run-fabricmanager")
        if edit:
            edit(state)
        path = str(tmp_path / name)
        api.write_state(state, path)
        paths.append(path)
        return path

    yield _make
    for path in paths:
        api.stop_daemons(path)


@pytest.fixture
def smi(make_state):
    """smi(path, *argv) -> (rc, stdout, stderr) of nvidia-smi on that state."""
    del make_state

    def _run(path, *argv, **kwargs):
        return api.run("nvidia-smi", list(argv), path, **kwargs)
    return _run


@pytest.fixture
def mps_env(tmp_path):
    return {"CUDA_MPS_PIPE_DIRECTORY": str(tmp_path / "pipe"), "CUDA_MPS_LOG_DIRECTORY": str(tmp_path / "log")}


@pytest.fixture
def apps():
    """start(path, env, seconds) -> a running cuda-app and its first stdout line."""
    started = []

    def _start(path, env, seconds="60"):
        app = subprocess.Popen(api.command("cuda-app", ["--seconds", seconds]), env=api.environment(path, env),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started.append(app)
        return app
    yield _start
    for app in started:
        if app.poll() is None:
            app.kill()
        app.communicate()
