# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The project's own captures from a real H200 VM (fixtures/h200_vm/README.md)."""

from __future__ import annotations

import json
import os

from ansible_collections.gpuops.hardening.plugins.module_utils import gpu_topology, nvidia_smi, sysfs_topology
from ansible_collections.gpuops.hardening.tests.unit import real_captures
from ansible_collections.gpuops.hardening.tests.unit.plugins.module_utils import fake_sysfs

CAPTURES = os.path.join(os.path.dirname(__file__), "fixtures", "h200_vm")
UUID = "GPU-53d4112d-6cea-fed4-49b8-32e9fa212916"


def _read(name):
    """A capture's body, without the '#' header lines naming its command and machine."""
    with open(os.path.join(CAPTURES, name), encoding="utf-8") as handle:
        return real_captures.body(handle.read())


def test_every_capture_names_its_command_and_machine():
    for name in sorted(os.listdir(CAPTURES)):
        if name == "README.md":
            continue
        with open(os.path.join(CAPTURES, name), encoding="utf-8") as handle:
            head = [handle.readline() for dummy in range(2)]
        assert head[0].startswith("# command: ") and head[1].startswith("# machine: "), name


def test_topology_header_with_terminal_escapes():
    assert "\x1b[4m" in _read("nvidia_smi_topo_m.txt")
    result = nvidia_smi.parse_topology_matrix(_read("nvidia_smi_topo_m.txt"))
    assert result == {"labels": ["GPU0"], "nics": {}, "links": {},
                      "gpus": {"GPU0": {"cpu_affinity": list(range(16)), "numa_affinity": [0], "gpu_numa_id": None}}}


def test_escaped_header_is_read_as_a_header():
    # Only a recognised header knows GPU1 exists when its row was cut off.
    text = "\t\x1b[4mGPU0\tGPU1\tCPU Affinity\x1b[0m\nGPU0\t X \tNV18\t0-3\n"
    assert nvidia_smi.parse_topology_matrix(text)["labels"] == ["GPU0", "GPU1"]


def test_query_xml():
    result = nvidia_smi.parse_query_xml(_read("nvidia_smi_q_x.xml"))
    assert result["driver_version"] == "580.159.04" and result["cuda_version"] == "13.0"
    (gpu,) = result["gpus"]
    assert gpu["name"] == "NVIDIA H200" and gpu["uuid"] == UUID
    assert gpu["pci_bus_id"] == "00000000:00:06.0" and gpu["memory_total_mib"] == 143771
    assert (gpu["persistence_mode"], gpu["mig_mode"], gpu["compute_mode"]) == ("Enabled", "Disabled", "Default")


def test_gpu_list():
    assert nvidia_smi.parse_gpu_list(_read("nvidia_smi_L.txt")) == [
        {"index": 0, "name": "NVIDIA H200", "uuid": UUID, "mig_devices": []}]


def test_wide_lgip():
    result = nvidia_smi.parse_gpu_instance_profiles(_read("nvidia_smi_mig_lgip.txt"))
    assert [item["name"] for item in result] == [
        "1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"]
    assert result[-1] == {"gpu": 0, "name": "7g.141gb", "id": 0, "free": 1, "total": 1, "memory_gib": 140.0,
                          "p2p": False, "sm": 132, "dec": 7, "enc": 0, "ce": 8, "jpeg": 7, "ofa": 1}


def test_same_inputs_give_the_facts_the_module_gave_there(tmp_path):
    """Rebuild the machine's sysfs as sysfs.txt records it; the topology must match."""
    root = fake_sysfs.build(tmp_path / "sys", {0: {"cpus": "0-15", "memory_kib": 4550128, "distances": [10]}},
                            {"0000:00:06.0": {"numa_node": -1, "cpulist": "0-15"}})
    topology = gpu_topology.build_topology(
        nvidia_smi.parse_query_xml(_read("nvidia_smi_q_x.xml")),
        matrix=nvidia_smi.parse_topology_matrix(_read("nvidia_smi_topo_m.txt")),
        pci_devices={"0000:00:06.0": sysfs_topology.read_pci_device(root, "0000:00:06.0")},
        rdma_devices=sysfs_topology.read_rdma_devices(root),
        numa_nodes=sysfs_topology.read_numa_nodes(root),
        numa_balancing=0,
    )
    expected = json.loads(_read("gpu_numa_facts.json"))
    # Added since the capture: where the binding comes from, the UUID (not the
    # index, which needs CUDA_DEVICE_ORDER=PCI_BUS_ID) for CUDA_VISIBLE_DEVICES,
    # and the minor number of /dev/nvidiaN (<minor_number>0</minor_number> in the capture).
    expected["gpus"][0]["numa_affinity_source"] = "nvidia-smi"
    expected["gpus"][0]["minor_number"] = 0
    expected["recommendations"][0].update(cuda_visible_devices=expected["gpus"][0]["uuid"], nvidia_smi_index=0)
    assert json.loads(json.dumps(topology)) == expected
    # sysfs gives no node (VM), nvidia-smi says 0: bind to 0 and say why.
    assert topology["gpus"][0]["numa_node"] is None
    assert topology["recommendations"][0]["numactl"] == "numactl --cpunodebind=0 --membind=0"
    assert topology["warnings"] == ["GPU 0 (0000:00:06.0): the kernel reports no NUMA node for it "
                                    "(numa_node is -1, as in many VMs)"]
