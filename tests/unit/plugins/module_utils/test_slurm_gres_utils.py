# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gres.conf lines from the GPU topology: Slurm core indexes, types, merging."""

from __future__ import annotations

import os
import re

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import slurm_gres, sysfs_topology
from ansible_collections.gpuops.hardening.plugins.module_utils.cpulist import parse_cpulist
from ansible_collections.gpuops.hardening.plugins.module_utils.gpu_topology import merge_mig_devices
from ansible_collections.gpuops.hardening.plugins.module_utils.nvidia_smi import (
    parse_gpu_list, parse_query_xml, parse_topology_matrix)
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import nvidia_caps
from ansible_collections.gpuops.hardening.tests.unit import real_captures


def x86_enumeration(sockets, cores_per_socket, threads_per_core, core_ids=None):
    """CPUs numbered as Linux numbers x86 hosts: every core's first thread, socket by socket, then
    the second threads in the same order. core_ids: the sysfs core_id of each core of a socket."""
    core_ids = core_ids or list(range(cores_per_socket))
    cpus = []
    cpu = 0
    for _thread in range(threads_per_core):
        for socket in range(sockets):
            for core in core_ids:
                cpus.append({"cpu": cpu, "core_id": core, "socket": socket})
                cpu += 1
    return cpus


def _lscpu_fields(text):
    fields = {}
    for line in text.splitlines():
        if ":" in line:
            key, value = line.split(":", 1)
            fields[key.strip()] = value.strip()
    return fields


def test_smt_siblings_share_a_core_index():
    index = slurm_gres.core_index_map(x86_enumeration(2, 4, 2))
    assert index[0] == index[8] == 0
    assert index[4] == index[12] == 4
    assert slurm_gres.cores_of_cpus(parse_cpulist("4-7,12-15"), index) == [4, 5, 6, 7]


def test_core_id_gaps_and_per_socket_restart_do_not_leak_into_indexes():
    # Many Xeons report core_id 0,1,2,3,4,8,9,10,11,12 on each socket.
    gaps = [0, 1, 2, 3, 4, 8, 9, 10, 11, 12]
    index = slurm_gres.core_index_map(x86_enumeration(2, 10, 2, core_ids=gaps))
    assert sorted(set(index.values())) == list(range(20))
    assert index[5] == 5 and index[10] == 10 and index[30] == 10


def test_sockets_interleaved_by_cpu_id():
    # Even CPUs on socket 0, odd CPUs on socket 1: CPU 1 is the first core of the second socket.
    cpus = [{"cpu": n, "core_id": n // 2, "socket": n % 2} for n in range(8)]
    index = slurm_gres.core_index_map(cpus)
    assert [index[n] for n in range(8)] == [0, 4, 1, 5, 2, 6, 3, 7]


def test_read_cpu_cores_from_sysfs_skips_offline_cpus(tmp_path):
    base = tmp_path / "devices" / "system" / "cpu"
    for cpu, core, socket in [(0, 0, 0), (1, 4, 0), (2, 0, 0), (3, 4, 0)]:
        topology = base / ("cpu%d" % cpu) / "topology"
        topology.mkdir(parents=True)
        (topology / "core_id").write_text("%d\n" % core)
        (topology / "physical_package_id").write_text("%d\n" % socket)
    (base / "online").write_text("0-2\n")
    cpus = sysfs_topology.read_cpu_cores(str(tmp_path))
    assert [c["cpu"] for c in cpus] == [0, 1, 2]
    assert slurm_gres.core_index_map(cpus) == {0: 0, 1: 1, 2: 0}


@pytest.mark.parametrize("name, short", [
    ("NVIDIA H100 80GB HBM3", "h100"),
    ("NVIDIA A100-SXM4-40GB", "a100"),
    ("NVIDIA L40S", "l40s"),
    ("NVIDIA H100 PCIe", "h100"),
    ("NVIDIA H100 NVL", "h100"),
    ("NVIDIA RTX 6000 Ada Generation", "rtx6000ada"),
    ("Tesla V100-SXM2-16GB", "v100"),
    ("NVIDIA GeForce RTX 4090", "rtx4090"),
    ("Quadro P2000", "p2000"),
    ("NVIDIA GH200 480GB", "gh200"),
    ("NVIDIA H200", "h200"),
    ("", "gpu"),
])
def test_gpu_type(name, short):
    assert slurm_gres.gpu_type(name) == short


def _gpu(index, cpus, name="NVIDIA H100 80GB HBM3", minor=None, mig="Disabled"):
    return {"index": index, "name": name, "minor_number": index if minor is None else minor,
            "pci_bus_id": "0000:%02x:00.0" % index, "cpus": cpus, "mig_mode": mig}


def test_lines_use_the_minor_number_and_core_indexes():
    index = slurm_gres.core_index_map(x86_enumeration(2, 4, 2))
    lines = slurm_gres.gres_lines([_gpu(0, parse_cpulist("0-3,8-11"), minor=3),
                                   _gpu(1, parse_cpulist("4-7,12-15"))], index)
    assert lines == ["Name=gpu Type=h100 File=/dev/nvidia3 Cores=0-3",
                     "Name=gpu Type=h100 File=/dev/nvidia1 Cores=4-7"]


@pytest.mark.parametrize("gpu, words", [
    (_gpu(0, None), "NUMA-local CPUs are unknown"),
    (dict(_gpu(0, [0]), minor_number=None), "no minor number"),
    (_gpu(0, [99]), "CPUs 99 have no core"),
])
def test_lines_refuse_what_they_cannot_get_right(gpu, words):
    with pytest.raises(slurm_gres.GresError, match=words):
        slurm_gres.gres_lines([gpu], slurm_gres.core_index_map(x86_enumeration(1, 2, 1)))


def test_merge_block_keeps_user_lines_and_replaces_only_the_block():
    user = "# site\nName=mps Count=100\n"
    once = slurm_gres.merge_block(user, ["Name=gpu File=/dev/nvidia0"])
    assert once.startswith(user) and "Name=gpu File=/dev/nvidia0\n" in once
    twice = slurm_gres.merge_block(once + "NodeName=x Name=shard Count=4\n", ["Name=gpu File=/dev/nvidia1"])
    assert "nvidia0" not in twice and "Name=gpu File=/dev/nvidia1" in twice
    assert twice.endswith("NodeName=x Name=shard Count=4\n")
    assert slurm_gres.merge_block(twice, ["Name=gpu File=/dev/nvidia1"]) == twice


def test_merge_block_refuses_a_cut_block():
    with pytest.raises(slurm_gres.GresError, match="fix or remove"):
        slurm_gres.merge_block(slurm_gres.BLOCK_BEGIN + "\nName=gpu\n", [])


def test_unmanaged_gpu_lines_are_found_outside_the_block_only():
    text = "Name=gpu File=/dev/nvidia0 # mine\n" + slurm_gres.managed_block(["Name=gpu File=/dev/nvidia1"])
    assert slurm_gres.unmanaged_gpu_lines(text) == ["Name=gpu File=/dev/nvidia0 # mine"]


def test_parse_gres_gpus_reads_cores_case_insensitively():
    gpus = slurm_gres.parse_gres_gpus("name=gpu type=a100 file=/dev/nvidia0 cores=0-3,8\nName=mps Count=1\n")
    assert gpus == [{"file": "/dev/nvidia0", "type": "a100", "cores": [0, 1, 2, 3, 8]}]


def test_merge_key_values_sets_keys_in_place_and_keeps_the_rest():
    text = "CgroupPlugin=autodetect\nconstraindevices=no # old\nConstrainRAMSpace=yes\nConstrainDevices=no\n"
    merged = slurm_gres.merge_key_values(text, {"ConstrainDevices": "yes", "ConstrainCores": "yes"})
    assert merged == ("CgroupPlugin=autodetect\nConstrainDevices=yes\nConstrainRAMSpace=yes\n"
                      "ConstrainCores=yes\n")
    assert slurm_gres.merge_key_values(merged, {"ConstrainDevices": "yes", "ConstrainCores": "yes"}) == merged


# --- MIG devices ---

# The driver's fixed table, as the emulator writes it (nvidia_caps.py names the sources).
DRIVER_MINORS = slurm_gres.parse_mig_minors(nvidia_caps.mig_minors_text())


def _mig_gpu(index, cpus, devices, minor=None, name="NVIDIA A100-SXM4-40GB"):
    return dict(_gpu(index, cpus, name=name, minor=minor, mig="Enabled"), mig_devices=devices)


def _device(index, profile, gpu_instance, compute_instance=0):
    return {"index": index, "profile": profile, "uuid": None,
            "gpu_instance_id": gpu_instance, "compute_instance_id": compute_instance}


def test_parse_mig_minors_reads_name_and_minor_and_skips_other_lines():
    text = "config 1\nmonitor 2\ngpu0/gi1/access 12\ngpu0/gi1/ci0/access 13\n\ngarbage\n"
    assert slurm_gres.parse_mig_minors(text) == {
        "config": 1, "monitor": 2, "gpu0/gi1/access": 12, "gpu0/gi1/ci0/access": 13}
    assert slurm_gres.parse_mig_minors(None) == {}


def test_the_driver_table_numbers_instances_from_3_in_steps_of_9_and_135_per_gpu():
    assert DRIVER_MINORS["gpu0/gi0/access"] == 3
    assert DRIVER_MINORS["gpu0/gi1/access"] == 12 and DRIVER_MINORS["gpu0/gi1/ci0/access"] == 13
    assert DRIVER_MINORS["gpu1/gi0/access"] == 138
    assert DRIVER_MINORS["gpu31/gi14/ci7/access"] == 3 + 32 * 135 - 1


def test_cap_files_are_named_after_the_gpu_minor_not_its_index():
    assert slurm_gres.mig_cap_files(DRIVER_MINORS, 1, 3, 0) == [
        "/dev/nvidia-caps/nvidia-cap165", "/dev/nvidia-caps/nvidia-cap166"]
    with pytest.raises(slurm_gres.GresError, match="no line 'gpu0/gi1/ci0/access'"):
        slurm_gres.mig_cap_files({"gpu0/gi1/access": 12}, 0, 1, 0)


@pytest.mark.parametrize("profile, wanted", [
    ("3g.20gb", "a100_3g.20gb"), ("1c.3g.20gb", "a100_3g.20gb"), ("1g.10gb+me", "a100_1g.10gb"),
    ("7g.80gb", "a100_7g.80gb"),
])
def test_mig_type_is_the_gpu_type_and_the_gpu_instance_profile(profile, wanted):
    assert slurm_gres.mig_type("a100", profile) == wanted


def test_mig_type_refuses_an_unknown_profile():
    with pytest.raises(slurm_gres.GresError, match="MIG profile None"):
        slurm_gres.mig_type("a100", None)


def test_mig_gpu_gets_one_multiple_files_line_per_device_with_the_parent_cores():
    index = slurm_gres.core_index_map(x86_enumeration(2, 4, 2))
    gpus = [_mig_gpu(0, parse_cpulist("0-3,8-11"), [_device(0, "1c.3g.20gb", 1, 0), _device(1, "1c.3g.20gb", 1, 1),
                                                    _device(2, "2g.10gb", 5)], minor=2),
            _gpu(1, parse_cpulist("4-7,12-15"), name="NVIDIA A100-SXM4-40GB")]
    lines = slurm_gres.gres_lines(gpus, index, mig_minors=DRIVER_MINORS)
    base = 3 + 2 * 135
    assert lines == [
        "Name=gpu Type=a100_3g.20gb MultipleFiles=/dev/nvidia2,/dev/nvidia-caps/nvidia-cap%d,"
        "/dev/nvidia-caps/nvidia-cap%d Cores=0-3" % (base + 9, base + 10),
        "Name=gpu Type=a100_3g.20gb MultipleFiles=/dev/nvidia2,/dev/nvidia-caps/nvidia-cap%d,"
        "/dev/nvidia-caps/nvidia-cap%d Cores=0-3" % (base + 9, base + 11),
        "Name=gpu Type=a100_2g.10gb MultipleFiles=/dev/nvidia2,/dev/nvidia-caps/nvidia-cap%d,"
        "/dev/nvidia-caps/nvidia-cap%d Cores=0-3" % (base + 45, base + 46),
        "Name=gpu Type=a100 File=/dev/nvidia1 Cores=4-7"]
    # The audit reads the MIG lines back by their files.
    parsed = slurm_gres.parse_gres_gpus("\n".join(lines))
    assert parsed[0]["file"].startswith("/dev/nvidia2,") and parsed[0]["cores"] == [0, 1, 2, 3]


def test_mig_gpu_without_devices_gives_no_line_and_a_warning():
    warnings = []
    lines = slurm_gres.gres_lines([_mig_gpu(0, [0], [])], slurm_gres.core_index_map(x86_enumeration(1, 2, 1)),
                                  warnings=warnings)
    assert lines == [] and warnings == ["GPU 0 (0000:00:00.0) has MIG enabled but no MIG devices: "
                                        "gres.conf gets no line for it"]


@pytest.mark.parametrize("device, minors, words", [
    (_device(0, "3g.20gb", 1), {}, "MIG device 0: .*mig-minors has no line 'gpu0/gi1/access'"),
    (_device(0, "3g.20gb", None), DRIVER_MINORS, "no GPU or compute instance id"),
    (_device(0, None, 1), DRIVER_MINORS, "MIG profile None"),
])
def test_mig_lines_refuse_what_they_cannot_get_right(device, minors, words):
    with pytest.raises(slurm_gres.GresError, match=words):
        slurm_gres.gres_lines([_mig_gpu(0, [0], [device])], slurm_gres.core_index_map(x86_enumeration(1, 2, 1)),
                              mig_minors=minors)


def test_facts_join_query_ids_and_list_profiles_on_the_mig_index():
    query = [{"index": 0, "gpu_instance_id": 1, "compute_instance_id": 0},
             {"index": 1, "gpu_instance_id": 2, "compute_instance_id": 0}]
    listed = [{"index": 0, "profile": "3g.20gb", "uuid": "MIG-a"}]
    assert merge_mig_devices(query, listed) == [
        {"index": 0, "profile": "3g.20gb", "uuid": "MIG-a", "gpu_instance_id": 1, "compute_instance_id": 0},
        {"index": 1, "profile": None, "uuid": None, "gpu_instance_id": 2, "compute_instance_id": 0}]
    assert merge_mig_devices([], listed)[0]["gpu_instance_id"] is None


# --- Real captures (shared/fixtures/real), read at test time and never copied. ---

def _affinity(capture):
    matrix = parse_topology_matrix(real_captures.load(capture))
    return dict((label, gpu["cpu_affinity"]) for label, gpu in matrix["gpus"].items())


def test_real_2_socket_8_gpu_h100_with_smt():
    """2 x 52 cores with HT, CPUs 0-51,104-155 and 52-103,156-207 (the capture's CPU Affinity)."""
    affinity = _affinity("h100_8gpu_2socket_52c_ht_nvidia_smi_topo_m.txt")
    index = slurm_gres.core_index_map(x86_enumeration(2, 52, 2))
    gpus = [_gpu(int(label[3:]), cpus) for label, cpus in sorted(affinity.items())]
    lines = slurm_gres.gres_lines(gpus, index)
    assert lines[0] == "Name=gpu Type=h100 File=/dev/nvidia0 Cores=0-51"
    assert lines[7] == "Name=gpu Type=h100 File=/dev/nvidia7 Cores=52-103"
    # The CPU ids would have named cores 104-207, which do not exist on this host.
    assert max(index.values()) == 103


def test_real_2_socket_4_gpu_epyc_without_smt_from_lscpu_and_numactl():
    fields = _lscpu_fields(real_captures.load("asus_esc8000a_e12_lscpu.txt"))
    sockets, cores = int(fields["Socket(s)"]), int(fields["Core(s) per socket"])
    threads = int(fields["Thread(s) per core"])
    index = slurm_gres.core_index_map(x86_enumeration(sockets, cores, threads))
    numactl = real_captures.load("asus_esc8000a_e12_numactl_hardware.txt")
    node_cpus = dict((int(m.group(1)), [int(n) for n in m.group(2).split()])
                     for m in re.finditer(r"^node (\d+) cpus: (.*)$", numactl, re.M))
    affinity = _affinity("asus_esc8000a_e12_4x_rtx6000ada_nvidia_smi_topo_m.txt")
    for label, cpus in affinity.items():
        node = [n for n, members in node_cpus.items() if set(cpus) <= set(members)]
        assert len(node) == 1, label
    lines = slurm_gres.gres_lines([_gpu(int(label[3:]), cpus, name="NVIDIA RTX 6000 Ada Generation")
                                   for label, cpus in sorted(affinity.items())], index)
    # Without SMT every CPU is its own core, so the indexes equal the CPU ids here.
    assert lines == ["Name=gpu Type=rtx6000ada File=/dev/nvidia0 Cores=0-31",
                     "Name=gpu Type=rtx6000ada File=/dev/nvidia1 Cores=0-31",
                     "Name=gpu Type=rtx6000ada File=/dev/nvidia2 Cores=32-63",
                     "Name=gpu Type=rtx6000ada File=/dev/nvidia3 Cores=32-63"]


def test_real_a100_2_socket_without_smt():
    affinity = _affinity("a100_8gpu_2socket_24c_condensed_nvidia_smi_topo_m.txt")
    index = slurm_gres.core_index_map(x86_enumeration(2, 24, 1))
    cores = [slurm_gres.cores_of_cpus(affinity["GPU%d" % n], index) for n in (0, 4)]
    assert cores == [list(range(24)), list(range(24, 48))]


# Written -L lines for the real -q -x captures below, which name no profile: the profiles their
# MIG devices' memory (19968 MiB) gives on each product (NVIDIA MIG User Guide, supported profiles).
def _written_list(profile, count):
    return "GPU 0: NVIDIA A100 (UUID: GPU-0)\n" + "".join(
        "  MIG %s Device %d: (UUID: MIG-%d)\n" % (profile, index, index) for index in range(count))


@pytest.mark.parametrize("capture, profile, minor, gpu_instances, mig_type", [
    ("netdata_a100_sxm4_40gb_mig_enabled_2migdevices_driver510_nvidia_smi_q_x.xml.txt", "3g.20gb", 0, [1, 2],
     "a100_3g.20gb"),
    ("telegraf_a100_sxm4_80gb_x4_mig_enabled_driver535_nvidia_smi_q_x.xml.txt", "2g.20gb", 1, [3, 4, 5, 6],
     "a100_2g.20gb"),
])
def test_real_mig_query_gives_lines_keyed_by_the_gpu_minor(capture, profile, minor, gpu_instances, mig_type):
    raw = parse_query_xml(real_captures.load(capture))["gpus"][0]
    assert raw["mig_mode"] == "Enabled" and raw["minor_number"] == minor
    listed = parse_gpu_list(_written_list(profile, len(raw["mig_devices"])))[0]["mig_devices"]
    gpu = dict(raw, cpus=[0, 1], mig_devices=merge_mig_devices(raw["mig_devices"], listed))
    lines = slurm_gres.gres_lines([gpu], slurm_gres.core_index_map(x86_enumeration(1, 2, 1)),
                                  mig_minors=DRIVER_MINORS)
    caps = [(3 + minor * 135 + 9 * gi, 4 + minor * 135 + 9 * gi) for gi in gpu_instances]
    assert lines == ["Name=gpu Type=%s MultipleFiles=/dev/nvidia%d,/dev/nvidia-caps/nvidia-cap%d,"
                     "/dev/nvidia-caps/nvidia-cap%d Cores=0-1" % ((mig_type, minor) + pair) for pair in caps]


def test_real_mig_lists_without_query_ids_are_refused_not_guessed():
    listed = parse_gpu_list(real_captures.load("h100_80gb_mig_mixed_3g_2g_1g_nvidia_smi_L.txt"))[0]
    gpu = dict(_mig_gpu(0, [0], merge_mig_devices([], listed["mig_devices"]), name=listed["name"]))
    with pytest.raises(slurm_gres.GresError, match="no GPU or compute instance id"):
        slurm_gres.gres_lines([gpu], slurm_gres.core_index_map(x86_enumeration(1, 2, 1)), mig_minors=DRIVER_MINORS)


def test_real_captures_exist():
    assert os.path.isdir(real_captures.real_dir())
