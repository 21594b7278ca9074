# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's containers area on the real engines of the container lab node: playbooks/audit.yml reads Docker
20.10 and Podman 4.3 there (the container_facts feature of its node call) and judges GPU containers started as a
job would start them, holding an emulated GPU through its device node (--device /dev/nvidiaN)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

import container_lab
import node_limits

PREFIX = "ctaudit"
CUDA_IMAGE = "localhost/gpuops-lab/cuda13-test:1"
# The test image with the two variables NVIDIA's CUDA images set; the node's emulated driver (570.124.06, the
# a100_8x_mig profile) is below CUDA 13's floor (580).
CUDA_DOCKERFILE = 'FROM %s\nENV NVIDIA_REQUIRE_CUDA="cuda>=13.0" CUDA_VERSION=13.0.0\n' % container_lab.TEST_IMAGE
SLEEP = ["/bin/busybox", "sleep", "3600"]
DATA_ROOTS = {"docker": "/var/lib/docker", "podman": "/var/lib/containers"}


def start(name, *options):
    """A detached GPU container on the node's Docker; the CompletedProcess (not checked)."""
    argv = ["docker", "run", "--detach", "--name", "%s-%s" % (PREFIX, name), "--network", "none"] + list(options)
    return container_lab.docker("exec", container_lab.NODE, *(argv + [container_lab.TEST_IMAGE] + SLEEP), check=False)


def audit_document(inventory, report_dir):
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_PIPELINING="1",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(container_lab.REPO_ROOT, "playbooks", "collections"))
    done = subprocess.run(["ansible-playbook", "-i", inventory, "playbooks/audit.yml", "-e",
                           "audit_report_dir=%s" % report_dir], cwd=container_lab.REPO_ROOT, env=env,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    with open(os.path.join(report_dir, "nodes", "%s.json" % container_lab.NODE), encoding="utf-8") as handle:
        return dict((item["id"], item) for item in json.load(handle)["checks"] if item["area"] == "containers")


@pytest.fixture(scope="module")
def audited(node, inventory, tmp_path_factory):  # pylint: disable=unused-argument
    """The containers checks of an audit with the test containers running; the memlock=-1 container's start."""
    container_lab.sh("printf '%s' | docker build --quiet --tag %s - >/dev/null" % (CUDA_DOCKERFILE, CUDA_IMAGE))
    started = [start("writer", "--device", "/dev/nvidia0", "--shm-size", "1g", "--ulimit", "memlock=65536:65536"),
               start("shm", "--device", "/dev/nvidia1")]
    for done in started:
        assert done.returncode == 0, done.stderr
    unlimited = start("unlimited", "--device", "/dev/nvidia2", "--shm-size", "1g", "--ulimit", "memlock=-1:-1")
    # Podman holds its GPU through CDI, the spec the emulated nvidia-ctk writes.
    container_lab.generate_cdi_spec()
    container_lab.sh("podman run --detach --name %s-cdi --network none --device nvidia.com/gpu=3 %s %s >/dev/null"
                     % (PREFIX, container_lab.TEST_IMAGE, " ".join(SLEEP)))
    report_dir = str(tmp_path_factory.mktemp("audit-report"))
    with open(os.path.join(report_dir, "podman-inspect.json"), "w", encoding="utf-8") as handle:
        handle.write(container_lab.sh("podman container inspect --size %s-cdi" % PREFIX).stdout)
    container_lab.sh("docker exec %s-writer /bin/busybox dd if=/dev/zero of=/dataset.bin bs=1M count=1024 2>/dev/null"
                     % PREFIX)
    try:
        yield audit_document(inventory, report_dir), unlimited
    finally:
        container_lab.sh("docker rm --force %s-writer %s-shm %s-unlimited >/dev/null 2>&1; docker image rm %s >/dev/null;"
                         " podman rm --force --time 0 %s-cdi >/dev/null; rm -f /etc/cdi/nvidia.yaml"
                         % (PREFIX, PREFIX, PREFIX, CUDA_IMAGE, PREFIX), check=False)


def test_a_gigabyte_written_into_the_writable_layer_warns(audited):
    found = audited[0]["containers.docker.%s-writer.writable_layer" % PREFIX]
    assert found["verdict"] == "WARN" and "bind mount" in found["reason"], found


def test_the_default_shm_warns_and_a_larger_one_passes(audited):
    checks = audited[0]
    assert checks["containers.docker.%s-shm.shm" % PREFIX]["verdict"] == "WARN"
    assert checks["containers.docker.%s-shm.shm" % PREFIX]["actual"] == "64 MiB"
    assert checks["containers.docker.%s-writer.shm" % PREFIX]["verdict"] == "PASS"


def test_memlock_below_unlimited_fails_naming_the_fix(audited):
    found = audited[0]["containers.docker.%s-writer.memlock" % PREFIX]
    assert found["verdict"] == "FAIL" and "64 KiB" in found["actual"] and "memlock=-1" in found["reason"], found


def test_memlock_unlimited_passes(audited):
    checks, unlimited = audited
    withheld = container_lab.unlimited_memlock_withheld()
    if withheld:
        pytest.skip(withheld)
    assert unlimited.returncode == 0, unlimited.stderr
    assert checks["containers.docker.%s-unlimited.memlock" % PREFIX]["verdict"] == "PASS"


def test_an_image_needing_cuda_13_fails_on_a_driver_below_its_floor(audited):
    found = audited[0]["containers.docker.image.%s" % CUDA_IMAGE]
    assert found["verdict"] == "FAIL" and "cannot initialise CUDA" in found["reason"] and "580" in found["reason"]


def test_each_engine_is_read_with_its_storage(audited):
    checks = audited[0]
    for engine in ("docker", "podman"):
        assert "containers.%s.read" % engine not in checks, checks.get("containers.%s.read" % engine)
        # Both engines' data roots are volumes on this machine's ext4: overlay with d_type.
        assert checks["containers.%s.d_type" % engine]["verdict"] == "PASS"
        rotational = container_lab.data_root_rotational(DATA_ROOTS[engine])
        found = checks["containers.%s.data_root" % engine]
        assert found["verdict"] == node_limits.data_root_verdict(rotational), (rotational, found)


def test_a_podman_container_holding_a_gpu_through_cdi_is_judged(audited):
    checks = audited[0]
    assert checks["containers.podman.%s-cdi.shm" % PREFIX]["verdict"] == "WARN"
    assert checks["containers.podman.%s-cdi.writable_layer" % PREFIX]["verdict"] == "PASS"
    # Started without --ulimit: Podman gives defaults to nofile and nproc only (podman-run(1), --ulimit), so the
    # container keeps the memlock of the node's shell that ran podman.
    found = checks["containers.podman.%s-cdi.memlock" % PREFIX]
    assert found["verdict"] == node_limits.memlock_verdict(*container_lab.memlock_limits()), found
