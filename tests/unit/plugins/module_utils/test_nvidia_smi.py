# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi parsers on the project's own synthesised samples and their damaged copies."""

from __future__ import annotations

import os
import re

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import nvidia_smi

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "nvidia_smi")


def sample(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


# What copies of nvidia-smi output go through on their way to a parser.
def tabs_to_spaces(text):
    return "\n".join(line.expandtabs(8) for line in text.split("\n"))


def condensed(text):
    return "\n".join(re.sub(r"[ \t]+", "  ", line) for line in text.split("\n"))


def crlf(text):
    return text.replace("\n", "\r\n")


def wrapped_in_noise(text):
    return "\n\n$ nvidia-smi topo -m\n" + text + "\n\n$ echo done\ndone\n\n"


COPIES = [
    pytest.param(lambda text: text, id="as-printed"),
    pytest.param(tabs_to_spaces, id="spaces"),
    pytest.param(condensed, id="condensed"),
    pytest.param(crlf, id="crlf"),
    pytest.param(wrapped_in_noise, id="noise"),
    pytest.param(lambda text: crlf(condensed(wrapped_in_noise(text))), id="all-at-once"),
]


# ---------------------------------------------------------------- topo -m

@pytest.mark.parametrize("copy", COPIES)
def test_matrix_with_nics_and_legend_survives_every_copy(copy):
    result = nvidia_smi.parse_topology_matrix(copy(sample("topo_4gpu_3nic_tabs.txt")))
    assert result["labels"] == ["GPU0", "GPU1", "GPU2", "GPU3", "NIC0", "NIC1", "NIC2"]
    assert result["nics"] == {"NIC0": "mlx5_0", "NIC1": "mlx5_1", "NIC2": "mlx5_bond_0"}
    assert result["gpus"]["GPU0"] == {
        "cpu_affinity": list(range(0, 16)) + list(range(64, 80)),
        "numa_affinity": [0],
        "gpu_numa_id": None,
    }
    assert result["gpus"]["GPU3"]["numa_affinity"] == [2]
    assert result["links"]["GPU0"]["GPU1"] == "NV12"
    assert result["links"]["GPU0"]["NIC0"] == "PIX"
    assert result["links"]["GPU3"]["NIC1"] == "PXB"
    assert result["links"]["NIC2"]["GPU1"] == "PIX"
    assert "GPU0" not in result["links"]["GPU0"], "self (X) is not a link"
    pairs = sum(len(row) for row in result["links"].values())
    assert pairs == 7 * 6


def test_gpu_numa_id_is_read():
    result = nvidia_smi.parse_topology_matrix(sample("topo_1gpu_gpu_numa_id.txt"))
    assert result["gpus"]["GPU0"] == {"cpu_affinity": list(range(72)), "numa_affinity": [0], "gpu_numa_id": 1}
    assert result["nics"] == {"NIC0": "mlx5_0"}
    assert result["links"] == {"GPU0": {"NIC0": "SYS"}, "NIC0": {"GPU0": "SYS"}}


def test_affinity_spanning_nodes_expands_and_missing_legend_gives_none():
    result = nvidia_smi.parse_topology_matrix(sample("topo_2gpu_spanning_nodes.txt"))
    assert result["gpus"]["GPU0"]["numa_affinity"] == [6, 7]
    assert result["gpus"]["GPU1"]["numa_affinity"] == [0, 1]
    assert result["gpus"]["GPU0"]["cpu_affinity"] == list(range(48, 64)) + list(range(112, 128))
    assert result["nics"] == {"NIC0": None}


@pytest.mark.parametrize("keep_lines", [2, 3, 4])
def test_truncated_output_keeps_what_was_printed(keep_lines):
    text = "\n".join(sample("topo_4gpu_3nic_tabs.txt").split("\n")[:keep_lines])
    result = nvidia_smi.parse_topology_matrix(text)
    assert result["labels"][:7] == ["GPU0", "GPU1", "GPU2", "GPU3", "NIC0", "NIC1", "NIC2"]
    assert result["gpus"]["GPU0"]["numa_affinity"] == [0]
    # GPUs whose rows were cut off are still listed, with nothing known.
    assert result["gpus"]["GPU3"] == {"cpu_affinity": None, "numa_affinity": None, "gpu_numa_id": None}
    assert result["nics"]["NIC0"] is None


def test_row_cut_mid_line_keeps_its_links():
    text = "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tNV4\t0-7\t0\nGPU1\tNV4\t X"
    result = nvidia_smi.parse_topology_matrix(text)
    assert result["links"]["GPU1"] == {"GPU0": "NV4"}
    assert result["gpus"]["GPU1"]["cpu_affinity"] is None


def test_header_lost_rows_still_parse():
    text = "GPU0\t X \tPHB\t0-11\tN/A\nGPU1\tPHB\t X \t0-11\tN/A\n"
    result = nvidia_smi.parse_topology_matrix(text)
    assert result["labels"] == ["GPU0", "GPU1"]
    assert result["links"]["GPU0"]["GPU1"] == "PHB"
    assert result["gpus"]["GPU1"] == {"cpu_affinity": list(range(12)), "numa_affinity": None, "gpu_numa_id": None}


@pytest.mark.parametrize("text", ["", "\n\n", "No devices were found\n", "garbage\twith\ttabs\n"])
def test_nothing_to_parse_gives_empty_structure(text):
    assert nvidia_smi.parse_topology_matrix(text) == {"labels": [], "gpus": {}, "nics": {}, "links": {}}


def test_old_driver_device_names_and_soc():
    text = ("\tGPU0\tGPU1\tmlx4_0\tCPU Affinity\n"
            "GPU0\t X \tSOC\tPHB\t0-7\n"
            "GPU1\tSOC\t X \tSOC\t8-15\n"
            "mlx4_0\tPHB\tSOC\t X \n")
    result = nvidia_smi.parse_topology_matrix(text)
    assert result["nics"] == {"mlx4_0": "mlx4_0"}
    assert result["links"]["GPU1"]["GPU0"] == "SOC"
    assert result["gpus"]["GPU1"] == {"cpu_affinity": list(range(8, 16)), "numa_affinity": None, "gpu_numa_id": None}


def test_damaged_affinity_value_is_none():
    text = ("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n"
            "GPU0\t X \tNV8\t-31,64-95\t0\n"
            "GPU1\tNV8\t X \t32-63\tN/A\n")
    result = nvidia_smi.parse_topology_matrix(text)
    assert result["gpus"]["GPU0"]["cpu_affinity"] is None
    assert result["gpus"]["GPU0"]["numa_affinity"] == [0]
    assert result["gpus"]["GPU1"]["numa_affinity"] is None


def test_pipe_table_with_reordered_columns():
    text = ("| NUMA Affinity | CPU Affinity |      | GPU0 | GPU1 | NIC0 |\n"
            "|---|---|---|---|---|---|\n"
            "| 1 | 8-15 | GPU0 | X | NV2 | SYS |\n"
            "| 0 | 0-7 | GPU1 | NV2 | X | PIX |\n"
            "|   |     | NIC0 | SYS | PIX | X |\n")
    result = nvidia_smi.parse_topology_matrix(text)
    assert result["labels"] == ["GPU0", "GPU1", "NIC0"]
    assert result["gpus"]["GPU0"]["numa_affinity"] == [1]
    assert result["gpus"]["GPU1"]["cpu_affinity"] == list(range(8))
    assert result["links"]["NIC0"] == {"GPU0": "SYS", "GPU1": "PIX"}


# ---------------------------------------------------------------- -L

@pytest.mark.parametrize("copy", COPIES)
def test_gpu_list_both_mig_uuid_formats(copy):
    result = nvidia_smi.parse_gpu_list(copy(sample("gpu_list_mixed.txt")))
    assert [gpu["index"] for gpu in result] == [0, 1, 2]
    assert result[0]["name"] == "NVIDIA H100 80GB HBM3"
    assert result[0]["uuid"] == "GPU-11111111-2222-3333-4444-555555555555"
    assert result[0]["mig_devices"] == [
        {"index": 0, "profile": "3g.40gb", "uuid": "MIG-aaaaaaaa-bbbb-5ccc-8ddd-eeeeeeeeeeee"},
        {"index": 1, "profile": "1g.10gb+me", "uuid": "MIG-aaaaaaaa-bbbb-5ccc-8ddd-ffffffffffff"},
    ]
    assert result[1]["mig_devices"] == []
    assert result[2]["mig_devices"][1] == {
        "index": 1, "profile": "1c.2g.10gb", "uuid": "MIG-GPU-abcdefab-cdef-abcd-efab-cdefabcdefab/3/1"}


def test_gpu_list_without_uuid_and_orphan_mig_lines():
    text = "  MIG 1g.5gb Device 0: (UUID: MIG-0000)\nGPU 0: Tesla K80\n"
    assert nvidia_smi.parse_gpu_list(text) == [{"index": 0, "name": "Tesla K80", "uuid": None, "mig_devices": []}]


@pytest.mark.parametrize("text", ["", "No devices found.\n", "MIG-63aa1884-acb8-5880-a586-173f6506966c\n"])
def test_gpu_list_empty(text):
    assert nvidia_smi.parse_gpu_list(text) == []


# ---------------------------------------------------------------- mig -lgip

@pytest.mark.parametrize("copy", COPIES)
def test_wide_lgip_with_suffixed_profiles(copy):
    result = nvidia_smi.parse_gpu_instance_profiles(copy(sample("lgip_wide_2gpu.txt")))
    names = [(item["gpu"], item["name"]) for item in result]
    assert names == [(0, "1g.24gb"), (0, "1g.24gb+me"), (0, "1g.24gb+gfx"), (0, "1g.24gb+me.all"),
                     (0, "1g.24gb-me"), (0, "4g.96gb"), (1, "1g.18gb"), (1, "7g.141gb")]
    first = result[0]
    assert first == {"gpu": 0, "name": "1g.24gb", "id": 14, "free": 4, "total": 4, "memory_gib": 23.62,
                     "p2p": False, "sm": 46, "dec": 1, "enc": 1, "ce": 1, "jpeg": 1, "ofa": 0}
    assert result[5]["p2p"] is True and result[5]["free"] == 0 and result[5]["ofa"] == 1
    # One-line rows (no CE/JPEG/OFA line) still parse.
    assert result[7]["memory_gib"] == 140.0 and "ce" not in result[7]


def test_lgip_without_header_uses_the_usual_columns():
    text = "|   0  MIG 2g.20gb       14     3/3        19.62      No     28     1     0   |\n" \
           "|                                                             2     0     0   |\n"
    (item,) = nvidia_smi.parse_gpu_instance_profiles(text)
    assert item["name"] == "2g.20gb" and item["sm"] == 28 and item["ce"] == 2


@pytest.mark.parametrize("text", ["", "No MIG-enabled devices found.\n",
                                  "|   0  MIG 3g.20gb       9        1          4:4     |\n"])
def test_lgip_nothing(text):
    assert nvidia_smi.parse_gpu_instance_profiles(text) == []


# ---------------------------------------------------------------- -q -x

def test_query_xml_domain_mig_and_na():
    result = nvidia_smi.parse_query_xml(sample("query_2gpu_domain1.xml"))
    assert result["driver_version"] == "550.90.07" and result["cuda_version"] == "12.4"
    first, second = result["gpus"]
    assert first["index"] == 0 and first["minor_number"] == 3
    assert first["pci_bus_id"] == "00000001:1B:00.0"
    assert first["mig_mode"] == "Enabled" and first["mig_mode_pending"] == "Disabled"
    assert first["compute_mode"] == "Exclusive_Process"
    assert first["memory_total_mib"] == 81920
    assert first["mig_devices"] == [{"index": 0, "gpu_instance_id": 1, "compute_instance_id": 0,
                                     "memory_total_mib": 40192}]
    assert second["memory_total_mib"] is None and second["persistence_mode"] == "Disabled"


def test_query_xml_with_text_around_it():
    text = "warning: something\r\n" + crlf(sample("query_2gpu_domain1.xml")) + "\r\ntrailer\r\n"
    assert len(nvidia_smi.parse_query_xml(text)["gpus"]) == 2


@pytest.mark.parametrize("text", ["", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
                                  sample("query_2gpu_domain1.xml")[:400]])
def test_query_xml_unreadable(text):
    with pytest.raises(ValueError):
        nvidia_smi.parse_query_xml(text)


@pytest.mark.parametrize("given, expected", [
    ("00000000:18:00.0", "0000:18:00.0"),
    ("00000001:1B:00.0", "0001:1b:00.0"),
    ("00010000:00:02.1", "10000:00:02.1"),
    ("0000:ba:00.0", "0000:ba:00.0"),
    ("18:00.0", "0000:18:00.0"),
    (" 00000000:1E:00.0\n", "0000:1e:00.0"),
    ("N/A", None),
    (None, None),
    ("0000:18:00", None),
])
def test_pci_bus_id_to_sysfs(given, expected):
    assert nvidia_smi.pci_bus_id_to_sysfs(given) == expected
