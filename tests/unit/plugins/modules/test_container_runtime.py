# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.hardening.container_runtime on an emulated node: the emulator's nvidia-ctk (Container Toolkit v1.19.1
behaviour) says what each file holds; the engine writes only what differs, keeps every other key, refuses what
would lose data or stop containers before any change, and check mode predicts it."""

from __future__ import annotations

import json

import pytest

from ansible_collections.gpuops.hardening.plugins.modules.container_runtime import main as container_runtime_main
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.container_node import ContainerNode
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module

DAEMON_JSON = '{\n  "data-root": "/srv/docker",\n  "log-driver": "json-file"\n}\n'
CONTAINERD_CONFIG = ('# the administrator\'s comment\nversion = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\n\n'
                     '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
                     '  runtime_type = "io.containerd.runc.v2"\n')


@pytest.fixture
def node(tmp_path, monkeypatch):
    built = ContainerNode(tmp_path)
    with built.systemd_and_docker(monkeypatch):
        yield built


def run(node, check_mode=False, **args):
    return run_module(container_runtime_main, node.args(**args), check_mode=check_mode, diff=True)


def test_docker_gets_the_nvidia_runtime_and_the_shm_default_and_keeps_every_other_key(node):
    node.install("docker")
    node.write("/etc/docker/daemon.json", DAEMON_JSON)
    result = run(node, shm_size="8g")
    assert not result["failed"], result
    written = node.read("/etc/docker/daemon.json")
    data = json.loads(written)
    assert data["runtimes"] == {"nvidia": {"path": "nvidia-container-runtime", "args": []}}
    assert data["default-shm-size"] == "8g"
    assert list(data)[:2] == ["data-root", "log-driver"]
    # The administrator's layout stays: two spaces, the first lines as they were.
    assert written.startswith('{\n  "data-root": "/srv/docker",\n  "log-driver": "json-file",\n')
    assert "default-runtime" not in data
    assert result["runtimes"]["docker"]["keys_changed"] == ["runtimes", "default-shm-size"]
    # dockerd re-reads runtimes and default-shm-size on SIGHUP: a reload, never a restart.
    assert result["services"] == {"docker.service": "reloaded"}
    assert "reload docker.service" in node.calls and not any(call.startswith("restart") for call in node.calls)
    again = run(node, shm_size="8g")
    assert not again["changed"] and again["services"] == {}, again


def test_set_default_makes_nvidia_docker_s_default_runtime(node):
    node.install("docker")
    result = run(node, set_default=True)
    assert json.loads(node.read("/etc/docker/daemon.json"))["default-runtime"] == "nvidia"
    assert result["runtimes"]["docker"]["keys_changed"] == ["default-runtime", "runtimes"]


def test_an_invalid_daemon_json_fails_before_any_change(node):
    node.install("docker", "containerd")
    node.write("/etc/docker/daemon.json", "{ not json")
    result = run(node)
    assert result["failed"] and "/etc/docker/daemon.json is not valid JSON" in result["msg"]
    assert node.read("/etc/docker/daemon.json") == "{ not json"
    assert not node.path("/etc/containerd/conf.d").exists() and node.calls == []


def test_containerd_gets_the_toolkit_drop_in_and_its_config_is_left_as_it_was(node):
    node.install("containerd")
    node.write("/etc/containerd/config.toml", CONTAINERD_CONFIG)
    result = run(node)
    assert not result["failed"], result
    drop_in = node.read("/etc/containerd/conf.d/99-nvidia.toml")
    assert 'BinaryName = "/usr/bin/nvidia-container-runtime"' in drop_in
    assert node.read("/etc/containerd/config.toml") == CONTAINERD_CONFIG
    # containerd reads its configuration only as it starts; its shims keep the containers running.
    assert result["services"] == {"containerd.service": "restarted"}
    assert not run(node)["changed"]


def test_a_containerd_config_that_does_not_import_the_drop_in_is_a_clear_error(node):
    node.install("containerd", "docker")
    node.write("/etc/containerd/config.toml", "version = 2\n")
    result = run(node)
    assert result["failed"]
    assert "does not import /etc/containerd/conf.d/99-nvidia.toml" in result["msg"]
    assert 'imports = ["/etc/containerd/conf.d/*.toml"]' in result["msg"]
    assert not node.path("/etc/containerd/conf.d").exists() and not node.path("/etc/docker/daemon.json").exists()


def test_a_missing_containerd_config_gets_the_toolkit_s_import(node):
    node.install("containerd", running=False)
    result = run(node)
    assert not result["failed"], result
    config = node.read("/etc/containerd/config.toml")
    assert '"/etc/containerd/conf.d/*.toml"' in config and "gpuops-container-runtime" not in config
    assert result["services"] == {}


def test_crio_gets_its_drop_in_in_the_folder_it_reads(node):
    node.install("crio")
    result = run(node)
    assert not result["failed"], result
    assert "[crio.runtime.runtimes.nvidia]" in node.read("/etc/crio/crio.conf.d/99-nvidia.toml")
    assert result["services"] == {"crio.service": "restarted"}


def test_the_cdi_spec_names_gpus_and_mig_devices_by_index_and_uuid(node):
    node.install("podman")
    result = run(node)
    assert not result["failed"], result
    assert result["engines"] == ["podman"] and result["runtimes"] == {}
    assert result["cdi"]["path"] == "/etc/cdi/nvidia.yaml"
    devices = result["cdi"]["devices"]
    assert "0" in devices and "all" in devices and any(name.startswith("GPU-") for name in devices)
    assert node.read("/etc/cdi/nvidia.yaml").startswith("---\ncdiVersion:")


def test_with_the_refresh_units_the_spec_is_theirs_and_they_are_enabled(node):
    node.install("podman")
    node.refresh_units()
    result = run(node)
    assert result["cdi"]["path"] == "/var/run/cdi/nvidia.yaml" and node.path("/var/run/cdi/nvidia.yaml").exists()
    assert node.enabled == {"nvidia-cdi-refresh.path", "nvidia-cdi-refresh.service"}
    assert "start nvidia-cdi-refresh.path" in node.calls and "nvidia-cdi-refresh.path" in node.active
    assert result["refresh_units"] == {"shipped": True, "changed": True}
    assert not run(node)["changed"]


def test_a_stale_spec_after_a_driver_upgrade_is_reported_item_by_item_and_repaired(node, tmp_path):
    node.install("podman")
    run(node)
    state = json.loads(open(node.state).read())
    state["driver_version"] = "580.65.06"
    open(node.state, "w").write(json.dumps(state))
    checked = run(node, check_mode=True)
    assert checked["changed"] and checked["cdi"]["stale"]
    assert checked["cdi"]["changes"]["driver_version"] == {"before": "570.124.06", "after": "580.65.06"}
    assert "/usr/lib/x86_64-linux-gnu/libcuda.so.570.124.06" in checked["cdi"]["changes"]["paths_removed"]
    assert "570.124.06" in node.read("/etc/cdi/nvidia.yaml")
    result = run(node)
    assert result["changed"] and "580.65.06" in node.read("/etc/cdi/nvidia.yaml")


def test_without_nvidia_ctk_it_fails_before_any_change_naming_the_package(node):
    node.install("docker")
    (node.tools / "nvidia-ctk").unlink()
    result = run(node, nvidia_ctk_path=None)
    assert result["failed"] and "nvidia-container-toolkit" in result["msg"] and "container_runtime_install" in result["msg"]
    assert not node.path("/etc/docker").exists()


def test_an_engine_named_but_not_installed_fails_before_any_change(node):
    node.install("docker")
    result = run(node, engines=["crio"])
    assert result["failed"] and "engines names crio, not installed" in result["msg"]
    assert not node.path("/etc/docker").exists()


def test_a_masked_docker_gets_its_file_and_is_left_alone(node):
    node.install("docker")
    node.mask("docker.service")
    result = run(node)
    assert not result["failed"], result
    assert "nvidia" in json.loads(node.read("/etc/docker/daemon.json"))["runtimes"]
    assert "docker.service" in result["left_alone"] and result["services"] == {}
    assert any("docker.service is masked" in warning for warning in result["warnings"])


def test_a_docker_restart_that_would_stop_containers_is_refused_and_listed(node):
    node.install("docker")
    node.reloadable.clear()
    node.run_containers("trainer", "notebook")
    result = run(node)
    assert result["failed"] and "notebook, trainer" in result["msg"] and "container_runtime_force_restart" in result["msg"]
    assert not node.path("/etc/docker/daemon.json").exists() and node.calls == []
    forced = run(node, force_restart=True)
    assert not forced["failed"] and forced["services"] == {"docker.service": "restarted"}


def test_live_restore_lets_docker_restart_under_running_containers(node):
    node.install("docker")
    node.reloadable.clear()
    node.run_containers("trainer")
    node.write("/etc/docker/daemon.json", '{"live-restore": true}\n')
    result = run(node)
    assert not result["failed"] and result["services"] == {"docker.service": "restarted"}


def test_check_mode_changes_nothing_and_says_what_the_run_does(node):
    node.install("docker", "containerd", "podman")
    node.write("/etc/containerd/config.toml", CONTAINERD_CONFIG)
    checked = run(node, check_mode=True, shm_size="1g")
    assert checked["changed"] and node.calls == [] and not node.path("/etc/docker").exists()
    assert not node.path("/etc/cdi").exists()
    done = run(node, shm_size="1g")
    for key in ("changed", "runtimes", "cdi", "services", "engines"):
        assert checked[key] == done[key], key
    assert checked["diff"] == done["diff"]


def test_a_restart_an_earlier_run_owed_is_made_by_the_next_one(node):
    node.install("containerd")
    node.write("/etc/containerd/config.toml", CONTAINERD_CONFIG)
    run(node)
    # A run killed after its writes, before the restart: the record it wrote first is left.
    node.write("/var/lib/gpuops-hardening/container-runtime-actions-pending.json", '{"units": ["containerd.service"]}\n')
    checked = run(node, check_mode=True)
    assert checked["changed"] and checked["services"] == {"containerd.service": "restarted"}
    result = run(node)
    assert result["services"] == {"containerd.service": "restarted"}
    assert not node.path("/var/lib/gpuops-hardening/container-runtime-actions-pending.json").exists()
    assert not run(node)["changed"]


def test_install_takes_the_toolkit_from_the_node_s_repositories(node):
    node.install("podman")
    (node.tools / "nvidia-ctk").rename(node.tools / "packaged-nvidia-ctk")
    # A stand-in apt-get, first on PATH: the package puts nvidia-ctk on PATH and records its arguments.
    (node.tools / "apt-get").write_text('#!/bin/sh\necho "$@" > %s/apt-get.args\ncp %s/packaged-nvidia-ctk %s/nvidia-ctk\n'
                                        % (node.tools, node.tools, node.tools))
    (node.tools / "apt-get").chmod(0o755)
    checked = run(node, check_mode=True, nvidia_ctk_path=None, install=True)
    assert checked["changed"] and checked["package_installed"] == "nvidia-container-toolkit"
    assert "would be installed" in checked["skipped_reason"] and not (node.tools / "nvidia-ctk").exists()
    result = run(node, nvidia_ctk_path=None, install=True)
    assert not result["failed"], result
    assert (node.tools / "apt-get.args").read_text().split() == ["install", "-y", "--no-install-recommends",
                                                                 "nvidia-container-toolkit"]
    assert result["nvidia_ctk"] == str(node.tools / "nvidia-ctk") and result["cdi"]["changed"]
