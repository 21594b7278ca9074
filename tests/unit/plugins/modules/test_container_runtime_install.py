# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""With container_runtime_install, every refusal that needs no nvidia-ctk comes before the package is installed,
in check mode too: a run never installs the toolkit and then stops."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.test_container_runtime import (  # noqa: F401 pylint: disable=unused-import
    node, run)


@pytest.fixture
def without_ctk(node):
    """No nvidia-ctk on PATH; an apt-get that would put it there and records that it ran."""
    (node.tools / "nvidia-ctk").rename(node.tools / "packaged-nvidia-ctk")
    (node.tools / "apt-get").write_text("#!/bin/sh\ntouch %s/apt-get.ran\ncp %s/packaged-nvidia-ctk %s/nvidia-ctk\n"
                                        % (node.tools, node.tools, node.tools))
    (node.tools / "apt-get").chmod(0o755)
    return node


def installed(node):
    return (node.tools / "apt-get.ran").exists()


@pytest.mark.parametrize("check_mode", [True, False])
@pytest.mark.parametrize("engine, path, text, refusal", [
    ("containerd", "/etc/containerd/config.toml", "version = 2\n[plugins]\n", "does not import"),
    ("docker", "/etc/docker/daemon.json", "[]\n", "must hold a JSON object"),
])
def test_a_file_the_run_refuses_stops_it_before_the_install(without_ctk, check_mode, engine, path, text, refusal):
    without_ctk.install(engine)
    without_ctk.write(path, text)
    result = run(without_ctk, check_mode=check_mode, nvidia_ctk_path=None, install=True)
    assert result["failed"] and refusal in result["msg"]
    assert not installed(without_ctk)


@pytest.mark.parametrize("check_mode", [True, False])
def test_a_docker_restart_that_would_stop_containers_stops_the_run_before_the_install(without_ctk, check_mode):
    without_ctk.install("docker")
    without_ctk.reloadable.clear()
    without_ctk.run_containers("trainer")
    result = run(without_ctk, check_mode=check_mode, nvidia_ctk_path=None, install=True)
    assert result["failed"] and "trainer" in result["msg"]
    assert not installed(without_ctk) and without_ctk.calls == []


def test_a_docker_that_reloads_lets_the_install_go_on(without_ctk):
    without_ctk.install("docker")
    without_ctk.run_containers("trainer")
    result = run(without_ctk, nvidia_ctk_path=None, install=True)
    assert not result["failed"], result
    assert installed(without_ctk) and result["services"] == {"docker.service": "reloaded"}
