# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulated MIG node of the nvidia_mig tests (mig_node)."""

from __future__ import annotations

import os
from unittest import mock

import pytest
from ansible.module_utils import basic

from ansible_collections.gpuops.hardening.plugins.module_utils import mig_converge, smi_tool
from ansible_collections.gpuops.hardening.plugins.module_utils.engines import nvidia_mig
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import enable_mig
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.mig_node import CURRENT, Node

NVIDIA_SMI = "/usr/bin/nvidia-smi"


@pytest.fixture
def mig_node(tmp_path):
    """mig_node(apply="reset", mig_gpus=(0, 1)) -> Node; every GPU's PCI function has a sysfs reset."""
    def _make(apply="reset", mig_gpus=(0, 1)):
        state = api.new_state("a100_8x_mig")
        state["settings"]["mig_mode_apply"] = apply
        for index in mig_gpus:
            enable_mig(state, index)
        path = str(tmp_path / "state.json")
        api.write_state(state, path)
        node = Node(path, str(tmp_path / "root"))
        for gpu in state["gpus"]:
            node.sysfs(os.path.join("bus/pci/devices", gpu["pci_bus_id"], "reset"), "")
        CURRENT["node"] = node
        return node

    def fake_run(module, argv, timeout=30, check_rc=False, data=None, environ=None):
        assert argv[0] == NVIDIA_SMI and timeout == module.params["timeout"]
        CURRENT["node"].calls.append(argv[1:])
        return api.run("nvidia-smi", argv[1:], CURRENT["node"].path)

    class FakeSystemctl:
        def __init__(self, module, timeout=60):
            self.module = module

        def show(self, units, properties):
            node = CURRENT["node"]
            return [{"LoadState": "loaded" if unit in node.units else "not-found",
                     "ActiveState": "active" if node.units.get(unit) else "inactive"} for unit in units]

        def try_verb(self, verb, unit):
            node = CURRENT["node"]
            node.unit_calls.append("%s %s" % (verb, unit))
            if verb == "start" and unit in node.failing_start:
                return "Job for %s failed." % unit
            node.units[unit] = verb == "start"
            return None

    with mock.patch.object(smi_tool, "run", fake_run), \
            mock.patch.object(nvidia_mig, "Systemctl", FakeSystemctl), \
            mock.patch.object(mig_converge, "RESET_RETRY_DELAY", 0), \
            mock.patch.object(basic.AnsibleModule, "get_bin_path", lambda module, name, *a, **k: NVIDIA_SMI):
        yield _make
    CURRENT.clear()
