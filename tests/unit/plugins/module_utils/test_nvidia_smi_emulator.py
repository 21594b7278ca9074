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
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import enable_mig

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


@pytest.mark.parametrize("profile", PROFILES)
def test_query_csv_matches_profile(emulator, profile):
    state = emulator[profile][1]
    rows = nvidia_smi.parse_query_csv(
        smi(emulator, profile, "--query-gpu=index,name,memory.total,power.draw", "--format=csv"))
    assert [(row["index"], row["name"]) for row in rows] == \
        [(str(index), gpu["model"]) for index, gpu in enumerate(state["gpus"])]
    for row in rows:
        assert sorted(row) == ["index", "memory.total", "name", "power.draw"]
        assert row["memory.total"].endswith(" MiB") and int(row["memory.total"].split()[0]) > 0
        assert row["power.draw"].endswith(" W") and float(row["power.draw"].split()[0]) >= 0


def test_query_csv_unreadable_field_is_none(tmp_path):
    path = str(tmp_path / "l40s.json")
    state = api.new_state("l40s_4x")
    state["gpus"][1]["field_overrides"] = {"power.draw": "[Not Supported]"}
    api.write_state(state, path)
    rc, out, _err = api.run("nvidia-smi", ["--query-gpu=index,power.draw", "--format=csv"], path)
    assert rc == 0
    rows = nvidia_smi.parse_query_csv(out)
    assert [row["power.draw"] is None for row in rows] == [False, True, False, False]


@pytest.fixture
def mig_enabled(tmp_path):
    path = str(tmp_path / "a100.json")
    state = api.new_state("a100_8x_mig")
    enable_mig(state)
    api.write_state(state, path)
    return path


def test_mig_create_output_matches_gpu_instances(mig_enabled):
    rc, out, _err = api.run("nvidia-smi", ["mig", "-i", "0", "-cgi", "9,19,20", "-C"], mig_enabled)
    assert rc == 0
    result = nvidia_smi.parse_mig_command_output(out)
    assert [(gi["gpu"], gi["profile"], gi["profile_id"]) for gi in result["gpu_instances"]] == \
        [(0, "3g.40gb", 9), (0, "1g.10gb", 19), (0, "1g.10gb+me", 20)]
    assert [(ci["gpu_instance"], ci["id"], ci["profile"]) for ci in result["compute_instances"]] == \
        [(gi["id"], 0, gi["profile"]) for gi in result["gpu_instances"]]
    assert result["errors"] == []
    listed = nvidia_smi.parse_query_xml(api.run("nvidia-smi", ["-q", "-x"], mig_enabled)[1])
    assert [device["gpu_instance_id"] for device in listed["gpus"][0]["mig_devices"]] == \
        [gi["id"] for gi in result["gpu_instances"]]


def test_mig_create_compute_instance_and_failures(mig_enabled):
    created = nvidia_smi.parse_mig_command_output(
        api.run("nvidia-smi", ["mig", "-i", "0", "-cgi", "9"], mig_enabled)[1])
    gpu_instance = created["gpu_instances"][0]["id"]
    assert created["compute_instances"] == [] and created["errors"] == []

    rc, out, _err = api.run("nvidia-smi", ["mig", "-i", "0", "-cci", "0,1", "-gi", str(gpu_instance)], mig_enabled)
    assert rc != 0
    result = nvidia_smi.parse_mig_command_output(out)
    assert result["compute_instances"] == [
        {"gpu": 0, "gpu_instance": gpu_instance, "id": 0, "profile": "1c.3g.40gb", "profile_id": 0}]
    assert result["errors"] == [line.strip() for line in out.splitlines()[1:]]
    assert result["errors"][-1] == "Failed to create compute instances: Insufficient Resources"

    rc, out, _err = api.run("nvidia-smi", ["mig", "-i", "0", "-cgi", "0", "-C"], mig_enabled)
    assert rc != 0
    result = nvidia_smi.parse_mig_command_output(out)
    assert result["gpu_instances"] == [] and len(result["errors"]) == 2
    assert result["errors"][0].startswith("Unable to create a GPU instance on GPU  0 using profile 0: ")


def test_mig_create_without_mig_mode_is_an_error(tmp_path):
    path = str(tmp_path / "a100.json")
    api.write_state(api.new_state("a100_8x_mig"), path)
    _rc, out, _err = api.run("nvidia-smi", ["mig", "-cgi", "9", "-C"], path)
    assert nvidia_smi.parse_mig_command_output(out) == {
        "gpu_instances": [], "compute_instances": [], "errors": ["No MIG-enabled devices found."]}


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


def test_mig_create_and_csv_shapes_match_real(emulator, mig_enabled):
    real_mig = nvidia_smi.parse_mig_command_output(
        real_captures.load("h100_pcie_80gb_driver525_nvidia_smi_mig_cgi_9_19_19_19_C.txt"))
    emulated_mig = nvidia_smi.parse_mig_command_output(
        api.run("nvidia-smi", ["mig", "-i", "0", "-cgi", "9,19,19,19", "-C"], mig_enabled)[1])
    assert shape(real_mig) == shape(emulated_mig)
    assert emulated_mig["gpu_instances"] and emulated_mig["compute_instances"]

    real_csv = nvidia_smi.parse_query_csv(
        real_captures.load("h100_pcie_driver525_query_pci_bus_id_mig_mode_current_csv.txt"))
    emulated_csv = nvidia_smi.parse_query_csv(
        smi(emulator, "dgx_h100", "--query-gpu=pci.bus_id,mig.mode.current", "--format=csv"))
    assert shape(real_csv[:1]) == shape(emulated_csv[:1])


def test_lgi_and_lgipp_match_the_instances_created(mig_enabled):
    path = mig_enabled
    rc, out, err = api.run("nvidia-smi", ["mig", "-i", "0", "-cgi", "9:4,19:0,19:1", "-C"], path)
    assert rc == 0, err
    created = nvidia_smi.parse_mig_command_output(out)["gpu_instances"]
    rc, out, err = api.run("nvidia-smi", ["mig", "-lgi"], path)
    assert rc == 0, err
    listed = nvidia_smi.parse_gpu_instances(out)
    assert sorted((i["id"], i["profile"]) for i in listed) == sorted((c["id"], c["profile"]) for c in created)
    assert sorted((i["profile_id"], i["start"], i["size"]) for i in listed) == [(9, 4, 4), (19, 0, 1), (19, 1, 1)]
    rc, out, err = api.run("nvidia-smi", ["mig", "-i", "0", "-lgipp"], path)
    assert rc == 0, err
    sizes = dict((p["profile_id"], p["size"]) for p in nvidia_smi.parse_gpu_instance_placements(out))
    assert all(sizes[i["profile_id"]] == i["size"] for i in listed)


def test_xml_processes_name_their_gpu_instance(mig_enabled):
    path = mig_enabled
    rc, out, err = api.run("nvidia-smi", ["mig", "-i", "0", "-cgi", "9", "-C"], path)
    assert rc == 0, err
    instance = nvidia_smi.parse_mig_command_output(out)["gpu_instances"][0]["id"]
    state = api.read_state(path)
    api.add_process(state, gpu=0, pid=4242, name="python3", used_memory_mib=1024,
                    gpu_instance_id=instance, compute_instance_id=0)
    api.write_state(state, path)
    gpu = nvidia_smi.parse_query_xml(api.run("nvidia-smi", ["-q", "-x"], path)[1])["gpus"][0]
    assert [(p["pid"], p["gpu_instance_id"], p["compute_instance_id"], p["type"]) for p in gpu["processes"]] == [
        (4242, instance, 0, "C")]
