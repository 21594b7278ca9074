# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The containers area's verdicts, each naming the container or image and the fix."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_container_checks import container_checks

LIMITS = {"audit_container_free_space_gib": 20, "audit_container_writable_layer_mib": 1024}
DRIVER = {"driver_version": "570.124.06", "cuda_version": "12.8"}
JOB = {"id": "0123456789ab", "name": "train", "image": "nvcr.io/nvidia/pytorch:25.01-py3", "running": True, "pid": 42,
       "gpu": "device request: 0", "shm_size": 16 << 30, "ipc_mode": "private", "memlock": {"soft": -1, "hard": -1},
       "network_mode": "host", "writable_bytes": 10 << 20, "memlock_in_process": {"soft": -1, "hard": -1},
       "shm_in_process": 16 << 30}
DOCKER = {"name": "docker", "path": "/usr/bin/docker", "problem": None,
          "storage": {"version": "20.10.24", "root": "/var/lib/docker", "driver": "overlay2", "backing_fs": "extfs",
                      "d_type": True, "runtimes": ["runc"], "default_runtime": "runc"},
          "filesystem": {"path": "/var/lib/docker", "problem": None, "mount_point": "/", "fstype": "ext4",
                         "source": "/dev/nvme0n1p2", "network": False, "device": "nvme0n1", "rotational": False,
                         "free_bytes": 200 << 30, "total_bytes": 900 << 30},
          "containers": [JOB],
          "images": [{"id": "abcdefabcdef", "tags": ["cuda:13.0"], "size": 5 << 30, "cuda": "13.0",
                      "cuda_source": "NVIDIA_REQUIRE_CUDA=cuda>=13.0", "require_disabled": False}]}


def checks(runtime=None, rdma=(), driver=None, limits=None):
    fact = {"looked_for": ["docker", "podman"], "runtimes": [runtime or DOCKER]}
    found = container_checks(fact, limits or LIMITS, list(rdma), driver or DRIVER)
    assert all(item["area"] == "containers" for item in found)
    return dict((item["id"], item) for item in found)


def changed(**changes):
    runtime = copy.deepcopy(DOCKER)
    for path, value in changes.items():
        where = runtime
        keys = path.split("__")
        for key in keys[:-1]:
            where = where[int(key)] if key.isdigit() else where[key]
        where[keys[-1]] = value
    return runtime


def test_a_tuned_gpu_container_on_local_flash_passes_and_the_image_below_its_floor_fails():
    found = checks()
    verdicts = dict((key, item["verdict"]) for key, item in found.items())
    assert verdicts == {"containers.docker.data_root": "PASS", "containers.docker.d_type": "PASS",
                        "containers.docker.free_space": "PASS", "containers.docker.train.writable_layer": "PASS",
                        "containers.docker.train.shm": "PASS", "containers.docker.train.memlock": "PASS",
                        "containers.docker.train.network": "PASS", "containers.docker.image.cuda:13.0": "FAIL"}
    image = found["containers.docker.image.cuda:13.0"]
    assert "cuda:13.0 cannot initialise CUDA" in image["reason"] and "580" in image["reason"]
    assert "5 GiB" in image["actual"]


def test_an_image_the_driver_runs_passes_with_its_size():
    found = checks(driver={"driver_version": "580.65.06", "cuda_version": "13.0"})
    image = found["containers.docker.image.cuda:13.0"]
    assert image["verdict"] == "PASS" and "5 GiB" in image["reason"]


def test_an_image_under_minor_version_compatibility_warns_that_the_toolkit_may_refuse_it():
    runtime = changed(images__0__cuda="12.9", images__0__cuda_source="NVIDIA_REQUIRE_CUDA=cuda>=12.9")
    image = checks(runtime)["containers.docker.image.cuda:13.0"]
    assert image["verdict"] == "WARN" and "NVIDIA_REQUIRE_CUDA" in image["reason"]


def test_no_driver_skips_the_image():
    image = checks(driver={"driver_version": None, "cuda_version": None})["containers.docker.image.cuda:13.0"]
    assert image["verdict"] == "SKIP"


@pytest.mark.parametrize("changes, check_id, verdict, words", [
    ({"filesystem__fstype": "nfs4", "filesystem__network": True}, "data_root", "FAIL", ["network", "data-root"]),
    ({"filesystem__rotational": True, "filesystem__device": "sda"}, "data_root", "WARN", ["rotational", "sda"]),
    ({"storage__d_type": False, "storage__backing_fs": "xfs"}, "d_type", "FAIL", ["d_type", "ftype=1"]),
    ({"filesystem__free_bytes": 5 << 30}, "free_space", "WARN", ["5 GiB free", "audit_container_free_space_gib"]),
    ({"containers__0__writable_bytes": 1 << 30}, "train.writable_layer", "WARN", ["train", "1 GiB", "bind mount"]),
    ({"containers__0__shm_in_process": 64 << 20}, "train.shm", "WARN", ["train", "64 MiB", "--shm-size"]),
    ({"containers__0__memlock_in_process": {"soft": 8 << 20, "hard": 8 << 20}}, "train.memlock", "FAIL",
     ["train", "8 MiB", "memlock=-1"]),
    ({"containers__0__network_mode": "bridge"}, "train.network", "WARN", ["train", "bridge", "mlx5_0", "--network host"]),
])
def test_each_fault_names_what_and_the_fix(changes, check_id, verdict, words):
    found = checks(changed(**changes), rdma=["mlx5_0"])["containers.docker." + check_id]
    assert found["verdict"] == verdict, found
    for word in words:
        assert word in found["reason"] or word in found["actual"], (word, found)


def test_shm_and_memlock_fall_back_to_what_the_runtime_says():
    runtime = changed(containers__0__shm_in_process=None, containers__0__memlock_in_process=None,
                      containers__0__shm_size=64 << 20, containers__0__memlock=None)
    found = checks(runtime)
    assert found["containers.docker.train.shm"]["verdict"] == "WARN"
    assert found["containers.docker.train.memlock"]["verdict"] == "SKIP"
    host_ipc = checks(changed(containers__0__shm_in_process=None, containers__0__ipc_mode="host"))
    assert host_ipc["containers.docker.train.shm"]["verdict"] == "PASS"


def test_a_bridge_network_passes_without_rdma_devices():
    assert checks(changed(containers__0__network_mode="bridge"))["containers.docker.train.network"]["verdict"] == "PASS"


def test_the_writable_layer_threshold_is_the_input():
    runtime = changed(containers__0__writable_bytes=300 << 20)
    assert checks(runtime)["containers.docker.train.writable_layer"]["verdict"] == "PASS"
    lower = dict(LIMITS, audit_container_writable_layer_mib=256)
    assert checks(runtime, limits=lower)["containers.docker.train.writable_layer"]["verdict"] == "WARN"


def test_containers_without_a_gpu_are_left_alone():
    found = checks(changed(containers__0__gpu=None, containers__0__memlock_in_process={"soft": 0, "hard": 0}))
    assert found["containers.docker.gpu_containers"]["verdict"] == "SKIP"
    assert not [key for key in found if key.startswith("containers.docker.train")]


def test_a_daemon_that_does_not_answer_is_a_skip_naming_why():
    runtime = {"name": "docker", "path": "/usr/bin/docker", "problem": "docker info failed with exit code 1: Cannot "
               "connect to the Docker daemon", "storage": None, "filesystem": None, "containers": [], "images": []}
    found = checks(runtime)
    assert list(found) == ["containers.docker.read"] and found["containers.docker.read"]["verdict"] == "SKIP"
    assert "Cannot connect" in found["containers.docker.read"]["reason"]


def test_a_node_without_a_runtime_says_why_the_area_is_skipped():
    found = container_checks({"looked_for": ["docker", "podman"], "runtimes": []}, LIMITS, [], DRIVER)
    assert [(item["id"], item["verdict"]) for item in found] == [("containers.runtime", "SKIP")]
    assert "docker, podman" in found[0]["reason"]
    assert container_checks(None, LIMITS, [], DRIVER)[0]["verdict"] == "SKIP"
    assert container_checks(None, LIMITS, [], DRIVER, why_missing="docker hung")[0]["verdict"] == "FAIL"


def test_images_without_cuda_are_one_check_naming_the_largest():
    runtime = changed(images=[{"id": "%012d" % number, "tags": ["tool:%d" % number] if number else [],
                               "size": (number + 1) << 20, "cuda": None, "cuda_source": None,
                               "require_disabled": False} for number in range(7)])
    found = checks(runtime)
    assert not [key for key in found if ".image." in key]
    images = found["containers.docker.images"]
    assert images["verdict"] == "PASS" and images["actual"] == "7 image(s), 28 MiB"
    assert images["reason"].endswith("tool:6 (7 MiB), tool:5 (6 MiB), tool:4 (5 MiB), tool:3 (4 MiB), tool:2 (3 MiB)")
