# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kernel_xid: the driver's Xid lines of a dmesg output as events per GPU.

The lines are written here from the public formats: NVIDIA/open-gpu-kernel-modules
src/nvidia/src/kernel/gpu/rc/kernel_rc.c (krcReportXid, _krcLogUuidOnce), the Xid 79 line its issue 1151 quotes,
the Xid 63 line of stas00/ml-engineering's compute/accelerator/nvidia/debug.md, and the pre-``PCI:`` form older
drivers print. Any real capture in shared/fixtures/real that holds an Xid line is parsed too.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils.kernel_xid import (
    gpu_uuids,
    parse_xid_events,
    parse_xid_line,
    summarise,
    with_xids,
)
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit import real_captures


def _event(bus, xid, seconds=None, pid=None, name=None, message="", gpu_instance=None, compute_instance=None):
    return {"pci_bus_id": bus, "xid": xid, "seconds": seconds, "pid": pid, "name": name,
            "gpu_instance": gpu_instance, "compute_instance": compute_instance, "message": message}


@pytest.mark.parametrize("line, expected", [
    ("[ 5107.644336] NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.",
     _event("0000:2b:00.0", 79, 5107.644336, message="GPU has fallen off the bus.")),
    ("NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, name=python, Row Remapper: New row marked for remapping, reset gpu "
     "to activate.",
     _event("0000:10:1c.0", 63, pid=1896, name="python",
            message="Row Remapper: New row marked for remapping, reset gpu to activate.")),
    ("[  966.503025] NVRM: Xid (0000:01:00): 31, Ch 0000000b, engmask 00000120, intr 10000000",
     _event("0000:01:00.0", 31, 966.503025, message="Ch 0000000b, engmask 00000120, intr 10000000")),
    ("[   12.000001] NVRM: Xid (PCI:0000:CB:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception",
     _event("0000:cb:00.0", 13, 12.000001, message="Graphics SM Warp Exception")),
    ("[   40.5] NVRM: Xid (PCI:0000:17:00 GPU-I:01 GPU-CI:02): 43, pid=77, name=trainer, Ch 00000008",
     _event("0000:17:00.0", 43, 40.5, pid=77, name="trainer", message="Ch 00000008", gpu_instance=1,
            compute_instance=2)),
    ("[   40.5] NVRM: Xid (PCI:0000:17:00 GPU-I:03): 45, pid=77, name=trainer, Ch 00000008 caused by previous Xid 94",
     _event("0000:17:00.0", 45, 40.5, pid=77, name="trainer", message="Ch 00000008 caused by previous Xid 94",
            gpu_instance=3)),
    ("Dec 04 10:00:01 node kernel: NVRM: Xid (PCI:0008:01:00): 154, GPU recovery action changed from 0x0 (None) to "
     "0x1 (GPU Reset Required)",
     _event("0008:01:00.0", 154, message="GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)")),
])
def test_each_driver_format_parses(line, expected):
    assert parse_xid_line(line) == expected


@pytest.mark.parametrize("line", [
    "[ 5107.644336] NVRM: GPU at PCI:0000:2b:00: GPU-5e0b4bd0-8d4c-4bb1-9a0e-6c3a2f1e7d55",
    "[ 5107.644336] NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.",
    "[    1.000000] nvidia: loading out-of-tree module taints kernel.",
    "NVRM: Xid (PCI:0000:2b:00): seventy-nine",
    "",
])
def test_lines_without_an_xid_give_none(line):
    assert parse_xid_line(line) is None


LOG = """[    4.100000] nvidia-nvlink: Nvlink Core is being initialized
[  812.500000] NVRM: GPU at PCI:0000:1b:00: GPU-11111111-2222-3333-4444-555555555555
[  812.500000] NVRM: Xid (PCI:0000:1b:00): 13, pid=4242, name=python3, Graphics Exception
[  901.000000] NVRM: Xid (PCI:0000:1b:00): 13, pid=4250, name=python3, Graphics Exception again
[ 5107.644336] NVRM: GPU at PCI:0000:2b:00: GPU-5e0b4bd0-8d4c-4bb1-9a0e-6c3a2f1e7d55
[ 5107.644336] NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.
[ 5108.000000] NVRM: Xid (PCI:0000:1b:00): 48, An uncorrectable double bit error (DBE) has been detected on GPU.
"""


def test_uuids_come_from_the_driver_s_first_line_per_gpu():
    assert gpu_uuids(LOG) == {"0000:1b:00.0": "GPU-11111111-2222-3333-4444-555555555555",
                              "0000:2b:00.0": "GPU-5e0b4bd0-8d4c-4bb1-9a0e-6c3a2f1e7d55"}


def test_a_summary_counts_each_code_with_its_first_and_last_time_and_the_last_line():
    events = [event for event in parse_xid_events(LOG) if event["pci_bus_id"] == "0000:1b:00.0"]
    assert summarise(events) == [
        {"xid": 13, "count": 2, "first_seconds": 812.5, "last_seconds": 901.0, "message": "Graphics Exception again",
         "pid": 4250, "name": "python3"},
        {"xid": 48, "count": 1, "first_seconds": 5108.0, "last_seconds": 5108.0,
         "message": "An uncorrectable double bit error (DBE) has been detected on GPU.", "pid": None, "name": None},
    ]


def test_events_reach_their_gpu_and_those_of_an_unlisted_address_are_kept_apart():
    """nvidia-smi spells the bus id 00000000:1B:00.0; the GPU at 2b has left its list."""
    health = [{"index": 0, "pci_bus_id": "00000000:1B:00.0"}, {"index": 1, "pci_bus_id": "00000000:3C:00.0"}]
    unlisted = with_xids(health, LOG)
    assert [entry["xid"] for entry in health[0]["xid"]] == [13, 48]
    assert health[1]["xid"] == []
    assert unlisted == [{"pci_bus_id": "0000:2b:00.0", "uuid": "GPU-5e0b4bd0-8d4c-4bb1-9a0e-6c3a2f1e7d55",
                         "xid": [{"xid": 79, "count": 1, "first_seconds": 5107.644336, "last_seconds": 5107.644336,
                                  "message": "GPU has fallen off the bus.", "pid": None, "name": None}]}]


def test_a_log_that_was_not_read_leaves_every_gpu_unknown_never_empty():
    health = [{"index": 0, "pci_bus_id": "00000000:1B:00.0"}]
    assert with_xids(health, None) == []
    assert health[0]["xid"] is None


def test_the_emulator_s_dmesg_lines_parse_back_to_its_faults(tmp_path):
    """The lab's dmesg shim and this parser agree (the shim's format is held to the driver's in its own tests)."""
    state = api.new_state("dgx_h100")
    state["faults"]["xid"] = [{"gpu": 3, "xid": 48, "message": "DBE", "time": 61.25},
                              {"gpu": 3, "xid": 13, "message": "Graphics Exception", "time": 70.0, "pid": 9,
                               "name": "python3"}]
    path = str(tmp_path / "state.json")
    api.write_state(state, path)
    rc, out, _err = api.run("dmesg", [], path)
    bus = state["gpus"][3]["pci_bus_id"][:-2].lower()
    assert rc == 0
    assert parse_xid_events(out) == [_event(bus + ".0", 48, 61.25, message="DBE"),
                                     _event(bus + ".0", 13, 70.0, pid=9, name="python3", message="Graphics Exception")]
    assert gpu_uuids(out) == {bus + ".0": state["gpus"][3]["uuid"]}


def test_every_xid_line_of_the_real_captures_parses():
    """No capture holds an Xid line today; any that comes must parse, with its bus id and code."""
    for name in real_captures.names():
        for line in real_captures.load(name).splitlines():
            if "NVRM: Xid" in line:
                event = parse_xid_line(line)
                assert event is not None and event["pci_bus_id"] and event["xid"] >= 0, (name, line)
