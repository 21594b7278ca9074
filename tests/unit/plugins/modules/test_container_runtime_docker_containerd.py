# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The containerd that comes with Docker: `auto` leaves one whose CRI plugin is disabled (Docker's containerd.io
package ships `disabled_plugins = ["cri"]`) and configures one whose CRI runs (Debian 12's containerd 1.6.20,
docker.io's dependency, ships a config.toml with the CRI plugin on and no imports), naming both ways out."""

from __future__ import annotations

from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.test_container_runtime import (  # noqa: F401 pylint: disable=unused-import
    node, run)

# The shape of the config.toml each package ships (not the files): Docker's containerd.io disables the CRI
# plugin; Debian's containerd sets the CRI plugin's CNI folders and imports nothing.
CRI_DISABLED = 'disabled_plugins = ["cri"]\n'
CRI_ON_NO_IMPORTS = 'version = 2\n\n[plugins]\n  [plugins."io.containerd.grpc.v1.cri".cni]\n    bin_dir = "/usr/lib/cni"\n'


def test_auto_leaves_a_containerd_whose_cri_plugin_is_disabled(node):
    node.install("docker", "containerd")
    node.write("/etc/containerd/config.toml", CRI_DISABLED)
    result = run(node)
    assert not result["failed"], result
    assert result["engines"] == ["docker"] and "containerd" not in result["runtimes"]
    assert "CRI plugin is disabled" in result["left_alone"]["containerd.service"]
    assert not node.path("/etc/containerd/conf.d").exists()
    assert node.read("/etc/containerd/config.toml") == CRI_DISABLED


def test_a_containerd_named_is_configured_even_with_its_cri_disabled(node):
    node.install("containerd")
    node.write("/etc/containerd/config.toml", 'version = 2\nimports = ["conf.d/*.toml"]\ndisabled_plugins = ["cri"]\n')
    result = run(node, engines=["containerd"])
    assert not result["failed"], result
    assert node.path("/etc/containerd/conf.d/99-nvidia.toml").exists()


def test_debian_s_containerd_under_docker_names_both_ways_out(node):
    node.install("docker", "containerd")
    node.write("/etc/containerd/config.toml", CRI_ON_NO_IMPORTS)
    result = run(node)
    assert result["failed"]
    assert 'imports = ["/etc/containerd/conf.d/*.toml"]' in result["msg"]
    assert "container_runtime_engines: [docker]" in result["msg"]
    assert not node.path("/etc/docker/daemon.json").exists()
    assert not run(node, engines=["docker"])["failed"]
