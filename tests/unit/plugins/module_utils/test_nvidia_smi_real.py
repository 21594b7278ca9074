# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Conformance: the parsers on real captures from many machines, read at test time.

The captures live outside the repository (see tests/unit/real_captures.py).
Expected values below were read off each capture by hand.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import nvidia_smi
from ansible_collections.gpuops.hardening.plugins.module_utils.cpulist import parse_cpulist
from ansible_collections.gpuops.hardening.tests.unit import real_captures

GPUS8 = ["GPU%d" % n for n in range(8)]


def _captures_of(*commands):
    """Capture names whose recorded command contains one of the words."""
    return [name for name in real_captures.names("*.txt")
            if any(word in real_captures.command_of(name) for word in commands)]


def _cpus(text):
    return parse_cpulist(text)


# ------------------------------------------------------------------ topo -m

TOPOLOGY = {
    "a100_8gpu_2socket_24c_condensed_nvidia_smi_topo_m.txt": dict(
        labels=GPUS8, nics={}, gpu="GPU4", cpus="24-47", numa=[1], link=("GPU0", "GPU7", "NV12")),
    "a800_8gpu_2socket_4nic_driver525_nvidia_smi_topo_matrix.txt": dict(
        labels=GPUS8 + ["NIC0", "NIC1", "NIC2", "NIC3"],
        nics={"NIC0": "mlx5_0", "NIC1": "mlx5_1", "NIC2": "mlx5_2", "NIC3": "mlx5_3"},
        gpu="GPU4", cpus="32-63,96-127", numa=[1], link=("GPU1", "NIC0", "PIX")),
    "asus_esc8000a_e12_4x_rtx6000ada_nvidia_smi_topo_m.txt": dict(
        labels=["GPU0", "GPU1", "GPU2", "GPU3", "NIC0", "NIC1", "NIC2", "NIC3"],
        nics={"NIC0": "mlx5_0", "NIC1": "mlx5_1", "NIC2": "mlx5_2", "NIC3": "mlx5_3"},
        gpu="GPU2", cpus="32-63", numa=[1], link=("NIC2", "GPU3", "NODE")),
    "consumer_2gpu_nvlink_nv2_numa_affinity_na_nvidia_smi_topo_m.txt": dict(
        labels=["GPU0", "GPU1"], nics={}, gpu="GPU1", cpus="0-23", numa=None, link=("GPU0", "GPU1", "NV2")),
    "consumer_2gpu_pcie_phb_numa_affinity_na_nvidia_smi_topo_m.txt": dict(
        labels=["GPU0", "GPU1"], nics={}, gpu="GPU0", cpus="0-11", numa=None, link=("GPU1", "GPU0", "PHB")),
    "dgx1_v100_mlx5x4_ucx_py_nvidia_smi_topo_m.txt": dict(
        labels=GPUS8 + ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"],
        nics={"mlx5_0": "mlx5_0", "mlx5_1": "mlx5_1", "mlx5_2": "mlx5_2", "mlx5_3": "mlx5_3"},
        gpu="GPU4", cpus="20-39,60-79", numa=None, link=("GPU6", "mlx5_3", "PIX")),
    "dgx1_v100_pytorch_ddp_bench_nvidia_smi_topo_m.txt": dict(
        labels=GPUS8 + ["mlx5_2", "mlx5_0", "mlx5_3", "mlx5_1"],
        nics={"mlx5_2": "mlx5_2", "mlx5_0": "mlx5_0", "mlx5_3": "mlx5_3", "mlx5_1": "mlx5_1"},
        gpu="GPU4", cpus="0-19,40-59", numa=None, link=("GPU4", "mlx5_2", "PIX")),
    "h100_8gpu_2socket_52c_condensed_nvidia_smi_topo_m.txt": dict(
        labels=GPUS8, nics={}, gpu="GPU5", cpus="52-103", numa=[1], link=("GPU3", "GPU4", "NV18")),
    "h100_8gpu_2socket_52c_ht_nvidia_smi_topo_m.txt": dict(
        labels=GPUS8, nics={}, gpu="GPU7", cpus="52-103,156-207", numa=[1], link=("GPU7", "GPU6", "NV18")),
    "h20_8gpu_2socket_amd_epyc_96c_2nic_nvidia_smi_topo_m.txt": dict(
        labels=GPUS8 + ["NIC0", "NIC1"], nics={"NIC0": None, "NIC1": None},
        gpu="GPU4", cpus="96-191,288-383", numa=[1], link=("GPU6", "NIC1", "PHB")),
    "puget_wrx90_tr7965wx_2x_rtx6000ada_nvidia_smi_topo_m.txt": dict(
        labels=["GPU0", "GPU1", "NIC0", "NIC1"], nics={"NIC0": "mlx5_0", "NIC1": "mlx5_1"},
        gpu="GPU1", cpus="0-23", numa=[0], link=("NIC0", "NIC1", "PIX")),
    "tesla_k40m_x4_2socket_mlx4_tensorflow_gdr_nvidia_smi_topo_m_soc_legend.txt": dict(
        labels=["GPU0", "GPU1", "GPU2", "GPU3", "mlx4_0"], nics={"mlx4_0": "mlx4_0"},
        gpu="GPU2", cpus="6-11", numa=None, link=("GPU0", "GPU2", "SOC")),
    # Re-rendered by its publisher as a markdown table with the affinity
    # columns moved first: the cells are unambiguous, so it reads the same.
    "polaris_4x_a100_epyc_milan_nps4_topo_REFORMATTED_markdown_table.txt": dict(
        labels=["GPU0", "GPU1", "GPU2", "GPU3", "mlx5_0", "mlx5_1"],
        nics={"mlx5_0": "mlx5_0", "mlx5_1": "mlx5_1"},
        gpu="GPU0", cpus="24-31,56-63", numa=[3], link=("mlx5_1", "GPU1", "PHB")),
}


@pytest.mark.parametrize("name", sorted(TOPOLOGY))
def test_topology_capture(name):
    want = TOPOLOGY[name]
    result = nvidia_smi.parse_topology_matrix(real_captures.load(name))
    assert result["labels"] == want["labels"]
    assert result["nics"] == want["nics"]
    assert sorted(result["gpus"]) == sorted(label for label in want["labels"] if label.startswith("GPU"))
    gpu = result["gpus"][want["gpu"]]
    assert gpu["cpu_affinity"] == _cpus(want["cpus"])
    assert gpu["numa_affinity"] == want["numa"]
    assert gpu["gpu_numa_id"] is None
    first, second, value = want["link"]
    assert result["links"][first][second] == value
    assert result["links"][second][first] == value
    # A complete matrix: every ordered pair of distinct labels has a link.
    count = len(want["labels"])
    assert sum(len(row) for row in result["links"].values()) == count * (count - 1)


def test_mangled_copy_reads_what_is_readable():
    """A damaged copy: CPU lists cut at the start, NIC rows without NIC columns, cut legend.

    Cut values ("-31,64-95") are not valid lists and become None; a value that
    is damaged but still well formed ("2-63,96-127") cannot be told apart and is
    kept. NIC rows are kept, their printed links mirrored onto the GPU rows.
    """
    result = nvidia_smi.parse_topology_matrix(real_captures.load("a800_8gpu_MANGLED_copy_nvidia_smi_topo_matrix.txt"))
    assert result["labels"] == GPUS8 + ["NIC0", "NIC1", "NIC2", "NIC3"]
    assert result["nics"] == {"NIC0": "mlx5_0", "NIC1": "mlx5_1", "NIC2": "mlx5_2", "NIC3": "mlx5_3"}
    for label in ("GPU0", "GPU1", "GPU2", "GPU3"):
        assert result["gpus"][label] == {"cpu_affinity": None, "numa_affinity": [0], "gpu_numa_id": None}
    assert result["gpus"]["GPU4"]["cpu_affinity"] == _cpus("32-63,96-127")
    assert result["gpus"]["GPU7"]["cpu_affinity"] == _cpus("2-63,96-127")
    assert result["links"]["NIC0"]["GPU1"] == "PIX"
    assert result["links"]["GPU1"]["NIC0"] == "PIX"
    assert result["links"]["GPU7"]["NIC3"] == "PIX"
    assert "NIC1" not in result["links"]["NIC0"], "no NIC columns were printed"


@pytest.mark.parametrize("name, value", [
    ("h100_8gpu_nvidia_smi_topo_p2p_r.txt", "OK"),
    ("l4_2gpu_nvidia_smi_topo_p2p_r_cns.txt", "CNS"),
])
def test_p2p_matrix_reads_as_links_without_affinity(name, value):
    result = nvidia_smi.parse_topology_matrix(real_captures.load(name))
    assert result["links"]["GPU0"]["GPU1"] == value
    assert all(gpu == {"cpu_affinity": None, "numa_affinity": None, "gpu_numa_id": None}
               for gpu in result["gpus"].values())


def test_every_topology_capture_has_the_contract_shape():
    names = _captures_of("topo")
    assert len(names) >= 15
    for name in names:
        result = nvidia_smi.parse_topology_matrix(real_captures.load(name))
        assert set(result) == {"labels", "gpus", "nics", "links"}, name
        assert result["gpus"], name
        assert set(result["gpus"]) | set(result["nics"]) == set(result["labels"]), name
        for gpu in result["gpus"].values():
            assert set(gpu) == {"cpu_affinity", "numa_affinity", "gpu_numa_id"}
            for key in ("cpu_affinity", "numa_affinity"):
                assert gpu[key] is None or all(isinstance(n, int) for n in gpu[key])
        for row in result["links"].values():
            assert all(isinstance(value, str) and value != "X" for value in row.values())


# ------------------------------------------------------------------ -L

GPU_LISTS = {
    "a100_sxm4_40gb_driver450_mig_7x1g5gb_nvidia_smi_L_old_uuid_format.txt": (1, ["1g.5gb"] * 7, "MIG-GPU-"),
    "a100_sxm4_40gb_driver450_mig_mixed_nvidia_smi_L_old_uuid_format.txt": (1, ["3g.20gb", "2g.10gb", "1g.5gb"], "MIG-GPU-"),
    "h100_80gb_mig_all_1g10gb_nvidia_smi_L.txt": (1, ["1g.10gb"] * 7, "MIG-"),
    "h100_80gb_mig_mixed_3g_2g_1g_nvidia_smi_L.txt": (1, ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"], "MIG-"),
    "h100_pcie_80gb_driver525_mig_3g_3x1g_nvidia_smi_L.txt": (1, ["3g.40gb", "1g.10gb", "1g.10gb", "1g.10gb"], "MIG-"),
}


@pytest.mark.parametrize("name", sorted(GPU_LISTS))
def test_gpu_list_capture(name):
    count, profiles, prefix = GPU_LISTS[name]
    result = nvidia_smi.parse_gpu_list(real_captures.load(name))
    assert len(result) == count
    gpu = result[0]
    assert gpu["index"] == 0 and gpu["uuid"].startswith("GPU-") and gpu["name"]
    assert [device["profile"] for device in gpu["mig_devices"]] == profiles
    assert [device["index"] for device in gpu["mig_devices"]] == list(range(len(profiles)))
    for device in gpu["mig_devices"]:
        assert device["uuid"].startswith(prefix)
        if prefix == "MIG-GPU-":
            # Old form: MIG-<parent GPU uuid>/<GPU instance>/<compute instance>.
            assert device["uuid"].startswith("MIG-" + gpu["uuid"] + "/")
        else:
            assert not device["uuid"].startswith("MIG-GPU-")


def test_grepped_uuids_are_not_a_gpu_list():
    assert nvidia_smi.parse_gpu_list(real_captures.load("polaris_a100_mig_nvidia_smi_L_grep_mig_uuids.txt")) == []


# ------------------------------------------------------------------ mig -lgip

LGIP = {
    "a100_40gb_nvidia_smi_mig_lgip.txt": (
        ["1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"],
        {"name": "1g.5gb+me", "id": 20, "free": 1, "total": 1, "memory_gib": 4.75, "sm": 14, "ofa": 1}),
    "h100_pcie_80gb_driver525_nvidia_smi_mig_lgip.txt": (
        ["1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"],
        {"name": "7g.80gb", "id": 0, "free": 1, "total": 1, "memory_gib": 79.0, "sm": 114, "ce": 8}),
}


@pytest.mark.parametrize("name", sorted(LGIP))
def test_lgip_capture(name):
    names, spot = LGIP[name]
    result = nvidia_smi.parse_gpu_instance_profiles(real_captures.load(name))
    assert [item["name"] for item in result] == names
    assert all(item["gpu"] == 0 and item["p2p"] is False for item in result)
    item = next(item for item in result if item["name"] == spot["name"])
    for key, value in spot.items():
        assert item[key] == value, key


@pytest.mark.parametrize("name", ["a100_40gb_nvidia_smi_mig_lgi_2x3g20gb.txt",
                                  "h100_pcie_80gb_driver525_nvidia_smi_mig_lgi.txt",
                                  "h100_pcie_80gb_driver525_nvidia_smi_mig_lgipp.txt"])
def test_other_mig_listings_are_not_profiles(name):
    assert nvidia_smi.parse_gpu_instance_profiles(real_captures.load(name)) == []


# ------------------------------------------------------------------ -q -x

def test_every_xml_capture_parses():
    names = _captures_of("-q -x")
    assert len(names) >= 9
    for name in names:
        text = real_captures.load(name)
        result = nvidia_smi.parse_query_xml(text)
        # Count the gpu elements, not <attached_gpus>: one capture was trimmed to
        # its first GPU of four.
        assert len(result["gpus"]) == text.count("<gpu id="), name
        assert result["driver_version"] and result["cuda_version"], name
        for gpu in result["gpus"]:
            assert gpu["uuid"].startswith("GPU-"), name
            assert nvidia_smi.pci_bus_id_to_sysfs(gpu["pci_bus_id"]), name
            assert gpu["compute_mode"] == "Default", name
            assert gpu["memory_total_mib"] > 0, name


@pytest.mark.parametrize("name, mig, devices, persistence", [
    ("netdata_a100_sxm4_40gb_mig_enabled_2migdevices_driver510_nvidia_smi_q_x.xml.txt", "Enabled", 2, "Disabled"),
    ("netdata_rtx4090_persistence_enabled_driver535_nvidia_smi_q_x.xml.txt", None, 0, "Enabled"),
    ("telegraf_quadro_p400_driver418_nvidia_smi_q_x.xml.txt", None, 0, "Disabled"),
    ("telegraf_rtx3080_windows_driver536_nvidia_smi_q_x.xml.txt", None, 0, None),
])
def test_xml_modes(name, mig, devices, persistence):
    gpu = nvidia_smi.parse_query_xml(real_captures.load(name))["gpus"][0]
    assert gpu["mig_mode"] == mig
    assert len(gpu["mig_devices"]) == devices
    assert gpu["persistence_mode"] == persistence


def test_xml_index_is_order_not_minor_number():
    result = nvidia_smi.parse_query_xml(
        real_captures.load("telegraf_a100_sxm4_80gb_x4_mig_enabled_driver535_nvidia_smi_q_x.xml.txt"))
    assert [gpu["index"] for gpu in result["gpus"]] == list(range(len(result["gpus"])))
    assert result["gpus"][0]["minor_number"] != 0


# ------------------------------------------------------------------ --query-gpu csv

def _query_fields(command):
    """The field names a recorded command asked for (``--query-gpu=a,b``)."""
    word = next(word for word in command.split() if word.startswith("--query-gpu="))
    return [name.strip() for name in word.split("=", 1)[1].split(",")]


def test_every_csv_query_capture_has_the_asked_fields():
    names = _captures_of("--format=csv")
    with_header = [name for name in names if "noheader" not in real_captures.command_of(name)]
    assert with_header and len(names) > len(with_header)
    for name in names:
        rows = nvidia_smi.parse_query_csv(real_captures.load(name))
        if name in with_header:
            fields = _query_fields(real_captures.command_of(name))
            assert rows and all(sorted(row) == sorted(fields) for row in rows), name
        else:
            assert rows == [], name  # no header names the fields


def test_csv_query_capture_values():
    rows = nvidia_smi.parse_query_csv(real_captures.load("h100_pcie_driver525_query_pci_bus_id_mig_mode_current_csv.txt"))
    assert rows == [{"pci.bus_id": "00000000:01:00.0", "mig.mode.current": "Enabled"}]


# ------------------------------------------------------------------ mig -cgi -C

MIG_CREATED = {
    "a100_40gb_nvidia_smi_mig_cgi_9_3g20gb_C.txt": (
        [(2, "3g.20gb", 9), (1, "3g.20gb", 9)],
        [(2, 0, "3g.20gb", 2), (1, 0, "3g.20gb", 2)]),
    "h100_pcie_80gb_driver525_nvidia_smi_mig_cgi_9_19_19_19_C.txt": (
        [(2, "3g.40gb", 9), (7, "1g.10gb", 19), (8, "1g.10gb", 19), (9, "1g.10gb", 19)],
        [(2, 0, "3g.40gb", 2), (7, 0, "1g.10gb", 0), (8, 0, "1g.10gb", 0), (9, 0, "1g.10gb", 0)]),
}


@pytest.mark.parametrize("name", sorted(MIG_CREATED))
def test_mig_create_capture(name):
    gpu_instances, compute_instances = MIG_CREATED[name]
    result = nvidia_smi.parse_mig_command_output(real_captures.load(name))
    assert [(gi["id"], gi["profile"], gi["profile_id"]) for gi in result["gpu_instances"]] == gpu_instances
    assert [(ci["gpu_instance"], ci["id"], ci["profile"], ci["profile_id"])
            for ci in result["compute_instances"]] == compute_instances
    assert all(item["gpu"] == 0 for item in result["gpu_instances"] + result["compute_instances"])
    assert result["errors"] == []


def test_every_mig_create_capture_has_one_instance_per_profile_asked():
    names = _captures_of("mig -cgi")
    assert len(names) >= 2
    for name in names:
        words = real_captures.command_of(name).split()
        asked = words[words.index("-cgi") + 1].split(",")
        result = nvidia_smi.parse_mig_command_output(real_captures.load(name))
        assert len(result["gpu_instances"]) == len(asked), name
        if "-C" in words:
            assert [ci["gpu_instance"] for ci in result["compute_instances"]] == \
                [gi["id"] for gi in result["gpu_instances"]], name


def test_mig_mode_and_destroy_captures_create_nothing():
    names = _captures_of("-mig ", "mig -dci", "mig -dgi")
    assert len(names) >= 4
    for name in names:
        result = nvidia_smi.parse_mig_command_output(real_captures.load(name))
        assert result == {"gpu_instances": [], "compute_instances": [], "errors": []}, name
        assert nvidia_smi.parse_query_csv(real_captures.load(name)) == [], name


# ------------------------------------------------------------------ mig -lgi / -lgipp

# capture: (profile, profile id, instance id, start, size) per GPU instance, read off the capture by hand
LGI = {
    "a100_40gb_nvidia_smi_mig_lgi_2x3g20gb.txt": [("3g.20gb", 9, 1, 4, 4), ("3g.20gb", 9, 2, 0, 4)],
    "h100_pcie_80gb_driver525_nvidia_smi_mig_lgi.txt": [
        ("1g.10gb", 19, 7, 0, 1), ("1g.10gb", 19, 8, 1, 1), ("1g.10gb", 19, 9, 2, 1), ("3g.40gb", 9, 2, 4, 4)],
}


@pytest.mark.parametrize("name", sorted(LGI))
def test_lgi_capture(name):
    instances = nvidia_smi.parse_gpu_instances(real_captures.load(name))
    assert [(i["profile"], i["profile_id"], i["id"], i["start"], i["size"]) for i in instances] == LGI[name]
    assert {i["gpu"] for i in instances} == {0}


def test_lgipp_capture():
    placements = nvidia_smi.parse_gpu_instance_placements(
        real_captures.load("h100_pcie_80gb_driver525_nvidia_smi_mig_lgipp.txt"))
    assert [(p["profile_id"], p["starts"], p["size"]) for p in placements] == [
        (19, [0, 1, 2, 3, 4, 5, 6], 1), (20, [0, 1, 2, 3, 4, 5, 6], 1), (15, [0, 2, 4, 6], 2), (14, [0, 2, 4], 2),
        (9, [0, 4], 4), (5, [0], 4), (0, [0], 8)]


@pytest.mark.parametrize("name", ["a100_40gb_nvidia_smi_mig_lgip.txt", "h100_pcie_80gb_driver525_nvidia_smi_mig_lgip.txt"])
def test_other_mig_listings_are_not_instances_or_placements(name):
    text = real_captures.load(name)
    assert nvidia_smi.parse_gpu_instances(text) == [] and nvidia_smi.parse_gpu_instance_placements(text) == []


def test_xml_processes_capture():
    gpu = nvidia_smi.parse_query_xml(real_captures.load("telegraf_a10g_driver515_nvidia_smi_q_x.xml.txt"))["gpus"][0]
    assert gpu["processes"] == [{"pid": 725, "name": "/usr/lib/xorg/Xorg", "type": "G", "gpu_instance_id": None,
                                 "compute_instance_id": None, "used_memory_mib": 22}]
    windows = nvidia_smi.parse_query_xml(
        real_captures.load("telegraf_rtx3080_windows_driver536_nvidia_smi_q_x.xml.txt"))["gpus"][0]
    assert len(windows["processes"]) == 5 and all(p["gpu_instance_id"] is None for p in windows["processes"])
