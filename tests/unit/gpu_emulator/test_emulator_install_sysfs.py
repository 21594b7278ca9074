# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The installer, the fake sysfs tree, and what each profile promises."""

from __future__ import annotations

import os
import re
import stat
import subprocess

import pytest

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api, cpulist

# The installed wrappers.
TOOLS = ("nvidia-smi", "nvidia-persistenced", "nvidia-cuda-mps-control", "gpuemu-cuda-app", "gpuemu-gpu-holder", "nvidia-ctk")


def gpuemu(*argv, cwd=None):
    env = dict(os.environ, PYTHONPATH=api.PACKAGE_PARENT)
    return subprocess.run(["python3", "-m", "gpuemu", *argv], env=env, capture_output=True, text=True, check=False, cwd=cwd)


# ---- installer --------------------------------------------------------------------

def test_install_writes_wrappers_state_devices_and_unit(tmp_path):
    root = str(tmp_path / "node")
    done = gpuemu("install", "--profile", "a100_8x_mig", "--root", root)
    assert done.returncode == 0, done.stderr
    for tool in TOOLS:
        path = os.path.join(root, "usr", "bin", tool)
        mode = os.stat(path).st_mode
        assert mode & stat.S_IXUSR and mode & stat.S_IXOTH
        with open(path, encoding="utf-8") as handle:
            assert handle.readline().startswith("#!/")
    assert os.path.isfile(os.path.join(root, "var", "lib", "gpuemu", "state.json"))
    for name in ["nvidiactl"] + ["nvidia%d" % n for n in range(8)]:
        assert os.path.exists(os.path.join(root, "dev", name))
    if os.geteuid() == 0:
        assert stat.S_ISCHR(os.stat(os.path.join(root, "dev", "nvidia3")).st_mode)
        assert os.minor(os.stat(os.path.join(root, "dev", "nvidia3")).st_rdev) == 3
    with open(os.path.join(root, "lib", "systemd", "system", "nvidia-persistenced.service"), encoding="utf-8") as handle:
        unit = handle.read()
    assert "Type=forking" in unit and "PIDFile=/var/run/nvidia-persistenced/nvidia-persistenced.pid" in unit
    assert "ExecStart=/usr/bin/nvidia-persistenced" in unit


def test_installed_wrapper_runs_the_emulator(tmp_path):
    root = str(tmp_path / "node")
    assert gpuemu("install", "--profile", "gh200", "--root", root, "--state", "/etc/gpuemu/state.json").returncode == 0
    wrapper = os.path.join(root, "usr", "bin", "nvidia-smi")
    with open(wrapper, encoding="utf-8") as handle:
        # A non-default --state becomes the wrappers' default (GPUEMU_STATE still wins).
        assert "os.environ.setdefault('GPUEMU_STATE', '/etc/gpuemu/state.json')" in handle.read()
    env = dict(os.environ, GPUEMU_STATE=os.path.join(root, "etc", "gpuemu", "state.json"))
    done = subprocess.run([wrapper, "-L"], capture_output=True, text=True, check=False, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("GPU 0: NVIDIA GH200 480GB (UUID: GPU-")


def test_install_is_idempotent_and_keeps_state(tmp_path):
    root = str(tmp_path / "node")
    assert gpuemu("install", "--profile", "dgx_h100", "--root", root).stdout.count("changed:") == 8 + 1 + 9 + 3 + 5 + 1 + 1 + 4 + 2
    # wrappers (the dmesg shim, nvidia-ctk and nvidia-cdi-hook among them), state, GPU, uvm, modeset and NVSwitch device nodes, mig-minors,
    # persistenced unit, 3 client units and the boot unit, boot wrapper and link
    state_path = os.path.join(root, "var", "lib", "gpuemu", "state.json")
    state = api.read_state(state_path)
    state["gpus"][0]["compute_mode"] = "Exclusive_Process"
    api.write_state(state, state_path)
    again = gpuemu("install", "--profile", "dgx_h100", "--root", root)
    assert again.stdout == "ok: nothing to change\n"
    assert api.read_state(state_path)["gpus"][0]["compute_mode"] == "Exclusive_Process"


def test_install_can_leave_a_tool_out(tmp_path):
    root = str(tmp_path / "node")
    gpuemu("install", "--profile", "l40s_4x", "--root", root)
    done = gpuemu("install", "--profile", "l40s_4x", "--root", root, "--omit", "nvidia-cuda-mps-control")
    assert "changed: %s" % os.path.join(root, "usr", "bin", "nvidia-cuda-mps-control") in done.stdout
    assert not os.path.exists(os.path.join(root, "usr", "bin", "nvidia-cuda-mps-control"))
    assert os.path.exists(os.path.join(root, "usr", "bin", "nvidia-smi"))


def test_install_lays_down_the_cuda_application_and_can_leave_it_out(tmp_path):
    root = str(tmp_path / "node")
    app = os.path.join(root, "usr", "bin", "gpuemu-cuda-app")
    assert gpuemu("install", "--profile", "l40s_4x", "--root", root).returncode == 0
    env = dict(os.environ, GPUEMU_STATE=os.path.join(root, "var", "lib", "gpuemu", "state.json"),
               CUDA_MPS_PIPE_DIRECTORY=str(tmp_path / "pipe"))
    ran = subprocess.run([app], env=env, capture_output=True, text=True, check=False)
    assert ran.returncode == 0 and "CUDA context on GPU 0" in ran.stdout
    done = gpuemu("install", "--profile", "l40s_4x", "--root", root, "--omit", "cuda-app")
    assert done.stdout == "changed: %s\n" % app
    assert not os.path.exists(app)


# ---- sysfs --------------------------------------------------------------------------

def read(*parts):
    with open(os.path.join(*parts), encoding="utf-8") as handle:
        return handle.read().rstrip("\n")


@pytest.fixture(params=api.PROFILES)
def tree(request, tmp_path):
    out = str(tmp_path / "sys")
    done = gpuemu("sysfs", "--profile", request.param, "--out", out)
    assert done.returncode == 0, done.stderr
    return request.param, out


def _topo(profile, tmp_path):
    path = str(tmp_path / "topo-state.json")
    api.write_state(api.new_state(profile), path)
    rc, out, _err = api.run("nvidia-smi", ["topo", "-m"], path)
    assert rc == 0
    return out


def test_sysfs_agrees_with_topo_and_the_profile(tree, tmp_path):
    profile, out = tree
    state = api.new_state(profile)
    topo = _topo(profile, tmp_path)
    devices = os.path.join(out, "bus", "pci", "devices")
    nr_cpus = cpulist.parse(state["cpus_possible"])[-1] + 1
    rows = {line.split("\t")[0]: line.split("\t") for line in topo.splitlines() if line.startswith("GPU")}
    for gpu in state["gpus"]:
        bdf = gpu["pci_bus_id"]
        base = os.path.join(devices, bdf)
        assert read(base, "vendor") == "0x10de"
        assert read(base, "class") in ("0x030200", "0x030000")
        assert int(read(base, "numa_node")) == gpu["numa_node"]
        cpus = read(base, "local_cpulist")
        assert read(base, "local_cpus") == cpulist.format_mask(cpulist.parse(cpus), nr_cpus)
        row = rows["GPU%d" % gpu["index"]]
        assert row[-4] == cpus  # CPU Affinity
        assert row[-3] == (str(gpu["numa_node"]) if gpu["numa_node"] >= 0 else "N/A")
    legend = re.findall(r"^  NIC(\d+): (\S+)$", topo, re.M)
    assert [name for _number, name in legend] == [nic["ibdev"] for nic in state["nics"]]
    for nic in state["nics"]:
        ib_dir = os.path.join(out, "class", "infiniband", nic["ibdev"])
        link = os.readlink(os.path.join(ib_dir, "device"))
        assert not os.path.isabs(link)
        assert link == os.path.join("..", "..", "..", "bus", "pci", "devices", nic["pci_bus_id"])
        target = os.path.realpath(os.path.join(ib_dir, "device"))
        assert target == os.path.realpath(os.path.join(devices, nic["pci_bus_id"]))
        assert read(target, "vendor") == "0x15b3"
        assert read(target, "class") == ("0x020700" if nic["link_layer"] == "InfiniBand" else "0x020000")
        assert os.listdir(os.path.join(target, "net")) == [nic["netdev"]]
        assert os.listdir(os.path.join(target, "infiniband")) == [nic["ibdev"]]
        assert read(ib_dir, "ports", "1", "link_layer") == nic["link_layer"]


def test_sysfs_numa_nodes(tree):
    profile, out = tree
    state = api.new_state(profile)
    base = os.path.join(out, "devices", "system", "node")
    ids = [n["id"] for n in state["numa_nodes"]]
    assert cpulist.parse(read(base, "online")) == ids
    assert cpulist.parse(read(base, "has_cpu")) == [n["id"] for n in state["numa_nodes"] if n["cpus"]]
    for position, node in enumerate(state["numa_nodes"]):
        directory = os.path.join(base, "node%d" % node["id"])
        assert read(directory, "cpulist") == node["cpus"]
        meminfo = read(directory, "meminfo")
        total = re.search(r"^Node %d MemTotal:\s+(\d+) kB$" % node["id"], meminfo, re.M)
        assert int(total.group(1)) == node["memory_mib"] * 1024
        assert read(directory, "distance").split() == [str(d) for d in state["numa_distances"][position]]


def test_cpu_masks():
    assert cpulist.format_mask(cpulist.parse("0-3"), 24) == "00000f"
    assert cpulist.format_mask(cpulist.parse("0-71"), 72) == "ff,ffffffff,ffffffff"
    assert cpulist.format_mask(cpulist.parse("0-55,112-167"), 224) == (
        "00000000,000000ff,ffffffff,ffff0000,00000000,00ffffff,ffffffff")
    assert cpulist.format_list([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8"


# ---- the profiles' promises -----------------------------------------------------------

def test_dgx_h100_profile(tmp_path):
    state = api.new_state("dgx_h100")
    assert [g["model"] for g in state["gpus"]] == ["NVIDIA H100 80GB HBM3"] * 8
    assert [g["numa_node"] for g in state["gpus"]] == [0] * 4 + [1] * 4
    assert [n["cpus"] for n in state["numa_nodes"]] == ["0-55,112-167", "56-111,168-223"]
    # An HGX H100 board: its NVLinks run through NVSwitches.
    assert state["nvlink"] == {"links": 18, "nvswitch": True, "nvswitches": 4}
    compute = [n for n in state["nics"] if n["link_layer"] == "InfiniBand"]
    assert len(compute) == 8 and len(state["nics"]) == 9
    rows = [line.split("\t") for line in _topo("dgx_h100", tmp_path).splitlines() if line.startswith("GPU")]
    for index, row in enumerate(rows):
        assert row[1 + 8 + index] in ("PIX", "PXB")  # each GPU's own NIC


def test_profiles_shapes():
    a100 = api.new_state("a100_8x_mig")
    assert all(g["mig"] == {"current": "Disabled", "pending": "Disabled"} for g in a100["gpus"])
    assert len(a100["gpus"]) == 8 and len(a100["numa_nodes"]) == 2
    l40s = api.new_state("l40s_4x")
    assert len(l40s["gpus"]) == 4 and l40s["nvlink"] is None and all(g["mig"] is None for g in l40s["gpus"])
    assert len(l40s["numa_nodes"]) == 2
    workstation = api.new_state("workstation_2gpu")
    assert len(workstation["gpus"]) == 2 and len(workstation["numa_nodes"]) == 1
    gh200 = api.new_state("gh200")
    assert gh200["architecture"] == "aarch64" and len(gh200["gpus"]) == 1
    assert gh200["numa_nodes"][0]["cpus"] == "0-71"
    assert [n["id"] for n in gh200["numa_nodes"] if not n["cpus"]] == list(range(1, 9))
    assert gh200["gpus"][0]["gpu_numa_id"] == 1
    domains = {g["pci_bus_id"].split(":")[0] for s in (a100, l40s, workstation, gh200) for g in s["gpus"] + s["nics"]}
    assert domains - {"0000"}


def test_gh200_topo_reports_the_gpu_memory_node(tmp_path):
    row = [line for line in _topo("gh200", tmp_path).splitlines() if line.startswith("GPU0")][0].split("\t")
    assert row[-4:] == ["0-71", "0", "", "1"]
