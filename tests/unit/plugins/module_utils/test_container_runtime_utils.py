# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container data path's parsers: containerd's imports, Docker's size strings and what a CDI spec describes
(the spec the emulator's nvidia-ctk, Container Toolkit v1.19.1 behaviour, generates)."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import container_runtime
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api

DROP_IN = "/etc/containerd/conf.d/99-nvidia.toml"


@pytest.mark.parametrize("text, imports", [
    ('version = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\n', ["/etc/containerd/conf.d/*.toml"]),
    ("imports = [\n  '/a.toml', # mine\n  \"/etc/containerd/conf.d/*.toml\",\n]\nversion = 3\n",
     ["/a.toml", "/etc/containerd/conf.d/*.toml"]),
    ('# imports = ["/etc/containerd/conf.d/*.toml"]\nversion = 2\n', []),
    # An imports key inside a table is another plugin's option, not containerd's imports.
    ('version = 2\n[plugins.x]\nimports = ["/etc/containerd/conf.d/*.toml"]\n', []),
    ("", []),
])
def test_containerd_imports_are_the_top_level_array(text, imports):
    assert container_runtime.containerd_imports(text) == imports


@pytest.mark.parametrize("imports, loads", [
    (["/etc/containerd/conf.d/*.toml"], True),
    (["/etc/containerd/conf.d/99-nvidia.toml"], True),
    (["/etc/containerd/conf.d/99-*.toml"], True),
    (["/etc/containerd/conf.d/*.conf"], False),
    (["/etc/containerd/other.d/*.toml"], False),
    ([], False),
])
def test_whether_containerd_loads_the_drop_in(imports, loads):
    assert container_runtime.imports_drop_in(imports, DROP_IN) is loads


@pytest.mark.parametrize("imports, loads", [
    (["conf.d/*.toml"], True),
    (["./conf.d/99-nvidia.toml"], True),
    (["/etc/containerd/other.d/../conf.d/*.toml"], True),
    (["other.d/*.toml"], False),
])
def test_a_relative_import_is_taken_from_the_config_s_folder(imports, loads):
    assert container_runtime.imports_drop_in(imports, DROP_IN, "/etc/containerd/config.toml") is loads


@pytest.mark.parametrize("text, disabled", [
    # Docker's containerd.io package ships this config.toml.
    ('disabled_plugins = ["cri"]\n', True),
    ('version = 2\ndisabled_plugins = ["io.containerd.grpc.v1.cri"]\n', True),
    ('version = 3\ndisabled_plugins = [\n  "io.containerd.cri.v1.runtime",\n]\n', True),
    ('#disabled_plugins = ["cri"]\nversion = 2\n', False),
    ('version = 2\ndisabled_plugins = ["io.containerd.snapshotter.v1.btrfs"]\n', False),
    ('version = 2\n[plugins."io.containerd.grpc.v1.cri".cni]\n  bin_dir = "/usr/lib/cni"\n', False),
    ("", False),
])
def test_whether_containerd_s_cri_plugin_is_disabled(text, disabled):
    assert container_runtime.containerd_cri_disabled(text) is disabled


@pytest.mark.parametrize("size", ["64m", "1g", "16g", "8GiB", "512MB", "1.5g", "1073741824", "2 GB"])
def test_docker_sizes(size):
    assert container_runtime.valid_size(size)


@pytest.mark.parametrize("size", ["lots", "", "-1g", "1x", "g", "1gg"])
def test_not_docker_sizes(size):
    assert not container_runtime.valid_size(size)


def generated_spec(tmp_path, change=None):
    state = api.new_state("a100_8x_mig")
    if change:
        change(state)
    path = str(tmp_path / "state.json")
    api.write_state(state, path)
    rc, out, err = api.run("nvidia-ctk", ["cdi", "generate", "--device-name-strategy=index",
                                          "--device-name-strategy=uuid"], path)
    assert rc == 0, err
    return out, state


def test_a_spec_names_each_gpu_by_index_and_uuid_and_its_driver(tmp_path):
    text, state = generated_spec(tmp_path)
    summary = container_runtime.cdi_summary(text)
    expected = [name for gpu in state["gpus"] for name in (str(gpu["index"]), gpu["uuid"])] + ["all"]
    assert summary["devices"] == expected
    assert summary["driver_version"] == state["driver_version"]
    assert "/dev/nvidia0" in summary["paths"] and "/dev/nvidiactl" in summary["paths"]


def test_a_driver_upgrade_changes_the_driver_and_its_libraries_and_keeps_the_devices(tmp_path):
    before, dummy = generated_spec(tmp_path)
    after, dummy = generated_spec(tmp_path, lambda state: state.update(driver_version="580.65.06"))
    changes = container_runtime.cdi_changes(before, after)
    assert changes["driver_version"] == {"before": "570.124.06", "after": "580.65.06"}
    assert "/usr/lib/x86_64-linux-gnu/libcuda.so.580.65.06" in changes["paths_added"]
    assert "/usr/lib/x86_64-linux-gnu/libcuda.so.570.124.06" in changes["paths_removed"]
    assert "devices_added" not in changes and "devices_removed" not in changes
    assert container_runtime.cdi_changes(after, after) == {}
