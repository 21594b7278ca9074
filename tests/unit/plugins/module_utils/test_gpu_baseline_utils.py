# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the GPU baseline measures, why it skips, and its figures as audit checks."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import gpu_baseline as plan
from ansible_collections.gpuops.hardening.plugins.module_utils.baseline_stats import MIB

CHECK_KEYS = ("id", "area", "title", "verdict", "expected", "actual", "reason")


def gpu(**extra):
    item = {"index": 0, "pci_bus_id": "0000:3b:00.0", "numa_node": 0, "mig_mode": "Disabled", "persistence_mode": "Enabled"}
    item.update(extra)
    return item


def numa_node(node_id, distances, has_cpu=True):
    return {"id": node_id, "has_cpu": has_cpu, "distances": distances}


TWO_SOCKETS = {"numa_nodes": [numa_node(0, [10, 21]), numa_node(1, [21, 10])]}
# Four nodes, two per socket (sub-NUMA clustering): the remote node is the farthest one.
FOUR_NODES = {"numa_nodes": [numa_node(0, [10, 12, 32, 32]), numa_node(1, [12, 10, 32, 32]),
                             numa_node(2, [32, 32, 10, 12]), numa_node(3, [32, 32, 12, 10])]}


def test_mig_on_skips_the_gpu_and_says_so():
    why = plan.gpu_skip_reason(gpu(mig_mode="Enabled"))
    assert why.startswith("MIG is on") and "skips this GPU" in why


def test_no_bus_id_skips_the_gpu():
    assert "PCI bus id" in plan.gpu_skip_reason(gpu(pci_bus_id=None))


def test_a_plain_gpu_is_measured():
    assert plan.gpu_skip_reason(gpu()) is None


def test_sizes_above_the_memory_bound_are_skipped():
    cases, skipped = plan.copy_cases([1, 64, 1024], 64)
    assert {size for _direction, _memory, size in cases} == {MIB, 64 * MIB}
    assert len(cases) == 8  # two sizes, two directions, pinned and pageable
    assert skipped == {1024: "1 GiB is above baseline_max_memory_mib (64 MiB)"}


def test_numa_plan_uses_the_facts_binding_and_the_farthest_node():
    recommendation = {"numactl_args": ["--cpunodebind=1", "--membind=1"]}
    local, remote, local_node, remote_node, why = plan.numa_plan(gpu(numa_node=1), FOUR_NODES, "/usr/bin/numactl", recommendation)
    assert why is None
    assert local == ["/usr/bin/numactl", "--cpunodebind=1", "--membind=1"]
    assert (local_node, remote_node) == (1, 2)
    assert remote == ["/usr/bin/numactl", "--cpunodebind=2", "--membind=2"]


@pytest.mark.parametrize("the_gpu, topology, numactl, reason", [
    (gpu(), TWO_SOCKETS, None, "numactl is not installed"),
    (gpu(), {"numa_nodes": [numa_node(0, [10])]}, "/usr/bin/numactl", "one NUMA node with CPUs only"),
    # A GH200's GPU memory is a CPU-less node: it is no place to run a copy from.
    (gpu(), {"numa_nodes": [numa_node(0, [10, 80]), numa_node(1, [80, 10], has_cpu=False)]}, "/usr/bin/numactl",
     "one NUMA node with CPUs only"),
    (gpu(numa_node=None), TWO_SOCKETS, "/usr/bin/numactl", "the GPU reports no NUMA node"),
])
def test_numa_plan_says_why_it_cannot_compare(the_gpu, topology, numactl, reason):
    result = plan.numa_plan(the_gpu, topology, numactl)
    assert result[:4] == (None, None, None, None)
    assert result[4].startswith(reason)


def seconds_for(sizes_mib, value=0.01, repeats=3):
    return dict(("%s/%s/%d" % (direction, memory, size * MIB), [value] * repeats)
                for size in sizes_mib for direction in ("h2d", "d2h") for memory in ("pinned", "pageable"))


def test_copy_checks_measured():
    seconds = seconds_for([1, 64])
    seconds["h2d/pageable/%d" % (64 * MIB)] = [0.025, 0.02, 0.03]
    checks = plan.copy_checks(gpu(), [1, 64], {}, seconds)
    assert all(tuple(item) == CHECK_KEYS and item["area"] == "baseline" for item in checks)
    by_id = dict((item["id"], item) for item in checks)
    assert len(by_id) == 9
    pinned = by_id["baseline.gpu0.h2d.pinned.64MiB"]
    assert pinned["verdict"] == "PASS"
    assert pinned["actual"] == "6.71 GB/s (min 6.71, max 6.71, 3 runs)"
    assert pinned["title"] == "GPU 0 pinned host to device copy, 64 MiB"
    assert by_id["baseline.gpu0.pinned_over_pageable"]["actual"] == "2.50x at 64 MiB"


def test_copy_checks_skip_every_figure_with_the_reason():
    checks = plan.copy_checks(gpu(), [1, 64], {}, {}, skip_reason="libcuda.so.1 cannot be loaded: no such file")
    assert {item["verdict"] for item in checks} == {"SKIP"}
    assert {item["reason"] for item in checks} == {"libcuda.so.1 cannot be loaded: no such file"}


def test_a_size_above_the_bound_is_skipped_and_the_ratio_uses_the_largest_measured():
    checks = plan.copy_checks(gpu(), [1, 1024], {1024: "1 GiB is above"}, seconds_for([1]))
    by_id = dict((item["id"], item) for item in checks)
    assert by_id["baseline.gpu0.h2d.pinned.1024MiB"]["verdict"] == "SKIP"
    assert by_id["baseline.gpu0.pinned_over_pageable"]["actual"] == "1.00x at 1 MiB"


def test_a_failed_measurement_is_a_warn_with_the_error():
    checks = plan.copy_checks(gpu(), [1], {}, {}, error="copy did not finish within 120 seconds")
    assert [item["verdict"] for item in checks] == ["WARN"] * 4 + ["SKIP"]
    assert checks[0]["reason"] == "copy did not finish within 120 seconds"


def test_numa_checks_measured():
    the_plan = (["numactl"], ["numactl"], 0, 1, None)
    checks = plan.numa_checks(gpu(), 64, the_plan, [0.002] * 3, [0.004] * 3)
    by_id = dict((item["id"], item) for item in checks)
    assert by_id["baseline.gpu0.numa.local"]["reason"] == "process bound with numactl --cpunodebind=0 --membind=0"
    assert by_id["baseline.gpu0.numa.local_over_remote"]["actual"] == "2.00x (node 0 over node 1)"


def test_numa_checks_skipped_with_the_plans_reason():
    checks = plan.numa_checks(gpu(), 64, (None, None, None, None, "one NUMA node with CPUs only"), None, None)
    assert [item["verdict"] for item in checks] == ["SKIP"] * 3
    assert {item["reason"] for item in checks} == {"one NUMA node with CPUs only"}


def test_numa_checks_one_side_failed():
    checks = plan.numa_checks(gpu(), 64, (["numactl"], ["numactl"], 0, 1, None), [0.002], None, remote_error="boom")
    assert [item["verdict"] for item in checks] == ["PASS", "WARN", "WARN"]


def test_startup_in_milliseconds():
    item = plan.startup_check(gpu(persistence_mode="Disabled"), [0.5, 0.25, 0.75])
    assert item["actual"] == "500.0 ms (min 250.0, max 750.0, 3 runs)"
    assert item["reason"].endswith("persistence mode is Disabled")
    assert plan.startup_check(gpu(), [], skip_reason="MIG is on")["verdict"] == "SKIP"
    assert plan.startup_check(gpu(), [], error="timed out")["verdict"] == "WARN"


def test_driver_check():
    assert plan.driver_check(12040, None)["actual"] == "CUDA 12.4"
    assert plan.driver_check(None, "libcuda.so.1 cannot be loaded")["verdict"] == "SKIP"


def test_document_has_the_audit_documents_keys():
    checks = [plan.driver_check(13000, None), plan.startup_check(gpu(), [], skip_reason="x")]
    document = plan.document("gpu-a", "training", checks, {"driver_version": "580.65.06", "cuda_version": "13.0"})
    assert document["summary"] == {"FAIL": 0, "WARN": 0, "PASS": 1, "SKIP": 1}
    assert document["driver"] == {"driver_version": "580.65.06", "cuda_version": "13.0"}
    assert sorted(document) == ["checks", "driver", "error", "node", "profile", "readiness", "schema_version",
                                "summary", "topology"]
    assert document["readiness"] == {"verdict": None, "reasons": ["the GPUs' health was not read"]}
