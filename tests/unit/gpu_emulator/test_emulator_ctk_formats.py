# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The writers behind the emulated nvidia-ctk: go-toml v1.9.5's Tree.Marshal
(tomltree_write.go), Go's encoding/json, and the CDI spec YAML of toolkit v1.19.1."""

from __future__ import annotations

import tomllib

import yaml

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import ctk_json, ctk_toml, ctk_yaml

CONTAINERD = """version = 2
root = "/var/lib/containerd"
oom_score = 0
imports = []

[grpc]
  address = "/run/containerd/containerd.sock"
  max_recv_message_size = 16777216

[plugins."io.containerd.gc.v1.scheduler"]
  pause_threshold = 0.02
  deletion_threshold = 0

[plugins."io.containerd.grpc.v1.cri".registry.mirrors."docker.io"]
  endpoint = ["https://mirror.example", "https://registry-1.docker.io"]

[[proxy.list]]
  name = "a"
[[proxy.list]]
  name = "b"
"""


def test_go_toml_layout_plain_values_first_then_tables_sorted():
    text = ctk_toml.dumps(ctk_toml.loads(CONTAINERD))
    assert text.startswith('imports = []\noom_score = 0\nroot = "/var/lib/containerd"\nversion = 2\n\n[grpc]\n'
                           '  address = "/run/containerd/containerd.sock"\n  max_recv_message_size = 16777216\n')
    assert '\n  [plugins."io.containerd.gc.v1.scheduler"]\n    deletion_threshold = 0\n    pause_threshold = 0.02\n' in text
    assert '[plugins."io.containerd.grpc.v1.cri".registry.mirrors."docker.io"]\n' in text
    assert '        endpoint = ["https://mirror.example", "https://registry-1.docker.io"]\n' in text
    assert '\n  [[proxy.list]]\n    name = "a"\n\n  [[proxy.list]]\n    name = "b"\n' in text
    # Every key and value survives the rewrite.
    assert tomllib.loads(text) == tomllib.loads(CONTAINERD)


def test_go_toml_scalars():
    assert ctk_toml.value_text(2.0) == "2.0" and ctk_toml.value_text(1e-07) == "0.0000001"
    assert ctk_toml.value_text('a"b\\c\td\x01') == '"a\\"b\\\\c\\td\\u0001"'
    assert ctk_toml.key("io.containerd.grpc.v1.cri") == '"io.containerd.grpc.v1.cri"'
    assert ctk_toml.key("BinaryName") == "BinaryName" and ctk_toml.key("") == '""'
    assert ctk_toml.dumps({}) == ""


def test_go_json_indent_sorting_numbers_and_escapes():
    decoded = ctk_json.loads('{"b": 1, "a": {"x": "<&>"}, "n": 2.5, "e": [], "o": {}}')
    assert ctk_json.dumps(decoded) == ('{\n    "a": {\n        "x": "\\u003c\\u0026\\u003e"\n    },\n    "b": 1,\n'
                                       '    "e": [],\n    "n": 2.5,\n    "o": {}\n}')
    assert ctk_json.dumps({"z": 1, "a": [True, None]}, indent=None, sort_keys=False) == '{"z":1,"a":[true,null]}'


def test_cdi_yaml_quotes_what_yaml_would_read_as_another_type():
    for text in ("0", "12", "0:1", "3:10", "true", "no", "on", "", "1.5", "null"):
        assert ctk_yaml.scalar(text) == '"%s"' % text
    for text in ("all", "gpu0", "mig0:1", "GPU-1b2c", "--link", "libcuda.so.1::/usr/lib/libcuda.so", "/dev/nvidia0"):
        assert ctk_yaml.scalar(text) == text


def test_cdi_yaml_reads_back_as_the_document_and_lists_its_names():
    document = {"cdiVersion": "0.5.0", "kind": "nvidia.com/gpu",
                "devices": [{"name": "0:0", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia0"}]}},
                            {"name": "all", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia0"}]}}],
                "containerEdits": {"env": ["A=1"], "hooks": [{"hookName": "createContainer", "args": ["x", "--y"]}]}}
    text = ctk_yaml.dumps(document)
    assert yaml.safe_load(text) == document
    assert ctk_yaml.kind_and_names(text) == ("nvidia.com/gpu", ["0:0", "all"])
    # The two-space layout of other writers (go-yaml v2) reads too.
    assert ctk_yaml.kind_and_names("kind: nvidia.com/gpu\ndevices:\n- containerEdits:\n    deviceNodes:\n"
                                   "    - path: /dev/nvidia0\n  name: \"0\"\n") == ("nvidia.com/gpu", ["0"])
