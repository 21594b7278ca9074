# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A MIG layout change and the CDI spec in one node call: the plan puts the data path after partitioning, so the
spec the container_runtime feature writes names the MIG devices the nvidia_mig feature just made, and no longer
the ones it destroyed."""

from __future__ import annotations

from unittest import mock

from ansible.module_utils import basic

from ansible_collections.gpuops.hardening.plugins.modules.node import main as node_main
from ansible_collections.gpuops.hardening.plugins.plugin_utils.node_plan import NODE_ROLES
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.conftest import NVIDIA_SMI
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.container_node import emulator_tool, executable
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.mig_node import LAYOUT, mig_layouts
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module


def node_call(node, ctk, layout):
    features = [{"name": "mig_layout", "engine": "nvidia_mig", "args": {"layouts": mig_layouts(g0=layout)}},
                {"name": "container_runtime", "engine": "container_runtime", "args": {"nvidia_ctk_path": ctk}}]
    # nvidia-smi is the emulator's (the mig_node fixture); the node has no timeout(1) to wrap commands in.
    with mock.patch.object(basic.AnsibleModule, "get_bin_path",
                           lambda module, name, *a, **k: NVIDIA_SMI if name == "nvidia-smi" else None):
        result = run_module(node_main, {"root": node.root, "features": features}, diff=True)
    assert not result["failed"], result
    return result["features"]["container_runtime"]["cdi"]


def mig_devices(node):
    """The MIG devices nvidia-smi -L lists on GPU 0: their UUIDs."""
    return [line.split("UUID: ")[1].rstrip(")") for line in node.smi("-L").splitlines() if "MIG" in line and
            "UUID: MIG-" in line]


def test_the_data_path_comes_after_partitioning_in_the_plan():
    assert NODE_ROLES.index("container_runtime") > max(NODE_ROLES.index("mig"), NODE_ROLES.index("mps"))


def test_a_mig_layout_change_in_the_same_call_is_followed_by_a_new_cdi_spec(mig_node, tmp_path):
    node = mig_node(mig_gpus=(0,))
    executable(tmp_path / "root" / "usr" / "bin" / "podman", "#!/bin/sh\n")
    # The emulator's nvidia-ctk on the MIG node's GPUs.
    ctk = emulator_tool(tmp_path / "tools" / "nvidia-ctk", "nvidia-ctk", node.path)

    cdi = node_call(node, ctk, LAYOUT)
    first = mig_devices(node)
    assert len(first) == 3 and all(uuid in cdi["devices"] for uuid in first)
    assert "0:0" in cdi["devices"] and "0" not in cdi["devices"] and "1" in cdi["devices"]

    cdi = node_call(node, ctk, {"7g.80gb": 1})
    (second,) = mig_devices(node)
    assert second in cdi["devices"] and not set(first) & set(cdi["devices"])
    assert set(first) <= set(cdi["changes"]["devices_removed"]) and second in cdi["changes"]["devices_added"]
    assert cdi["changed"] and cdi["stale"]
