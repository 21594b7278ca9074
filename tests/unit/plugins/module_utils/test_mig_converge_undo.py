# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""mig_converge puts a GPU back when a destroy is refused, even when naming the holder fails too."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import mig_converge
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import enable_mig
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.mig_node import Node

HELD = "Failed to destroy GPU instances: In use by another client\n"
QUERY_FAILED = "Unable to query the GPUs: Unknown Error\n"


class Smi:
    """nvidia-smi of the emulated node; once a destroy was refused, the full query (-q -x) fails too."""

    def __init__(self, node):
        self.node = node
        self.refused = False

    def call(self, args, allowed_rc=(0,)):
        self.node.calls.append(list(args))
        if self.refused and args == ["-q", "-x"]:
            raise mig_converge.SmiError("nvidia-smi -q -x: " + QUERY_FAILED.strip())
        rc, out, err = api.run("nvidia-smi", list(args), self.node.path)
        if rc not in allowed_rc:
            self.refused = self.refused or "-dgi" in args
            raise mig_converge.SmiError("nvidia-smi %s: %s" % (" ".join(args), (out + err).strip()))
        return out

    read = call  # a survey read: the same here


@pytest.fixture
def node(tmp_path):
    """GPU 0 of an emulated A100 node, in MIG mode, with three 1g.10gb instances."""
    state = api.new_state("a100_8x_mig")
    enable_mig(state, 0)
    path = str(tmp_path / "state.json")
    api.write_state(state, path)
    made = Node(path, str(tmp_path / "root"))
    mig_converge.converge(Smi(made), {0: {"mig_enabled": True, "mig_devices": {"1g.10gb": 3}}}, root=made.root)
    return made


def test_a_refused_destroy_is_undone_when_the_holder_cannot_be_read(node):
    before = node.instances(0)
    held = before[1][0]

    def hold(state):
        state["faults"]["exit"] = {"nvidia-smi": {"rc": 255, "stdout": HELD, "match": ["-dgi", str(held)]}}
    node.edit(hold)
    node.calls[:] = []
    with pytest.raises(mig_converge.MigError) as raised:
        mig_converge.converge(Smi(node), {0: {"mig_enabled": True, "mig_devices": {"7g.80gb": 1}}}, root=node.root)
    message = str(raised.value)
    # Both failures are said: the refused destroy, and the read that was to name its holder.
    assert "In use by another client" in message and QUERY_FAILED.strip() in message
    assert "nothing new was created on GPU 0" in message and "with new UUIDs" in message
    # What this run destroyed before the refusal is back, at the same placements, with its compute instance.
    destroyed = [call for call in node.ran("-dgi") if call[call.index("-gi") + 1] != str(held)]
    assert destroyed, "the test needs a destroy before the refused one"
    assert sorted(i[1:] for i in node.instances(0)) == sorted(i[1:] for i in before)
    assert sorted(node.compute_instances(0).values()) == [["1g.10gb"]] * 3
    gpu = raised.value.result["gpus"][0]
    assert [r["profile"] for r in gpu["recreated"]] == ["1g.10gb"] * len(destroyed)
