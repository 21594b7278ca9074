# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The device check's captures from a real H200 (fixtures/h200_device_check/README.md): every parser on them,
each expected value written down from the capture's text."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import cpulist, gpu_topology, nvidia_smi, sysfs_topology
from ansible_collections.gpuops.hardening.plugins.module_utils.gpu_health import parse_gpu_health
from ansible_collections.gpuops.hardening.plugins.module_utils.kernel_xid import parse_xid_events, with_xids
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_hardware_checks import assess, readiness
from ansible_collections.gpuops.hardening.tests.unit import real_captures
from ansible_collections.gpuops.hardening.tests.unit.plugins.module_utils import fake_sysfs

CAPTURES = os.path.join(os.path.dirname(__file__), "fixtures", "h200_device_check")
UUID = "GPU-9518cbde-2de2-5aef-a78e-a4643ef52860"
BUS_ID = "0000:00:06.0"


def _read(name):
    with open(os.path.join(CAPTURES, name), encoding="utf-8") as handle:
        return real_captures.body(handle.read())


@pytest.mark.parametrize("name", sorted(name for name in os.listdir(CAPTURES) if name != "README.md"))
def test_every_capture_names_its_command_machine_and_time(name):
    with open(os.path.join(CAPTURES, name), encoding="utf-8") as handle:
        head = [handle.readline() for dummy in range(3)]
    assert head[0].startswith("# command: ") and head[1].startswith("# machine: ") and "NVIDIA H200" in head[1]
    assert head[2].startswith("# captured read-only on 2026-12-04")


def test_query_xml():
    result = nvidia_smi.parse_query_xml(_read("nvidia_smi_q_x.xml"))
    assert (result["driver_version"], result["cuda_version"]) == ("580.159.04", "13.0")
    (gpu,) = result["gpus"]
    assert (gpu["name"], gpu["uuid"], gpu["pci_bus_id"]) == ("NVIDIA H200", UUID, "00000000:00:06.0")
    assert gpu["memory_total_mib"] == 143771
    assert (gpu["persistence_mode"], gpu["mig_mode"], gpu["compute_mode"]) == ("Enabled", "Disabled", "Default")


def test_gpu_list():
    assert nvidia_smi.parse_gpu_list(_read("nvidia_smi_L.txt")) == [
        {"index": 0, "name": "NVIDIA H200", "uuid": UUID, "mig_devices": []}]


def test_query_csv_with_units_in_its_header():
    (row,) = nvidia_smi.parse_query_csv(_read("nvidia_smi_query_gpu.csv"))
    assert nvidia_smi.cell_text(row, "uuid") == UUID
    assert nvidia_smi.cell_text(row, "mig.mode.pending") == "Disabled"
    assert nvidia_smi.cell_text(row, "memory.total") == "143771 MiB"  # with units: csv, not csv,nounits
    assert [nvidia_smi.cell_int(row, field) for field in (
        "pcie.link.gen.current", "pcie.link.gen.max", "pcie.link.width.current", "pcie.link.width.max")] == [5, 5, 16, 16]


def test_topology_matrix_of_one_gpu():
    assert nvidia_smi.parse_topology_matrix(_read("nvidia_smi_topo_m.txt")) == {
        "labels": ["GPU0"], "nics": {}, "links": {},
        "gpus": {"GPU0": {"cpu_affinity": list(range(16)), "numa_affinity": [0], "gpu_numa_id": None}}}


def test_instance_profiles_and_their_placements():
    profiles = nvidia_smi.parse_gpu_instance_profiles(_read("nvidia_smi_mig_lgip.txt"))
    assert [(item["name"], item["id"], item["total"]) for item in profiles] == [
        ("1g.18gb", 19, 7), ("1g.18gb+me", 20, 1), ("1g.35gb", 15, 4), ("2g.35gb", 14, 3), ("3g.71gb", 9, 2),
        ("4g.71gb", 5, 1), ("7g.141gb", 0, 1)]
    placements = nvidia_smi.parse_gpu_instance_placements(_read("nvidia_smi_mig_lgipp.txt"))
    assert [(item["profile_id"], item["starts"], item["size"]) for item in placements] == [
        (19, [0, 1, 2, 3, 4, 5, 6], 1), (20, [0, 1, 2, 3, 4, 5, 6], 1), (15, [0, 2, 4, 6], 2), (14, [0, 2, 4], 2),
        (9, [0, 4], 4), (5, [0], 4), (0, [0], 8)]
    assert {item["gpu"] for item in placements} == {0}


def test_lscpu_and_numactl_agree_on_the_one_node():
    lscpu = dict(line.split(":", 1) for line in _read("lscpu.txt").splitlines() if ":" in line)
    assert cpulist.parse_cpulist(lscpu["NUMA node0 CPU(s)"].strip()) == list(range(16))
    assert "node 0 cpus: %s\n" % " ".join(str(cpu) for cpu in range(16)) in _read("numactl_H.txt")


def test_the_facts_module_gave_what_the_parsers_give_on_its_inputs(tmp_path):
    """Rebuild the machine's sysfs as sysfs_numa.txt and sysfs_pci.txt record it: the topology must be the module's."""
    root = fake_sysfs.build(tmp_path / "sys", {0: {"cpus": "0-15", "memory_kib": 131961976, "distances": [10]}},
                            {BUS_ID: {"numa_node": -1, "cpulist": "0-15"}})
    topology = gpu_topology.build_topology(
        nvidia_smi.parse_query_xml(_read("nvidia_smi_q_x.xml")),
        matrix=nvidia_smi.parse_topology_matrix(_read("nvidia_smi_topo_m.txt")),
        pci_devices={BUS_ID: sysfs_topology.read_pci_device(root, BUS_ID)},
        rdma_devices=sysfs_topology.read_rdma_devices(root),
        numa_nodes=sysfs_topology.read_numa_nodes(root),
        numa_balancing=0,
    )
    assert json.loads(json.dumps(topology)) == json.loads(_read("gpu_numa_facts.json"))
    assert topology["recommendations"][0]["numactl"] == "numactl --cpunodebind=0 --membind=0"


def test_the_text_report_and_the_xml_name_the_same_gpu_state():
    """nvidia_smi_q.txt is another machine's: the same model, driver and settings, its own UUID."""
    text = _read("nvidia_smi_q.txt")
    fields = {}
    for line in text.splitlines():
        key, colon, value = line.partition(":")
        if colon:
            fields.setdefault(key.strip(), value.strip())  # the first of each name: the top of the report
    assert (fields["Product Name"], fields["Persistence Mode"], fields["Driver Version"]) == ("NVIDIA H200", "Enabled", "580.159.04")
    assert "GPU-b59d1dd9-c002-9191-68b4-647934044e55" in text and UUID not in text


def test_the_query_fields_the_collection_asks_for_are_this_drivers():
    """Every field of the device check's --query-gpu is one this driver lists (--help-query-gpu)."""
    listed = _read("nvidia_smi_help_query_gpu.txt")
    with open(os.path.join(CAPTURES, "nvidia_smi_query_gpu.csv"), encoding="utf-8") as handle:
        command = handle.readline()
    fields = command.split("--query-gpu=", 1)[1].split()[0].split(",")
    assert len(fields) == 14
    for field in fields:
        assert '"%s"' % field in listed, field


def test_the_driver_s_kernel_log_lines_hold_no_xid_and_the_h200_s_xid_check_passes():
    """Five NVRM/nvidia lines since boot (the module loaded, an FBHUB interrupt cleared, persistence mode), no Xid."""
    log = _read("dmesg_nvidia.txt")
    assert len(log.splitlines()) == 5 and sum("NVRM:" in line for line in log.splitlines()) == 3
    assert parse_xid_events(log) == []
    health = parse_gpu_health(_read("nvidia_smi_q_x.xml"))
    assert with_xids(health, log) == [] and health[0]["xid"] == []
    findings = assess(health, kernel_log={"read": True, "problem": None, "unlisted": []})
    xid = [item["check"] for item in findings if item["check"]["id"] == "hardware.gpu0.xid"]
    assert [(check["verdict"], check["actual"]) for check in xid] == [("PASS", "none")]
    assert readiness(findings)["verdict"] == "ready"
    assert _read("dmesg_restrict.txt").strip() == "1"  # read as root: the roles run as root
