# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`scontrol show node -o` lines in Slurm's one-line layout (src/api/node_info.c, slurm_sprint_node_table).

The lines are written here in that layout; the Slurm lab (tests/slurm/test_readiness_gate_lab.py) reads the real
22.05 scontrol with the same parser through the gate."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import slurm_node

HEAD = ("NodeName=gpu-7 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 CPUTot=2 CPULoad=0.00 AvailableFeatures=(null) "
        "ActiveFeatures=(null) Gres=gpu:h100:2 NodeAddr=127.0.0.1 NodeHostName=gpu-7 Version=22.05.8 "
        "OS=Linux 6.1.0-28-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22) RealMemory=1000 AllocMem=0 "
        "FreeMem=N/A Sockets=2 Boards=1 State=%s ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A "
        "Partitions=lab BootTime=2026-12-04T18:00:00 SlurmdStartTime=2026-12-04T18:01:00 "
        "LastBusyTime=2026-12-04T18:01:00 CfgTRES=cpu=2,mem=1000M,billing=2 AllocTRES= CapWatts=n/a "
        "CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s")


@pytest.mark.parametrize("tail, state, flags, reason", [
    ("", "IDLE", [], None),
    (" Reason=gpuops: reset: hardware.gpu0.row_remap_pending [root@2026-12-04T18:40:02]", "IDLE", ["DRAIN"],
     "gpuops: reset: hardware.gpu0.row_remap_pending"),
    (" Reason=maintenance window 42 [slurm@2026-12-04T18:40:02] Comment=rack 3 ReservationName=maint", "MIXED",
     ["DRAIN"], "maintenance window 42"),
    (" Reason=Not responding [slurm@2026-12-04T18:40:02]", "DOWN", ["NOT_RESPONDING"], "Not responding"),
    (" Reason=set by a script", "DOWN", ["DRAIN", "NOT_RESPONDING"], "set by a script"),
])
def test_state_flags_and_reason(tail, state, flags, reason):
    line = HEAD % "+".join([state] + flags) + tail + "\n"
    node = slurm_node.parse_show_node(line)
    assert (node["name"], node["state"], node["flags"], node["reason"]) == ("gpu-7", state, flags, reason)


def test_drained_and_described():
    node = slurm_node.parse_show_node(HEAD % "ALLOCATED+DRAIN" + " Reason=x y [root@2026-12-04T18:40:02]")
    assert slurm_node.drained(node)
    assert slurm_node.describe(node) == "State=ALLOCATED+DRAIN Reason=x y"
    assert not slurm_node.drained(slurm_node.parse_show_node(HEAD % "DOWN+NOT_RESPONDING"))
    assert slurm_node.describe(slurm_node.parse_show_node(HEAD % "IDLE")) == "State=IDLE Reason=(none)"


def test_text_without_a_node_line():
    assert slurm_node.parse_show_node("") is None
    assert slurm_node.parse_show_node("Node gpu-9 not found\n") is None
