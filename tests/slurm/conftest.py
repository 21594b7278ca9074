# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Slurm proof needs Docker and the lab image (`make lab`); under CI it fails without them.

Its test modules share one cluster (the fixture cluster), started once for the session."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

import slurm_lab

# The cluster's own cgroup.conf, with a key of its own that the slurm_gres role must keep.
USER_CGROUP = "CgroupPlugin=autodetect\nConstrainDevices=no\n"


def pytest_collection_modifyitems(config, items):  # pylint: disable=unused-argument
    if shutil.which("docker"):
        return
    if os.environ.get("CI"):
        raise pytest.UsageError("the Slurm proof needs docker and the lab image; run `make lab` first")
    for item in items:
        item.add_marker(pytest.mark.skip(reason="docker is not installed"))


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    """The inventory of the one-node cluster: in gpu_nodes and slurm_nodes."""
    subprocess.run([os.path.join(slurm_lab.REPO_ROOT, "scripts", "lab", "build-slurm-image.sh")],
                   capture_output=True, check=True)
    inventory = str(tmp_path_factory.mktemp("slurm") / "inventory.yml")
    slurm_lab.up(inventory)
    subprocess.run(["docker", "exec", "-i", slurm_lab.NODE, "sh", "-c", "cat > /etc/slurm/cgroup.conf"],
                   input=USER_CGROUP, text=True, check=True)
    try:
        yield inventory
    finally:
        slurm_lab.down()


@pytest.fixture(scope="session")
def converged(cluster):
    """(inventory, the changed count of the first converge): the slurm_gres role converged once, the daemons on it."""
    first = slurm_lab.playbook_changes(cluster)
    # The controller reads Cores= when it starts (gres.conf(5)).
    slurm_lab.exec_in(["systemctl", "restart", "slurmctld"])
    slurm_lab.exec_in(["systemctl", "is-active", "slurmd"])
    return cluster, first
