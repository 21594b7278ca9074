# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_baseline module: each measurement in a fresh process, SKIP with a reason, changed never."""

from __future__ import annotations

import json
import os
import tempfile
from unittest import mock

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import cuda_driver
from ansible_collections.gpuops.hardening.plugins.module_utils.commands import CommandTimeout
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.run_lock import LOCK_PATH
from ansible_collections.gpuops.hardening.plugins.modules import gpu_baseline
from ansible_collections.gpuops.hardening.tests.unit.plugins.module_utils.test_cuda_driver import FakeLibrary
from ansible_collections.gpuops.hardening.tests.unit.plugins.module_utils.test_run_lock import start_holder
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module

TOPOLOGY = {
    "driver_version": "550.90.07", "cuda_version": "12.4",
    "gpus": [
        {"index": 0, "pci_bus_id": "0000:3b:00.0", "numa_node": 0, "mig_mode": "Disabled", "persistence_mode": "Enabled"},
        {"index": 1, "pci_bus_id": "0000:ba:00.0", "numa_node": 1, "mig_mode": "Enabled", "persistence_mode": "Enabled"},
    ],
    "numa_nodes": [{"id": 0, "has_cpu": True, "distances": [10, 21]}, {"id": 1, "has_cpu": True, "distances": [21, 10]}],
    "recommendations": [{"pci_bus_id": "0000:3b:00.0", "numactl_args": ["--cpunodebind=0", "--membind=0"]}],
}


def no_nvml(path):
    raise cuda_driver.NvmlError("%s cannot be loaded: not on this machine" % path, unsupported=True)


class FreshProcesses:
    """Stands in for commands.run: answers each request as cuda_driver.py would, and records the argv."""

    def __init__(self, loader=None, timeout_ops=(), nvml_loader=None):
        self.argvs = []
        self.loader = loader
        self.timeout_ops = timeout_ops
        # No NVML unless a test gives one: the machine running the tests may have a real one.
        self.nvml_loader = nvml_loader or no_nvml

    def __call__(self, module, argv, timeout=30, data=None, **_kwargs):
        self.argvs.append(argv)
        assert argv[-3:-1] == [gpu_baseline.sys.executable, "-"]
        assert "FUNCTIONS = (" in data  # the program comes on stdin
        request = json.loads(argv[-1])
        if request["op"] in self.timeout_ops:
            raise CommandTimeout("it ran too long")
        answer = cuda_driver.answer(request, self.loader or cuda_driver.load, self.nvml_loader)
        return 0, json.dumps(answer) + "\n", ""


def baseline(processes, check_mode=False, **args):
    # The node lock is taken below a fresh root, never on the test machine's /run.
    params = dict(node="gpu-a", topology=TOPOLOGY, sizes_mib=[1, 64], repeats=2, numactl_path="/usr/bin/numactl",
                  root=tempfile.mkdtemp(prefix="gpu-baseline-root-"))
    params.update(args)
    with mock.patch.object(gpu_baseline, "run", processes):
        return run_module(gpu_baseline.main, params, check_mode=check_mode)


def by_id(result):
    return dict((item["id"], item) for item in result["document"]["checks"])


def test_without_libcuda_every_figure_is_a_skip_with_the_reason():
    result = baseline(FreshProcesses(), library="libcuda-not-here.so.1")
    assert result["changed"] is False and not result["failed"]
    checks = result["document"]["checks"]
    assert {item["verdict"] for item in checks} == {"SKIP"}
    assert by_id(result)["baseline.gpu0.startup"]["reason"].startswith("libcuda-not-here.so.1 cannot be loaded")
    # MIG's reason wins on a MIG GPU: it would be skipped even with a driver.
    assert by_id(result)["baseline.gpu1.startup"]["reason"].startswith("MIG is on")
    assert "libcuda-not-here.so.1 cannot be loaded" in result["msg"]


@pytest.mark.parametrize("check_mode", [False, True])
def test_with_a_driver_it_measures_in_fresh_processes(check_mode):
    processes = FreshProcesses(loader=lambda _path: cuda_driver.Driver(FakeLibrary()))
    result = baseline(processes, check_mode=check_mode)
    assert result["changed"] is False
    checks = by_id(result)
    assert checks["baseline.driver_api"]["actual"] == "CUDA 12.4"
    assert checks["baseline.gpu0.h2d.pinned.64MiB"]["verdict"] == "PASS"
    assert checks["baseline.gpu0.numa.local_over_remote"]["verdict"] == "PASS"
    assert checks["baseline.gpu0.startup"]["actual"].endswith("2 runs)")
    assert checks["baseline.gpu1.h2d.pinned.64MiB"]["verdict"] == "SKIP"
    prefixes = [argv[:-3] for argv in processes.argvs]
    assert ["/usr/bin/numactl", "--cpunodebind=0", "--membind=0"] in prefixes
    assert ["/usr/bin/numactl", "--cpunodebind=1", "--membind=1"] in prefixes
    ops = [json.loads(argv[-1])["op"] for argv in processes.argvs]
    # probe, the copies, the local and the remote copy, then one fresh process per start-up run; nothing for the MIG GPU.
    assert ops == ["probe", "copy", "copy", "copy", "startup", "startup"]
    assert result["document"]["summary"]["WARN"] == 0
    # The fact the report writer reads, as audit_node sets it.
    assert result["ansible_facts"]["gpuops_audit"] == result["document"]


def test_a_process_past_its_timeout_is_a_warn():
    processes = FreshProcesses(loader=lambda _path: cuda_driver.Driver(FakeLibrary()), timeout_ops=("startup",))
    result = baseline(processes, timeout=7)
    item = by_id(result)["baseline.gpu0.startup"]
    assert item["verdict"] == "WARN"
    assert item["reason"] == "startup in a fresh process did not finish within 7 seconds (the timeout option)"


def test_a_driver_error_is_a_warn_naming_the_call():
    processes = FreshProcesses(loader=lambda _path: cuda_driver.Driver(FakeLibrary({"cuMemAllocHost_v2": 2})))
    result = baseline(processes)
    assert by_id(result)["baseline.gpu0.h2d.pinned.1MiB"]["reason"] == "cuMemAllocHost_v2: out of memory (2)"


def test_without_numactl_the_numa_figures_are_skipped():
    processes = FreshProcesses(loader=lambda _path: cuda_driver.Driver(FakeLibrary()))
    with mock.patch("ansible.module_utils.basic.AnsibleModule.get_bin_path", return_value=None):
        result = baseline(processes, numactl_path=None)
    assert by_id(result)["baseline.gpu0.numa.local"]["reason"].startswith("numactl is not installed")


@pytest.mark.parametrize("args, message", [
    ({"repeats": 0}, "repeats: got 0; allowed: 1 or more"),
    ({"sizes_mib": []}, "sizes_mib: got []"),
])
def test_bad_options_fail_naming_the_option(args, message):
    result = baseline(FreshProcesses(), **args)
    assert result["failed"] and result["msg"].startswith(message)


def test_the_worker_source_is_cuda_driver_itself():
    with open(cuda_driver.__file__, encoding="utf-8") as handle:
        assert gpu_baseline.worker_source() == handle.read()


@pytest.mark.parametrize("check_mode", [False, True])
def test_it_waits_for_the_node_lock_in_check_mode_too(tmp_path, check_mode):
    holder = start_holder(under_root(str(tmp_path), LOCK_PATH))
    processes = FreshProcesses(loader=lambda _path: cuda_driver.Driver(FakeLibrary()))
    try:
        result = baseline(processes, check_mode=check_mode, root=str(tmp_path), lock_timeout=0)
    finally:
        holder.kill()
        holder.wait()
    assert result["failed"] and result["changed"] is False
    assert "gpuops.hardening.nvidia_mig, pid %d" % holder.pid in result["msg"]
    assert processes.argvs == [], "it measured without the lock"


def test_it_records_itself_as_the_holder_while_it_measures(tmp_path):
    lock_file = under_root(str(tmp_path), LOCK_PATH)
    seen = []

    class Watching(FreshProcesses):
        def __call__(self, module, argv, timeout=30, data=None, **kwargs):
            with open(lock_file, encoding="utf-8") as handle:
                seen.append(json.loads(handle.read())["module"])
            return super(Watching, self).__call__(module, argv, timeout, data, **kwargs)

    result = baseline(Watching(loader=lambda _path: cuda_driver.Driver(FakeLibrary())), check_mode=True, root=str(tmp_path))
    assert not result["failed"] and os.path.exists(lock_file)
    assert set(seen) == {"gpuops.hardening.gpu_baseline"}


def test_the_copies_read_the_link_under_load_within_the_timeout_and_without_nvml_it_is_a_skip():
    processes = FreshProcesses(loader=lambda _path: cuda_driver.Driver(FakeLibrary()))
    result = baseline(processes, timeout=20, nvml_library="libnvml-elsewhere.so.1")
    copies = [json.loads(argv[-1]) for argv in processes.argvs if json.loads(argv[-1])["op"] == "copy"]
    # Only the GPU's own copy process reads the link, the NUMA ones do not.
    assert [request.get("link") for request in copies] == [{"library": "libnvml-elsewhere.so.1", "seconds": 5.0}, None, None]
    checks = by_id(result)
    assert checks["baseline.gpu0.pcie_link_under_load"]["verdict"] == "SKIP"
    assert checks["baseline.gpu0.pcie_link_under_load"]["reason"] == "libnvml-elsewhere.so.1 cannot be loaded: not on this machine"
    assert checks["baseline.gpu1.pcie_link_under_load"]["reason"].startswith("MIG is on")
    without_driver = by_id(baseline(FreshProcesses(), library="libcuda-not-here.so.1"))
    assert without_driver["baseline.gpu0.pcie_link_under_load"]["reason"].startswith("libcuda-not-here.so.1 cannot be loaded")
