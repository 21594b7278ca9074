# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.hardening.container_runtime never loses an administrator's drop-in: the old one is kept outside the
folders the engines read whole, and a warning names what the NVIDIA drop-in does not carry over."""

from __future__ import annotations

import os

from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.test_container_runtime import (  # noqa: F401 pylint: disable=unused-import
    node, run)

BACKUPS = "/var/lib/gpuops-hardening/backups/container_runtime"
ADMIN_DROP_IN = ('[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kata]\n'
                 '  runtime_type = "io.containerd.kata.v2"\n')


def kept(node):
    folder = node.path(BACKUPS)
    return sorted(os.listdir(folder)) if folder.exists() else []


def test_an_administrator_s_containerd_drop_in_is_kept_and_its_lost_table_named(node):
    node.install("containerd")
    node.write("/etc/containerd/config.toml", 'version = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\n')
    node.write("/etc/containerd/conf.d/99-nvidia.toml", ADMIN_DROP_IN)
    checked = run(node, check_mode=True)
    assert any("runtimes.kata]" in warning for warning in checked["warnings"]), checked["warnings"]
    assert kept(node) == []
    result = run(node)
    assert not result["failed"], result
    [copy] = kept(node)
    assert copy.startswith("99-nvidia.toml.") and copy.endswith("~")
    assert node.read(BACKUPS + "/" + copy) == ADMIN_DROP_IN
    assert result["backups"] == {str(node.path("/etc/containerd/conf.d/99-nvidia.toml")): str(node.path(BACKUPS + "/" + copy))}
    assert os.listdir(node.path("/etc/containerd/conf.d")) == ["99-nvidia.toml"]


def test_a_crio_drop_in_is_kept_out_of_the_folder_crio_reads_whole(node):
    node.install("crio")
    node.write("/etc/crio/crio.conf.d/99-nvidia.toml", "[crio.runtime]\nlog_level = \"debug\"\n")
    result = run(node)
    assert not result["failed"], result
    assert len(kept(node)) == 1
    assert os.listdir(node.path("/etc/crio/crio.conf.d")) == ["99-nvidia.toml"]
    again = run(node)
    assert not again["changed"] and again["backups"] == {} and len(kept(node)) == 1
