# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The baseline's PCIe link check on emulated GPUs: libcuda and NVML stand-ins backed by the GPU emulator.

A context the fake driver opens puts a compute process on the emulated GPU, as a real context does, and the fake
NVML answers what the emulated nvidia-smi reads (nvidia-smi's link fields are NVML's). An idle emulated L40S reads
Gen1: only a read under load sees Gen4, and the pcie_link fault caps it there.
"""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import cuda_driver
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import state as emulator_state
from ansible_collections.gpuops.hardening.tests.unit.plugins.module_utils.test_cuda_driver_link import CopyingLibrary
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.test_gpu_baseline import FreshProcesses, baseline, by_id

LINK_FIELDS = "pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max"


def emulated_link(state_path, bus_id):
    """{"gen_current", "gen_max", "width_current", "width_max"} as the emulated nvidia-smi reads the GPU now."""
    rc, out, err = api.run("nvidia-smi", ["--query-gpu=" + LINK_FIELDS, "-i", bus_id, "--format=csv,noheader,nounits"],
                           state_path)
    assert rc == 0, err
    values = [int(cell) for cell in out.strip().split(", ")]
    return dict(zip(("gen_current", "gen_max", "width_current", "width_max"), values))


class EmulatedCuda(CopyingLibrary):
    """The fake libcuda whose primary context is a compute process on the emulated GPU while it is held."""

    def __init__(self, state_path):
        super(EmulatedCuda, self).__init__(seconds=0.002)
        self.state_path = state_path
        self.bus_id = None

    def _cuDeviceGetByPCIBusId(self, _device, bus_id):
        self.bus_id = bus_id.decode("ascii").lower()

    def _cuDevicePrimaryCtxRetain(self, context, _device):
        context._obj.value = 0x1000
        with emulator_state.editing(self.state_path) as state:
            gpu = next(item["index"] for item in state["gpus"] if item["pci_bus_id"].lower() == self.bus_id)
            api.add_process(state, gpu, os.getpid())

    def _cuDevicePrimaryCtxRelease_v2(self, _device):
        with emulator_state.editing(self.state_path) as state:
            state["processes"] = [item for item in state["processes"] if item["pid"] != os.getpid()]


class EmulatedNvml:
    """The NVML functions the link read calls, answered from the emulated nvidia-smi."""

    READINGS = dict((name, key) for key, name in cuda_driver.LINK_READINGS)

    def __init__(self, state_path):
        self.state_path = state_path
        self.bus_id = None
        self.link = None
        # Plain functions, like ctypes function pointers, take the restype and argtypes the binding sets.
        for name, _restype, _argtypes in cuda_driver.NVML_FUNCTIONS:
            setattr(self, name, self._function(name))
        self.nvmlErrorString = lambda code: b"Unknown Error"

    def _function(self, name):
        def function(*args):
            if name == "nvmlDeviceGetHandleByPciBusId_v2":
                self.bus_id = args[0].decode("ascii")
                args[1]._obj.value = 0x2000
            elif name in self.READINGS:
                if name == cuda_driver.LINK_READINGS[0][1]:
                    # One nvidia-smi run answers the read's four calls.
                    self.link = emulated_link(self.state_path, self.bus_id)
                args[1]._obj.value = self.link[self.READINGS[name]]
            return 0
        return function


def topology_of(state_path):
    gpus = [{"index": gpu["index"], "pci_bus_id": gpu["pci_bus_id"], "numa_node": 0, "mig_mode": "Disabled",
             "persistence_mode": "Enabled"} for gpu in api.read_state(state_path)["gpus"]]
    return {"driver_version": "550.127.05", "cuda_version": "12.4", "gpus": gpus,
            "numa_nodes": [{"id": 0, "has_cpu": True, "distances": [10]}]}


def run_baseline(state_path):
    processes = FreshProcesses(loader=lambda _path: cuda_driver.Driver(EmulatedCuda(state_path)),
                               nvml_loader=lambda _path: cuda_driver.Nvml(EmulatedNvml(state_path)))
    return baseline(processes, topology=topology_of(state_path), sizes_mib=[1], repeats=1)


@pytest.fixture
def l40s_node(tmp_path):
    def _make(**faults):
        state = api.new_state("l40s_4x")
        state["faults"].update(faults)
        path = str(tmp_path / "state.json")
        api.write_state(state, path)
        return path
    return _make


def test_a_healthy_node_passes_under_load_where_the_idle_link_reads_gen1(l40s_node):
    path = l40s_node()
    assert emulated_link(path, "0000:17:00.0")["gen_current"] == 1
    result = run_baseline(path)
    for index in range(4):
        item = by_id(result)["baseline.gpu%d.pcie_link_under_load" % index]
        assert (item["verdict"], item["expected"], item["actual"]) == ("PASS", "Gen4 x16", "Gen4 x16"), item
        assert item["reason"].startswith("the link runs at its generation and width under load; read during "
                                         "back-to-back pinned host-to-device copies of 1 MiB (")
    # Every context was released: the GPUs are idle again, and their links back at Gen1.
    assert api.read_state(path)["processes"] == []
    assert emulated_link(path, "0000:b1:00.0")["gen_current"] == 1


def test_a_link_capped_by_the_pcie_link_fault_warns_naming_what_it_read_the_expected_and_the_fix(l40s_node):
    path = l40s_node(pcie_link={"1": {"gen": 2, "width": 8}})
    checks = by_id(run_baseline(path))
    item = checks["baseline.gpu1.pcie_link_under_load"]
    assert (item["verdict"], item["expected"], item["actual"]) == ("WARN", "Gen4 x16", "Gen2 x8")
    assert item["reason"].startswith("under load the link runs at Gen2 x8, below its Gen4 x16: reseat the GPU, check "
                                     "its riser and cabling, and the slot's PCIe generation setting in the BIOS; ")
    assert [checks["baseline.gpu%d.pcie_link_under_load" % index]["verdict"] for index in (0, 2, 3)] == ["PASS"] * 3


def test_a_generation_drop_alone_under_load_warns(l40s_node):
    path = l40s_node(pcie_link={"3": {"gen": 3}})
    item = by_id(run_baseline(path))["baseline.gpu3.pcie_link_under_load"]
    assert (item["verdict"], item["expected"], item["actual"]) == ("WARN", "Gen4 x16", "Gen3 x16")
