# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The crictl parsers on JSON written from cri-tools', the CRI API's and containerd's sources (fixtures/cri_written/,
each file's header names them): no Debian release packages crictl, so there is no capture to hold them to."""

from __future__ import annotations

import json
import os

from ansible_collections.gpuops.hardening.plugins.module_utils import cri_reads
from ansible_collections.gpuops.hardening.plugins.module_utils.container_reads import json_document

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "cri_written")
TRAINER = "4f1c0e6a9b2d7c3e8f5a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e"


def _written(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def test_ps_lists_the_running_containers_ids_in_order():
    assert cri_reads.parse_ps(_written("ps.json")) == [
        TRAINER, "b7e6d5c4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6",
        "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00"]
    assert cri_reads.parse_ps('{"containers": []}') == []


def test_stats_gives_each_writable_layer_from_its_uint64_string():
    assert cri_reads.parse_stats(_written("stats.json")) == {
        TRAINER: 2147483648, "b7e6d5c4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6": 8192}


def test_inspect_reads_each_container_in_the_docker_reading_s_shape():
    trainer, serve, shipper = cri_reads.parse_inspect(_written("inspect.json"), cri_reads.parse_stats(_written("stats.json")))
    assert trainer == {
        "id": TRAINER[:12], "name": "trainer", "image": "registry.example/train:24.05", "running": True, "pid": 4242,
        "gpu": "device: /dev/nvidia0", "shm_size": None, "ipc_mode": "pod",
        "memlock": {"soft": 67108864, "hard": 67108864}, "network_mode": "pod", "writable_bytes": 2147483648}
    # A CDI device is named as asked for; no network namespace is the host's network; RLIM_INFINITY is unlimited.
    assert serve["gpu"] == "CDI device: nvidia.com/gpu=1" and serve["network_mode"] == "host"
    assert serve["memlock"] == {"soft": -1, "hard": -1} and serve["shm_size"] == 8 << 30
    assert serve["writable_bytes"] == 8192
    assert shipper["gpu"] is None and shipper["memlock"] is None and shipper["writable_bytes"] is None


def test_one_id_is_one_object_not_a_list():
    # crictl prints a lone id's {"status", "info"} bare (cri-tools outputStatusData, "Old behavior").
    one = json.dumps(json_document(_written("inspect.json"))[0])
    assert [item["name"] for item in cri_reads.parse_inspect(one)] == ["trainer"]


def test_nvidia_visible_devices_holds_a_gpu_only_under_the_nvidia_runtime():
    spec = '{"status": {"id": "%s", "metadata": {"name": "x"}}, "info": {"runtimeType": "io.containerd.runc.v2", ' \
           '"runtimeOptions": {"binary_name": "%s"}, "runtimeSpec": {"process": {"env": ["NVIDIA_VISIBLE_DEVICES=all"]}}}}'
    assert cri_reads.parse_inspect(spec % (TRAINER, "/usr/bin/nvidia-container-runtime"))[0]["gpu"] == (
        "NVIDIA_VISIBLE_DEVICES=all under the io.containerd.runc.v2 /usr/bin/nvidia-container-runtime runtime")
    assert cri_reads.parse_inspect(spec % (TRAINER, "runc"))[0]["gpu"] is None
