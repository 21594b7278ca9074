# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_runtime role's outcome in the audit: the role's engine run in check mode on an emulated node (the
emulator's nvidia-ctk, Container Toolkit v1.19.1 behaviour), its result judged as the audit judges it."""

from __future__ import annotations

import json

import pytest

from ansible_collections.gpuops.hardening.plugins.modules.container_runtime import main as container_runtime_main
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_container_runtime_checks import (
    container_runtime_checks,
)
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_document import node_document
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_html import render_fleet_report
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.container_node import ContainerNode
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module

CONTAINERD_CONFIG = 'version = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\n'
OPTED_IN = {"container_runtime_enabled": True, "container_runtime_shm_size": "16g"}


@pytest.fixture
def node(tmp_path, monkeypatch):
    built = ContainerNode(tmp_path)
    with built.systemd_and_docker(monkeypatch):
        built.install("docker", "containerd", "podman")
        built.write("/etc/containerd/config.toml", CONTAINERD_CONFIG)
        built.refresh_units()
        yield built


def converge(node, check_mode=False, shm_size="16g"):
    return run_module(container_runtime_main, node.args(shm_size=shm_size), check_mode=check_mode)


def audit(node, inputs=None):
    """The role's checks as the audit makes them: from its feature run in check mode."""
    checks = container_runtime_checks(converge(node, check_mode=True, shm_size=(inputs or OPTED_IN)[
        "container_runtime_shm_size"]), inputs or OPTED_IN)
    return dict((item["id"], item) for item in checks)


def verdicts(checks):
    return dict((check_id, item["verdict"]) for check_id, item in checks.items())


def test_a_node_that_does_not_opt_in_is_one_skip_saying_why():
    checks = container_runtime_checks(None, {"container_runtime_enabled": False})
    assert [(item["id"], item["verdict"]) for item in checks] == [("containers.nvidia_runtime", "SKIP")]
    assert "container_runtime_enabled is false" in checks[0]["reason"]
    assert all(item["area"] == "containers" for item in checks)


def test_a_converged_node_passes_every_check(node):
    assert not converge(node)["failed"]
    assert verdicts(audit(node)) == {
        "containers.containerd.nvidia_runtime": "PASS", "containers.docker.nvidia_runtime": "PASS",
        "containers.docker.default_shm_size": "PASS", "containers.cdi_spec": "PASS", "containers.cdi_refresh": "PASS"}


def test_a_node_the_role_never_ran_on_fails_each_check_naming_what_is_missing(node):
    checks = audit(node)
    assert set(verdicts(checks).values()) == {"FAIL"}
    assert "runtimes" in checks["containers.docker.nvidia_runtime"]["actual"]
    assert "/etc/containerd/conf.d/99-nvidia.toml" in checks["containers.containerd.nvidia_runtime"]["actual"]
    assert "16g" in checks["containers.docker.default_shm_size"]["reason"]
    assert "no /var/run/cdi/nvidia.yaml" in checks["containers.cdi_spec"]["reason"]


def test_a_spec_stale_after_a_driver_upgrade_fails_naming_the_versions_and_the_libraries(node):
    converge(node)
    state = json.loads(open(node.state).read())
    state["driver_version"] = "580.65.06"
    open(node.state, "w").write(json.dumps(state))
    checks = audit(node)
    spec = checks["containers.cdi_spec"]
    assert spec["verdict"] == "FAIL" and spec["actual"] == "stale"
    assert "made for driver 570.124.06, the node runs 580.65.06" in spec["reason"]
    assert "libcuda.so.570.124.06" in spec["reason"]
    assert checks["containers.docker.nvidia_runtime"]["verdict"] == "PASS"


def test_a_spec_that_only_lacks_new_devices_warns():
    state = {"changed": True, "runtimes": {}, "cdi": {
        "path": "/etc/cdi/nvidia.yaml", "changed": True, "stale": True, "devices": ["0", "all"],
        "changes": {"devices_added": ["0:1"], "paths_added": ["/dev/nvidia-caps/nvidia-cap21"]}},
        "refresh_units": {"shipped": False, "changed": False}}
    checks = dict((item["id"], item) for item in container_runtime_checks(state, OPTED_IN))
    assert checks["containers.cdi_spec"]["verdict"] == "WARN"
    assert "devices 0:1" in checks["containers.cdi_spec"]["reason"]
    assert checks["containers.cdi_refresh"]["verdict"] == "SKIP"


def test_files_in_place_that_the_daemon_has_not_read_fail(node):
    converge(node)
    # A run killed after its writes, before the restart: the record it wrote first is left.
    node.write("/var/lib/gpuops-hardening/container-runtime-actions-pending.json", '{"units": ["containerd.service"]}\n')
    checks = audit(node)
    containerd = checks["containers.containerd.nvidia_runtime"]
    assert containerd["verdict"] == "FAIL" and "containerd.service would be restarted" in containerd["reason"]
    assert checks["containers.docker.nvidia_runtime"]["verdict"] == "PASS"


def test_a_masked_engine_with_its_file_in_place_warns():
    state = {"changed": True, "runtimes": {"docker": {"path": "/etc/docker/daemon.json", "keys_changed": [],
                                                      "changed": False}},
             "left_alone": {"docker.service": "masked (/etc/systemd/system/docker.service -> /dev/null)"},
             "cdi": {}, "refresh_units": {}}
    checks = dict((item["id"], item) for item in container_runtime_checks(state, OPTED_IN))
    assert checks["containers.docker.nvidia_runtime"]["verdict"] == "WARN"
    assert "masked" in checks["containers.docker.nvidia_runtime"]["reason"]


def test_an_empty_shm_size_leaves_docker_s_default_and_is_a_skip(node):
    converge(node, shm_size="")
    inputs = {"container_runtime_enabled": True, "container_runtime_shm_size": ""}
    assert audit(node, inputs)["containers.docker.default_shm_size"]["verdict"] == "SKIP"


def test_a_refusal_is_a_fail_with_its_message(node):
    node.write("/etc/containerd/config.toml", "version = 2\n")
    checks = audit(node)
    assert list(checks) == ["containers.nvidia_runtime"]
    assert checks["containers.nvidia_runtime"]["verdict"] == "FAIL"
    assert "does not import /etc/containerd/conf.d/99-nvidia.toml" in checks["containers.nvidia_runtime"]["reason"]


def test_a_missing_toolkit_the_role_would_install_fails(node):
    state = {"changed": True, "package_installed": "nvidia-container-toolkit", "runtimes": {},
             "skipped_reason": "nvidia-container-toolkit would be installed"}
    checks = container_runtime_checks(state, OPTED_IN)
    assert [(item["id"], item["verdict"]) for item in checks] == [("containers.nvidia_runtime", "FAIL")]


def test_the_fleet_report_shows_them_under_the_containers_area(node):
    checks = list(audit(node).values())
    document = node_document("gpu-a", "training", checks, {})
    page = render_fleet_report([document])
    for item in checks:
        assert 'data-check="%s" data-area="containers"' % item["id"] in page
    assert "no /var/run/cdi/nvidia.yaml" in page
