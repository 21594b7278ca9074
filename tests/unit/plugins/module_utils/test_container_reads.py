# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""container_reads on real Docker 20.10 output (fixtures/docker_20.10, made by its capture.sh): the lab engine with
a container at Docker's defaults that wrote 8 MiB into its layer, one with --shm-size 8g, --ulimit memlock=4 MiB,
--network host and NVIDIA_VISIBLE_DEVICES under runc, and one created with --gpus '"device=0,1"'."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import container_reads

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "docker_20.10")


def fixture(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def test_every_capture_names_its_command_and_engine():
    for name in sorted(os.listdir(FIXTURES)):
        if name.endswith((".json", ".txt")):
            head = fixture(name).splitlines()[:2]
            assert head[0].startswith("# command: ") and "server 20.10.24" in head[1], name


def test_docker_info_gives_the_storage():
    info = container_reads.parse_docker_info(fixture("info.json"))
    assert info == {"version": "20.10.24+dfsg1", "root": "/var/lib/docker", "driver": "overlay2",
                    "backing_fs": "extfs", "d_type": True,
                    "runtimes": ["io.containerd.runc.v2", "io.containerd.runtime.v1.linux", "runc"],
                    "default_runtime": "runc"}


def test_d_type_false_and_absent():
    assert container_reads.parse_docker_info('{"DriverStatus": [["Supports d_type", "false"]]}')["d_type"] is False
    assert container_reads.parse_docker_info('{"Driver": "vfs", "DriverStatus": []}')["d_type"] is None


def test_inspect_gives_each_containers_data_path():
    found = dict((item["name"], item) for item in container_reads.parse_containers(fixture("inspect_containers.json")))
    default = found["gpuops-ctaudit-capture-default"]
    assert default["shm_size"] == 64 << 20 and default["memlock"] is None and default["network_mode"] == "none"
    assert default["writable_bytes"] == 8 << 20 and default["running"] and default["pid"]
    assert default["gpu"] is None
    tuned = found["gpuops-ctaudit-capture-tuned"]
    assert tuned["shm_size"] == 8 << 30 and tuned["memlock"] == {"soft": 4 << 20, "hard": 4 << 20}
    assert tuned["network_mode"] == "host" and tuned["writable_bytes"] == 0
    # NVIDIA_VISIBLE_DEVICES gives no GPU under runc: only the Container Toolkit's runtime reads it.
    assert tuned["gpu"] is None
    gpus = found["gpuops-ctaudit-capture-gpus"]
    assert gpus["gpu"] == "device request: 0,1" and not gpus["running"] and gpus["pid"] is None


def test_visible_devices_under_the_nvidia_runtime_hold_a_gpu():
    text = ('[{"Name": "/job", "HostConfig": {"Runtime": "nvidia"}, "Config": {"Env": ["NVIDIA_VISIBLE_DEVICES=all"]}},'
            ' {"Name": "/idle", "HostConfig": {"Runtime": "nvidia"}, "Config": {"Env": ["NVIDIA_VISIBLE_DEVICES=void"]}},'
            ' {"Name": "/dev", "HostConfig": {"Devices": [{"PathOnHost": "/dev/nvidia3"}]}, "Config": {}}]')
    holders = [item["gpu"] for item in container_reads.parse_containers(text)]
    assert holders == ["NVIDIA_VISIBLE_DEVICES=all under the nvidia runtime", None, "device: /dev/nvidia3"]


def test_image_inspect_gives_size_and_cuda():
    images = container_reads.parse_images(fixture("image_inspect.json"))
    tags = [image["tags"] for image in images]
    assert tags == [["gpuops-lab/debian12:ac9129d5e3fcef80", "gpuops-lab/debian12:lab"], ["gpuops-ctaudit-capture/cuda:13.0"]]
    assert images[0]["cuda"] is None and images[0]["size"] == 227892165
    assert images[1]["cuda"] == "13.0" and images[1]["cuda_source"] == "NVIDIA_REQUIRE_CUDA=cuda>=13.0"
    assert images[0]["id"] == "8fbf6186b35b"


@pytest.mark.parametrize("env, wanted", [
    ({"NVIDIA_REQUIRE_CUDA": "cuda>=12.4 brand=tesla,driver>=470,driver<471"}, "12.4"),
    ({"CUDA_VERSION": "11.8.0"}, "11.8"),
    ({"NVIDIA_REQUIRE_CUDA": "brand=tesla", "CUDA_VERSION": "12.2.2"}, "12.2"),
    ({}, None),
])
def test_cuda_requirement(env, wanted):
    assert container_reads.cuda_requirement(env)[0] == wanted


def test_limits_give_memlock_in_bytes():
    assert container_reads.parse_memlock_limit(fixture("limits_tuned.txt")) == {"soft": 4 << 20, "hard": 4 << 20}
    assert container_reads.parse_memlock_limit("Max locked memory         unlimited            unlimited            "
                                               "bytes\n") == {"soft": -1, "hard": -1}
    assert container_reads.parse_memlock_limit("") is None


def test_shm_size_from_the_containers_mountinfo():
    default = container_reads.parse_mountinfo(fixture("shm_mountinfo_default.txt"))
    tuned = container_reads.parse_mountinfo(fixture("shm_mountinfo_tuned.txt"))
    assert container_reads.tmpfs_size(default) == 64 << 20
    assert container_reads.tmpfs_size(tuned) == 8 << 30


def test_the_mount_of_a_path_is_the_longest_mount_point_above_it():
    mounts = container_reads.parse_mountinfo(
        "21 1 254:1 / / rw - ext4 /dev/vda1 rw\n"
        "40 21 0:50 / /var/lib rw - nfs4 filer:/export rw,vers=4.2\n"
        "41 21 0:51 / /var/lib/docker\\040old rw - xfs /dev/sdb rw\n")
    assert container_reads.mount_of("/var/lib/docker", mounts)["fstype"] == "nfs4"
    assert container_reads.mount_of("/var/lib/docker old/x", mounts)["fstype"] == "xfs"
    assert container_reads.mount_of("/srv", mounts)["source"] == "/dev/vda1"
    assert container_reads.is_network_filesystem("nfs4") and not container_reads.is_network_filesystem("ext4")


def test_podman_names_the_memlock_ulimit_by_its_kernel_name():
    text = ('[{"Name": "job", "HostConfig": {"Ulimits": [{"Name": "RLIMIT_NOFILE", "Soft": 1048576, "Hard": 1048576},'
            ' {"Name": "RLIMIT_MEMLOCK", "Soft": -1, "Hard": -1}]}, "Config": {}}]')
    assert container_reads.parse_containers(text)[0]["memlock"] == {"soft": -1, "hard": -1}


def test_a_real_podman_container_holding_a_gpu_through_cdi():
    """Podman 4.3's inspect is Docker's shape; a CDI device shows as the device nodes its spec gives."""
    path = os.path.join(os.path.dirname(FIXTURES), "podman_4.3", "container_inspect.json")
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    assert text.startswith("# command: podman container inspect --size")
    container = container_reads.parse_containers(text)[0]
    assert container["name"] == "ctaudit-cdi" and container["gpu"] == "device: /dev/nvidia3"
    # Podman's default /dev/shm: 65536000 bytes (62.5 MiB), under Docker's 64 MiB.
    assert container["shm_size"] == 65536000 and container["memlock"] is None
    assert container["network_mode"] == "none" and container["writable_bytes"] == 450 and container["pid"]
