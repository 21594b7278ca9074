# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which commands leave the node as it is, and the records a change forgets."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils.shared_reads import SharedReads, leaves_node_as_is

SMI = "/usr/bin/nvidia-smi"
WRAPPED = ["/usr/bin/timeout", "--kill-after=5", "30s"]


@pytest.mark.parametrize("argv", [
    [SMI, "-q", "-x"], [SMI, "topo", "-m"], [SMI, "-L"], [SMI, "--query-gpu=index,uuid", "--format=csv"],
    [SMI, "-i", "0", "--query-gpu=mig.mode.current", "--format=csv,noheader"], [SMI, "mig", "-lgip"],
    [SMI, "mig", "-i", "0", "-lgi"], WRAPPED + [SMI, "mig", "-lci"], WRAPPED + ["/bin/systemctl", "show", "x"],
    [SMI, "nvlink", "-s"], [SMI, "nvlink", "-i", "3", "--status"],
    ["systemctl", "is-active", "kubelet"], ["getent", "group", "video"], WRAPPED + ["/usr/bin/dmesg"],
])
def test_queries_leave_the_node_as_it_is(argv):
    assert leaves_node_as_is(argv)


@pytest.mark.parametrize("argv", [
    [SMI, "-pm", "1"], [SMI, "-i", "0", "-mig", "1"], [SMI, "-i", "0", "-c", "EXCLUSIVE_PROCESS"], [SMI, "-r"],
    [SMI, "-i", "0", "-r"], [SMI, "mig", "-i", "0", "-cgi", "9", "-C"], [SMI, "mig", "-dci"], [SMI, "mig", "-lgi", "-dgi"],
    WRAPPED + [SMI, "-q", "-x", "-pm", "0"], ["systemctl", "restart", "nvidia-persistenced"], ["systemctl"],
    WRAPPED + ["/usr/bin/systemctl", "stop", "gpuops-mps-a.service"], ["nvidia-cuda-mps-control", "-d"], ["swapoff", "-a"],
    ["sysctl", "-w", "vm.swappiness=0"], [], WRAPPED, [SMI, "nvlink", "-r", "0"], [SMI, "nvlink", "-s", "-r", "0"],
    ["dmesg", "--clear"], ["dmesg", "-c"], ["dmesg", "-n", "1"],
])
def test_anything_else_may_change_it(argv):
    assert not leaves_node_as_is(argv)


def test_a_record_answers_until_a_change_and_only_successful_reads_are_kept():
    reads = SharedReads()
    query = [SMI, "-q", "-x"]
    reads.record(query, (0, "<xml/>", ""))
    reads.record([SMI, "-L"], (9, "", "driver not loaded"))
    reads.record([SMI, "mig", "-lgi"], (6, "No GPU instances found", ""))
    reads.record([SMI, "-pm", "1"], (0, "Enabled", ""))
    reads.seen(WRAPPED + [SMI, "topo", "-m"])
    assert reads.recorded(query) == (0, "<xml/>", "") and reads.recorded([SMI, "mig", "-lgi"])[0] == 6
    assert reads.recorded([SMI, "-L"]) is None and reads.recorded([SMI, "-pm", "1"]) is None
    assert reads.answered == 2
    reads.seen(WRAPPED + ["systemctl", "start", "nvidia-persistenced"])
    assert reads.recorded(query) is None
