# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_facts engine in a node call: a stand-in docker that answers with the real Docker 20.10 captures
(module_utils/fixtures/docker_20.10), a node tree with the data root's mount and disk, and the containers' /proc."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.gpuops.hardening.plugins.modules.node import main as node_main
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.stand_in_cli import stand_in, write_file

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "module_utils", "fixtures", "docker_20.10")
FEATURE = [{"name": "containers", "engine": "container_facts", "args": {}}]
# The fake answers each command the engine runs with the capture of that command, its "#" header left out.
FAKE_DOCKER = r'''#!%(python)s
import json, os, sys
fixtures = %(fixtures)r
with open(os.environ["FAKE_DOCKER_LOG"], "a") as log:
    log.write(json.dumps({"argv": sys.argv[1:], "lc_all": os.environ.get("LC_ALL")}) + "\n")
def show(name):
    with open(os.path.join(fixtures, name)) as handle:
        sys.stdout.write("".join(line for line in handle if not line.startswith("#")))
if os.environ.get("FAKE_DOCKER_DOWN"):
    sys.stderr.write("Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n")
    sys.exit(1)
answers = {"info": "info.json", "ps": "ps_running.txt", "container": "inspect_containers.json",
           "image": "image_inspect.json"}
words = sys.argv[1:]
if words[:2] == ["image", "ls"]:
    print("sha256:8fbf6186b35b111e3d6c7d9e5e0e15ed052d97b404ad61e6d77a666262fc3462")
    print("sha256:60e7d416e8188dae2a23f0e295e484528a563a3326dbbe2c881aed70ccb8d6ad")
    print("sha256:8fbf6186b35b111e3d6c7d9e5e0e15ed052d97b404ad61e6d77a666262fc3462")
else:
    show(answers[words[0]])
'''


def _capture(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return "".join(line for line in handle if not line.startswith("#"))


@pytest.fixture
def node(tmp_path, monkeypatch):
    root = tmp_path / "node"
    os.makedirs(str(root / "var/lib/docker"))
    write_file(str(root / "proc/self/mountinfo"), "21 1 254:1 / / rw,relatime - ext4 /dev/vda1 rw\n")
    disk = root / "sys/devices/virtual/block/vda"
    write_file(str(disk / "queue/rotational"), "1\n")
    write_file(str(disk / "vda1/partition"), "1\n")
    os.makedirs(str(root / "sys/dev/block"))
    os.symlink("../../devices/virtual/block/vda/vda1", str(root / "sys/dev/block/254:1"))
    inspected = json.loads(_capture("inspect_containers.json"))
    for item, name in ((item, item["Name"].rsplit("-", 1)[-1]) for item in inspected if item["State"]["Pid"]):
        write_file(str(root / "proc" / str(item["State"]["Pid"]) / "limits"), _capture("limits_%s.txt" % name))
        write_file(str(root / "proc" / str(item["State"]["Pid"]) / "mountinfo"), _capture("shm_mountinfo_%s.txt" % name))
    stand_in(tmp_path, monkeypatch, "docker", FAKE_DOCKER, FIXTURES)
    return root


def _read(root, check_mode=True):
    result = run_module(node_main, {"root": str(root), "features": FEATURE}, check_mode=check_mode)
    assert not result.get("failed"), result
    return result


def _calls(root):
    with open(str(root.parent / "docker.log"), encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def test_a_docker_node_gives_its_storage_containers_and_images(node):
    result = _read(node)
    assert not result["changed"]
    fact = result["ansible_facts"]["container_runtimes"]
    assert fact["looked_for"] == ["docker", "podman", "crictl"] and len(fact["runtimes"]) == 1
    docker = fact["runtimes"][0]
    assert docker["problem"] is None and docker["storage"]["driver"] == "overlay2" and docker["storage"]["d_type"]
    filesystem = docker["filesystem"]
    assert (filesystem["mount_point"], filesystem["fstype"], filesystem["device"], filesystem["rotational"]) == (
        "/", "ext4", "vda", True)
    assert not filesystem["network"] and filesystem["free_bytes"] > 0
    containers = dict((item["name"], item) for item in docker["containers"])
    tuned = containers["gpuops-ctaudit-capture-tuned"]
    assert tuned["memlock_in_process"] == {"soft": 4 << 20, "hard": 4 << 20} and tuned["shm_in_process"] == 8 << 30
    assert containers["gpuops-ctaudit-capture-default"]["shm_in_process"] == 64 << 20
    assert [image["cuda"] for image in docker["images"]] == [None, "13.0"]


def test_every_command_is_an_argv_list_in_the_c_locale_and_each_image_is_asked_once(node):
    _read(node)
    calls = _calls(node)
    assert [call["argv"][:2] for call in calls] == [["info", "--format"], ["ps", "--quiet"], ["container", "inspect"],
                                                    ["image", "ls"], ["image", "inspect"]]
    assert all(call["lc_all"] == "C" for call in calls)
    assert calls[0]["argv"] == ["info", "--format", "{{json .}}"]
    assert len(calls[-1]["argv"]) == 4, "an image listed under two tags is inspected once"


def _without_free_space(result):
    """The fact less the free space, which the real run's lock and converge stamp take a block of."""
    for runtime in result["ansible_facts"]["container_runtimes"]["runtimes"]:
        runtime["filesystem"].pop("free_bytes")
    return result["ansible_facts"]


def test_check_mode_and_a_real_run_read_the_same(node):
    assert _without_free_space(_read(node, check_mode=True)) == _without_free_space(_read(node, check_mode=False))


def test_a_daemon_that_does_not_answer_is_reported_not_failed(node, monkeypatch):
    monkeypatch.setenv("FAKE_DOCKER_DOWN", "1")
    docker = _read(node)["ansible_facts"]["container_runtimes"]["runtimes"][0]
    assert "Cannot connect to the Docker daemon" in docker["problem"] and docker["storage"] is None


def test_a_node_without_a_runtime_pays_only_the_lookups(node, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    fact = _read(node)["ansible_facts"]["container_runtimes"]
    assert fact == {"looked_for": ["docker", "podman", "crictl"], "runtimes": []}
    assert not os.path.exists(str(tmp_path / "docker.log"))
