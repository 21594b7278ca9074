# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""End to end in a lab container: the installed wrappers, the persistence daemon and
Fabric Manager under systemd, MPS, and the fake sysfs bind-mounted over /sys.

Not part of `ansible-test units` (it needs Docker and the lab image). Run it with

    .venv/bin/python -m pytest -q tests/gpu_emulator/test_lab_container.py

It skips only when docker is absent; GPUEMU_LAB_IMAGE overrides the image
(default gpuops-lab/debian12:lab).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import lab_node  # noqa: E402 pylint: disable=wrong-import-position

IMAGE = os.environ.get("GPUEMU_LAB_IMAGE", "gpuops-lab/debian12:lab")
PROFILE = "dgx_h100"

pytestmark = pytest.mark.skipif(shutil.which("docker") is None, reason="docker is not installed")


def docker(*argv, check=True):
    done = subprocess.run(["docker", *argv], capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise AssertionError("docker %s failed (%d):\n%s%s" % (" ".join(argv), done.returncode, done.stdout, done.stderr))
    return done


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    sysfs = str(tmp_path_factory.mktemp("sysfs"))
    env = dict(os.environ, PYTHONPATH=HERE)
    subprocess.run([sys.executable, "-m", "gpuemu", "sysfs", "--profile", PROFILE, "--out", sysfs], env=env, check=True)
    name = "emu-lab-%s" % uuid.uuid4().hex[:8]
    # The Molecule lab node, with this test's own fake sysfs in place of the lab's.
    platform = dict(lab_node.lab_platform(), image=IMAGE)
    lab_sysfs = os.path.join(lab_node.REPO_ROOT, ".lab", "sysfs", PROFILE)
    volumes = [volume.replace(lab_sysfs, sysfs) for volume in platform["volumes"]]
    assert volumes != platform["volumes"], "the lab node mounts no %s sysfs: %s" % (PROFILE, platform["volumes"])
    # Docker cannot create a mount point inside sysfs: class/infiniband only goes in
    # where the host kernel has it. The RDMA devices stay visible under their PCI functions.
    if os.path.isdir("/sys/class/infiniband"):
        volumes.append("%s/class/infiniband:/sys/class/infiniband:ro" % sysfs)
    platform["volumes"] = volumes
    try:
        docker(*lab_node.docker_run_argv(platform, name)[1:])
        lab_node.wait_booted(name)
        docker("exec", name, "mkdir", "-p", "/opt/gpuemu")
        for part in ("gpuemu", "profiles"):
            docker("cp", os.path.join(HERE, part), "%s:/opt/gpuemu/%s" % (name, part))
        docker("exec", "-w", "/opt/gpuemu", name, "python3", "-m", "gpuemu", "install", "--profile", PROFILE)
        yield name
    finally:
        docker("rm", "-f", name, check=False)


def sh(name, script, check=True):
    return docker("exec", name, "bash", "-c", script, check=check)


def test_installed_tools_answer(node):
    listed = sh(node, "nvidia-smi -L").stdout.splitlines()
    assert len(listed) == 8 and listed[0].startswith("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-")
    assert sh(node, "test -c /dev/nvidiactl && test -c /dev/nvidia7 && stat -c %t:%T /dev/nvidia7").stdout.strip() == "c3:7"
    again = sh(node, "cd /opt/gpuemu && python3 -m gpuemu install --profile dgx_h100").stdout
    assert again == "ok: nothing to change\n"


def test_sysfs_mounts_agree_with_topo(node):
    topo = sh(node, "nvidia-smi topo -m").stdout
    gpu4 = [line for line in topo.splitlines() if line.startswith("GPU4\t")][0].split("\t")
    assert sh(node, "cat /sys/bus/pci/devices/0000:9a:00.0/numa_node").stdout.strip() == gpu4[-3] == "1"
    assert sh(node, "cat /sys/bus/pci/devices/0000:9a:00.0/local_cpulist").stdout.strip() == gpu4[-4]
    assert sh(node, "ls /sys/bus/pci/devices/0000:9c:00.0/infiniband").stdout.split() == ["mlx5_4"]
    assert sh(node, "ls /sys/bus/pci/devices/0000:9c:00.0/net").stdout.split() == ["ibp156s0"]
    if os.path.isdir("/sys/class/infiniband"):
        assert sh(node, "readlink -f /sys/class/infiniband/mlx5_4/device").stdout.strip() == "/sys/bus/pci/devices/0000:9c:00.0"
    assert sh(node, "cat /sys/devices/system/node/node1/cpulist").stdout.strip() == "56-111,168-223"
    assert "  NIC4: mlx5_4" in topo


def test_persistence_follows_the_systemd_service(node):
    query = "nvidia-smi --query-gpu=persistence_mode --format=csv,noheader | sort -u"
    assert sh(node, query).stdout.strip() == "Disabled"
    sh(node, "systemctl daemon-reload && systemctl start nvidia-persistenced")
    assert sh(node, "systemctl is-active nvidia-persistenced").stdout.strip() == "active"
    assert sh(node, query).stdout.strip() == "Enabled"
    sh(node, "systemctl stop nvidia-persistenced")
    assert sh(node, query).stdout.strip() == "Disabled"


def test_mps_and_mig_in_the_container(node):
    script = ("export CUDA_MPS_PIPE_DIRECTORY=/run/mps CUDA_MPS_LOG_DIRECTORY=/var/log/mps; "
              "nvidia-cuda-mps-control -d && echo get_default_active_thread_percentage | nvidia-cuda-mps-control "
              "&& echo quit | nvidia-cuda-mps-control && grep -c 'Starting control daemon' /var/log/mps/control.log")
    assert sh(node, script).stdout.split() == ["100.0", "1"]
    assert "pending enable state" in sh(node, "nvidia-smi -i 0 -mig 1").stdout
    modes = "nvidia-smi -i 0 --query-gpu=mig.mode.current,mig.mode.pending --format=csv,noheader"
    assert sh(node, modes).stdout.strip() == "Disabled, Enabled"
    disabled = sh(node, "nvidia-smi mig -lgip", check=False)
    assert (disabled.returncode, disabled.stdout) == (0, "No MIG-enabled devices found.\n")
    sh(node, "cd /opt/gpuemu && python3 -m gpuemu reboot")
    assert sh(node, modes).stdout.strip() == "Enabled, Enabled"
    assert "MIG 1g.10gb" in sh(node, "nvidia-smi mig -lgip").stdout


def test_fabric_manager_under_systemd(node):
    """The packaged unit's shape under real systemd: a mismatched package fails the start
    with the real log line in the journal, a matching one trains the fabric, CUDA waits
    for it. Last in this file: it installs Fabric Manager, which gates CUDA from then on."""
    install = "cd /opt/gpuemu && python3 -m gpuemu install --profile %s " % PROFILE
    assert sh(node, "test -c /dev/nvidia-nvswitchctl && ls /dev | grep -c '^nvidia-nvswitch[0-9]'").stdout.strip() == "4"
    sh(node, install + "--fabricmanager-version 535.104.05 && systemctl daemon-reload")
    assert sh(node, "systemctl start nvidia-fabricmanager", check=False).returncode != 0
    journal = sh(node, "journalctl -u nvidia-fabricmanager --no-pager").stdout
    assert "interface version 535.104.05 don't match with driver version 525.60.13" in journal
    sh(node, install + "--fabricmanager && systemctl reset-failed nvidia-fabricmanager")
    refused = sh(node, "gpuemu-cuda-app", check=False)
    assert refused.returncode == 1 and "cudaErrorSystemNotReady" in refused.stderr
    sh(node, "systemctl start nvidia-fabricmanager")
    assert sh(node, "systemctl is-active nvidia-fabricmanager").stdout.strip() == "active"
    fabric = "nvidia-smi --query-gpu=fabric.state,fabric.status --format=csv,noheader | sort -u"
    assert sh(node, fabric).stdout.strip() == "In Progress, N/A"
    assert sh(node, fabric).stdout.strip() == "Completed, Success"
    assert "CUDA context on GPU 0" in sh(node, "gpuemu-cuda-app").stdout
    sh(node, "systemctl stop nvidia-fabricmanager")
    assert sh(node, "gpuemu-cuda-app", check=False).returncode == 1
