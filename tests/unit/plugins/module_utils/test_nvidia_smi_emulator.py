# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The parsers on the GPU emulator's output, for every profile, checked against the profile.

Also: emulator output and real captures of the same kind parse into the same
structure, so what the lab proves holds for real machines.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import nvidia_smi
from ansible_collections.gpuops.hardening.plugins.module_utils.cpulist import parse_cpulist
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit import real_captures

PROFILES = sorted(api.PROFILES)


@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    """{profile: (state path, profile data)}; fresh state per profile."""
    base = tmp_path_factory.mktemp("gpuemu")
    states = {}
    for name in PROFILES:
        path = str(base / ("%s.json" % name))
        state = api.new_state(name)
        api.write_state(state, path)
        states[name] = (path, state)
    return states


def smi(emulator, profile, *argv):
    rc, out, err = api.run("nvidia-smi", list(argv), emulator[profile][0])
    assert rc == 0, err
    return out


def _node_cpus(state, node_id):
    if node_id < 0:
        return parse_cpulist(state["cpus_possible"])
    return parse_cpulist(next(node["cpus"] for node in state["numa_nodes"] if node["id"] == node_id))


@pytest.mark.parametrize("profile", PROFILES)
def test_query_matches_profile(emulator, profile):
    state = emulator[profile][1]
    result = nvidia_smi.parse_query_xml(smi(emulator, profile, "-q", "-x"))
    assert result["driver_version"] == state["driver_version"]
    assert result["cuda_version"] == state["cuda_version"]
    assert [gpu["uuid"] for gpu in result["gpus"]] == [gpu["uuid"] for gpu in state["gpus"]]
    assert [nvidia_smi.pci_bus_id_to_sysfs(gpu["pci_bus_id"]) for gpu in result["gpus"]] == \
        [gpu["pci_bus_id"] for gpu in state["gpus"]]
    assert all(gpu["name"] == want["model"] for gpu, want in zip(result["gpus"], state["gpus"]))
    assert all(gpu["memory_total_mib"] > 0 for gpu in result["gpus"])


@pytest.mark.parametrize("profile", PROFILES)
def test_topology_matches_profile(emulator, profile):
    state = emulator[profile][1]
    result = nvidia_smi.parse_topology_matrix(smi(emulator, profile, "topo", "-m"))
    gpu_labels = ["GPU%d" % n for n in range(len(state["gpus"]))]
    nic_labels = ["NIC%d" % n for n in range(len(state["nics"]))]
    assert result["labels"] == gpu_labels + nic_labels
    assert result["nics"] == dict(zip(nic_labels, [nic["ibdev"] for nic in state["nics"]]))
    for label, want in zip(gpu_labels, state["gpus"]):
        gpu = result["gpus"][label]
        assert gpu["numa_affinity"] == ([want["numa_node"]] if want["numa_node"] >= 0 else None)
        assert gpu["cpu_affinity"] == _node_cpus(state, want["numa_node"])
        assert gpu["gpu_numa_id"] == want.get("gpu_numa_id")
    count = len(result["labels"])
    assert sum(len(row) for row in result["links"].values()) == count * (count - 1)


@pytest.mark.parametrize("profile", PROFILES)
def test_gpu_list_matches_profile(emulator, profile):
    state = emulator[profile][1]
    result = nvidia_smi.parse_gpu_list(smi(emulator, profile, "-L"))
    assert [(gpu["index"], gpu["name"], gpu["uuid"], gpu["mig_devices"]) for gpu in result] == \
        [(index, gpu["model"], gpu["uuid"], []) for index, gpu in enumerate(state["gpus"])]


def test_mig_devices_and_profiles(tmp_path):
    path = str(tmp_path / "a100.json")
    api.write_state(api.new_state("a100_8x_mig"), path)
    for argv in (["-i", "0", "-mig", "1"],):
        assert api.run("nvidia-smi", argv, path)[0] == 0
    api.reboot(path)
    assert api.run("nvidia-smi", ["mig", "-i", "0", "-cgi", "9,19,19", "-C"], path)[0] == 0

    listed = nvidia_smi.parse_gpu_list(api.run("nvidia-smi", ["-L"], path)[1])
    devices = listed[0]["mig_devices"]
    assert [device["profile"] for device in devices] == ["3g.40gb", "1g.10gb", "1g.10gb"]
    assert all(device["uuid"].startswith("MIG-") and not device["uuid"].startswith("MIG-GPU-") for device in devices)
    assert all(gpu["mig_devices"] == [] for gpu in listed[1:])

    query = nvidia_smi.parse_query_xml(api.run("nvidia-smi", ["-q", "-x"], path)[1])
    assert query["gpus"][0]["mig_mode"] == "Enabled"
    assert [device["gpu_instance_id"] for device in query["gpus"][0]["mig_devices"]] == [2, 11, 12]

    profiles = nvidia_smi.parse_gpu_instance_profiles(api.run("nvidia-smi", ["mig", "-lgip", "-i", "0"], path)[1])
    names = [item["name"] for item in profiles]
    assert "1g.10gb" in names and "1g.10gb+me" in names and "7g.80gb" in names
    assert all(item["gpu"] == 0 and item["total"] >= item["free"] >= 0 for item in profiles)
    assert next(item for item in profiles if item["name"] == "7g.80gb")["free"] == 0


# ------------------------------------------------------------------ same shape as real

def shape(value):
    """The structure of a parsed value: dict keys, list element shapes, scalar types."""
    if isinstance(value, dict):
        return {"dict": sorted(value)}
    if isinstance(value, list):
        kinds = sorted(set(repr(shape(item)) for item in value))
        return {"list": kinds}
    return type(value).__name__


def _topology_shape(result):
    gpu_entries = set()
    for gpu in result["gpus"].values():
        for key, value in gpu.items():
            gpu_entries.add((key, "NoneType" if value is None else repr(shape(value))))
    return {
        "keys": sorted(result),
        "gpu_keys": sorted(set(key for gpu in result["gpus"].values() for key in gpu)),
        "gpu_value_kinds": gpu_entries,
        "link_value_type": set(type(v).__name__ for row in result["links"].values() for v in row.values()),
    }


@pytest.mark.parametrize("real, profile", [
    ("asus_esc8000a_e12_4x_rtx6000ada_nvidia_smi_topo_m.txt", "l40s_4x"),
    ("a800_8gpu_2socket_4nic_driver525_nvidia_smi_topo_matrix.txt", "a100_8x_mig"),
    ("puget_wrx90_tr7965wx_2x_rtx6000ada_nvidia_smi_topo_m.txt", "dgx_h100"),
])
def test_topology_shape_matches_real(emulator, real, profile):
    real_shape = _topology_shape(nvidia_smi.parse_topology_matrix(real_captures.load(real)))
    emulated = _topology_shape(nvidia_smi.parse_topology_matrix(smi(emulator, profile, "topo", "-m")))
    assert real_shape["keys"] == emulated["keys"]
    assert real_shape["gpu_keys"] == emulated["gpu_keys"]
    assert real_shape["link_value_type"] == emulated["link_value_type"] == {"str"}
    # Both sides give lists of ints where a value is known and None where not.
    allowed = {("cpu_affinity", repr({"list": ["'int'"]})), ("numa_affinity", repr({"list": ["'int'"]})),
               ("gpu_numa_id", "NoneType"), ("gpu_numa_id", "'int'")}
    assert real_shape["gpu_value_kinds"] <= allowed and emulated["gpu_value_kinds"] <= allowed


@pytest.mark.parametrize("real, profile", [
    ("telegraf_a100_sxm4_80gb_x4_mig_enabled_driver535_nvidia_smi_q_x.xml.txt", "a100_8x_mig"),
    ("netdata_rtx4090_persistence_enabled_driver535_nvidia_smi_q_x.xml.txt", "l40s_4x"),
])
def test_query_shape_matches_real(emulator, real, profile):
    real_result = nvidia_smi.parse_query_xml(real_captures.load(real))
    emulated = nvidia_smi.parse_query_xml(smi(emulator, profile, "-q", "-x"))
    assert sorted(real_result) == sorted(emulated)
    assert sorted(real_result["gpus"][0]) == sorted(emulated["gpus"][0])
    for key in ("name", "uuid", "pci_bus_id", "persistence_mode", "compute_mode"):
        assert type(real_result["gpus"][0][key]) is type(emulated["gpus"][0][key]) is str, key


def test_gpu_list_and_lgip_shapes_match_real(emulator, tmp_path):
    real_list = nvidia_smi.parse_gpu_list(real_captures.load("h100_80gb_mig_mixed_3g_2g_1g_nvidia_smi_L.txt"))
    emulated_list = nvidia_smi.parse_gpu_list(smi(emulator, "dgx_h100", "-L"))
    assert sorted(real_list[0]) == sorted(emulated_list[0])

    path = str(tmp_path / "mig.json")
    api.write_state(api.new_state("a100_8x_mig"), path)
    _rc, out, _err = api.run("nvidia-smi", ["mig", "-lgip"], path)
    assert nvidia_smi.parse_gpu_instance_profiles(out) == []  # "No MIG-enabled devices found."
    api.run("nvidia-smi", ["-i", "0", "-mig", "1"], path)
    api.reboot(path)
    rc, out, _err = api.run("nvidia-smi", ["mig", "-lgip"], path)
    assert rc == 0
    real_lgip = nvidia_smi.parse_gpu_instance_profiles(real_captures.load("a100_40gb_nvidia_smi_mig_lgip.txt"))
    emulated_lgip = nvidia_smi.parse_gpu_instance_profiles(out)
    assert set(repr(shape(item)) for item in real_lgip) == set(repr(shape(item)) for item in emulated_lgip)
