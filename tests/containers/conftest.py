# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container data path's proofs need Docker and the container lab image (built here,
cached: scripts/lab/build-containers-image.sh); under CI they fail without Docker.

Every test module shares one node (the fixture node), started once for the session: the
a100_8x_mig GPUs emulated, Docker, containerd and Podman running, the test image in each.
A test that changes the node's engine configuration puts it back (the fixture
restore_engine_configs)."""

from __future__ import annotations

import os
import shutil

import pytest

import container_lab

ENGINE_CONFIGS = ("/etc/docker/daemon.json", "/etc/containerd/config.toml", "/etc/containerd/conf.d", "/etc/cdi")


def pytest_collection_modifyitems(config, items):  # pylint: disable=unused-argument
    if shutil.which("docker"):
        return
    if os.environ.get("CI"):
        raise pytest.UsageError("the container data path's proofs need docker; run `make lab` first")
    for item in items:
        item.add_marker(pytest.mark.skip(reason="docker is not installed"))


@pytest.fixture(scope="session")
def node():
    """The node's name, up with its engines and the emulated GPUs; removed with its volumes at the end."""
    container_lab.build_image()
    container_lab.up()
    try:
        yield container_lab.NODE
    finally:
        container_lab.down()


@pytest.fixture(scope="session")
def inventory(node, tmp_path_factory):  # pylint: disable=unused-argument
    """An Ansible inventory with the node in gpu_nodes, for a role's or the audit's playbook."""
    return container_lab.write_inventory(str(tmp_path_factory.mktemp("containers") / "inventory.yml"))


@pytest.fixture
def restore_engine_configs(node):  # pylint: disable=unused-argument
    """Put the engines' configuration files back as they were, and reload Docker and restart containerd."""
    saved = "/root/engine-configs.tar"
    container_lab.sh("tar -cPf %s $(ls -d %s 2>/dev/null)" % (saved, " ".join(ENGINE_CONFIGS)))
    yield
    container_lab.sh("rm -rf %s && tar -xPf %s && rm -f %s && systemctl reload docker && systemctl restart containerd"
                     % (" ".join(ENGINE_CONFIGS), saved, saved))
