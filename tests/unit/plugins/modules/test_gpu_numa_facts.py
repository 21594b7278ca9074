# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_numa_facts against a scripted nvidia-smi and a fake sysfs tree.

The scripted tool is a real executable, so the module's own command path
(argv list, C locale, coreutils timeout) is exercised, and it logs each call
so the tests can hold the module to one call per kind of data.
"""

from __future__ import annotations

import json
import os
import shutil
import stat

import pytest

from ansible_collections.gpuops.hardening.plugins.modules.gpu_numa_facts import main as gpu_numa_facts_main
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import sysfs as emulator_sysfs
from ansible_collections.gpuops.hardening.tests.unit.plugins.module_utils import fake_sysfs
from ansible_collections.gpuops.hardening.plugins.plugin_utils import audit_hardware_checks
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.emulated_host import emulated_host
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "module_utils", "fixtures", "nvidia_smi")

XML_GPU = """    <gpu id="{bus}">
        <product_name>NVIDIA H100 80GB HBM3</product_name>
        <persistence_mode>Enabled</persistence_mode>
        <mig_mode><current_mig>{mig}</current_mig><pending_mig>{mig}</pending_mig></mig_mode>
        <uuid>GPU-0000000{index}-aaaa-bbbb-cccc-dddddddddddd</uuid>
        <minor_number>{index}</minor_number>
        <pci><pci_bus_id>{bus}</pci_bus_id></pci>
        <fb_memory_usage><total>81559 MiB</total></fb_memory_usage>
        <compute_mode>Default</compute_mode>
    </gpu>
"""


def _xml(bus_ids, mig="Disabled"):
    gpus = "".join(XML_GPU.format(bus=bus, index=index, mig=mig) for index, bus in enumerate(bus_ids))
    return ('<?xml version="1.0" ?>\n<nvidia_smi_log>\n    <driver_version>550.90.07</driver_version>\n'
            "    <cuda_version>12.4</cuda_version>\n" + gpus + "</nvidia_smi_log>\n")


BUS4 = ["00000000:18:00.0", "00000000:2A:00.0", "00000000:9A:00.0", "00000000:AB:00.0"]
NODES = {0: {"cpus": "0-15,64-79", "memory_kib": 100, "distances": [10, 21]},
         2: {"cpus": "32-47,96-111", "memory_kib": 100, "distances": [21, 10]}}
PCI = {
    "0000:18:00.0": {"numa_node": 0, "cpulist": "0-15,64-79"},
    "0000:2a:00.0": {"numa_node": 0, "cpulist": "0-15,64-79"},
    "0000:9a:00.0": {"numa_node": 2, "cpulist": "32-47,96-111"},
    "0000:ab:00.0": {"numa_node": 2, "cpulist": "32-47,96-111"},
    "0000:1a:00.0": {"numa_node": 0, "cpulist": "0-15,64-79", "net": ["ibp26s0"]},
    "0000:9c:00.0": {"numa_node": 2, "cpulist": "32-47,96-111", "net": ["ibp156s0"]},
    "0000:2c:00.0": {"numa_node": 0, "cpulist": "0-15,64-79", "net": ["bond0"]},
}
RDMA = {"mlx5_0": "0000:1a:00.0", "mlx5_1": "0000:9c:00.0", "mlx5_bond_0": "0000:2c:00.0"}


class Host:
    """A scripted nvidia-smi plus sysfs and procfs folders."""

    def __init__(self, tmp_path):
        self.dir = tmp_path
        self.tool = tmp_path / "nvidia-smi"
        self.calls = tmp_path / "calls.log"
        self.sysfs = fake_sysfs.build(tmp_path / "sys", NODES, PCI, RDMA)
        self.proc = tmp_path / "proc"
        (self.proc / "sys" / "kernel").mkdir(parents=True)
        self.numa_balancing("0")
        self.answer("-q -x", _xml(BUS4))
        with open(os.path.join(FIXTURES, "topo_4gpu_3nic_tabs.txt"), encoding="utf-8") as handle:
            self.answer("topo -m", handle.read())
        with open(os.path.join(FIXTURES, "gpu_list_mixed.txt"), encoding="utf-8") as handle:
            self.answer("-L", handle.read())
        # The matrix links the GPUs by NVLink, so the NVLinks' state is read too.
        self.answer("nvlink -s", "".join("GPU %d: NVIDIA H100 80GB HBM3 (UUID: GPU-%d)\n" % (gpu, gpu) + "".join(
            "\t Link %d: 26.562 GB/s\n" % link for link in range(18)) for gpu in range(4)))
        self.script()

    def answer(self, args, stdout, rc=0):
        name = args.replace(" ", "_")
        (self.dir / ("out" + name)).write_text(stdout)
        (self.dir / ("rc" + name)).write_text(str(rc))

    def script(self, body=None):
        self.tool.write_text(body or (
            "#!/bin/sh\n"
            'echo "$*" >> "%s"\n'
            'key=$(echo "$*" | tr " " "_")\n'
            'cat "%s/out$key"\n'
            'exit $(cat "%s/rc$key")\n' % (self.calls, self.dir, self.dir)))
        self.tool.chmod(self.tool.stat().st_mode | stat.S_IXUSR)

    def numa_balancing(self, value):
        (self.proc / "sys" / "kernel" / "numa_balancing").write_text(value + "\n")

    def args(self, **extra):
        # The host tree: sys/ and proc/ below one root.
        args = {"nvidia_smi_path": str(self.tool), "root": str(self.dir)}
        args.update(extra)
        return args

    def called(self):
        return self.calls.read_text().splitlines() if self.calls.exists() else []


@pytest.fixture
def host(tmp_path):
    return Host(tmp_path)


@pytest.mark.parametrize("check_mode", [False, True])
def test_facts(host, check_mode):
    result = run_module(gpu_numa_facts_main, host.args(), check_mode=check_mode)
    assert not result["failed"], result
    assert result["changed"] is False
    topology = result["ansible_facts"]["gpu_topology"]
    assert set(topology) >= {"gpus", "nics", "numa_nodes", "links", "recommendations", "warnings"}
    assert [gpu["index"] for gpu in topology["gpus"]] == [0, 1, 2, 3]
    assert topology["gpus"][2]["pci_bus_id"] == "0000:9a:00.0"
    assert topology["gpus"][2]["nearest_nics"] == ["mlx5_1"]
    assert topology["recommendations"][3]["numactl"] == "numactl --cpunodebind=2 --membind=2"
    assert topology["warnings"] == [] and result["warnings"] == []
    # One call per kind of data, whatever the number of GPUs; no -L without MIG. The first two run at once;
    # the matrix shows NVLinks, so their state is read after it.
    assert sorted(host.called()[:2]) == ["-q -x", "topo -m"] and host.called()[2:] == ["nvlink -s"]
    assert [gpu["nvlink"] for gpu in result["ansible_facts"]["gpu_health"]] == [
        {"active": list(range(18)), "inactive": []}] * 4


def test_mig_adds_one_list_call(host):
    host.answer("-q -x", _xml(BUS4, mig="Enabled"))
    result = run_module(gpu_numa_facts_main, host.args())
    topology = result["ansible_facts"]["gpu_topology"]
    assert sorted(host.called()[:2]) == ["-q -x", "topo -m"] and host.called()[2:] == ["nvlink -s", "-L"]
    assert topology["gpus"][0]["mig_devices"][0]["profile"] == "3g.40gb"
    assert topology["gpus"][0]["mig_mode"] == "Enabled"


def test_warnings_are_raised_and_returned(host):
    host.numa_balancing("1")
    result = run_module(gpu_numa_facts_main, host.args())
    topology = result["ansible_facts"]["gpu_topology"]
    assert topology["numa_balancing"] is True
    assert any("numa_balancing is 1" in warning for warning in result["warnings"])
    assert result["warnings"] == topology["warnings"]


def test_missing_tool_fails_clearly(host, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    args = host.args()
    del args["nvidia_smi_path"]
    result = run_module(gpu_numa_facts_main, args)
    assert result["failed"]
    assert "nvidia-smi was not found" in result["msg"] and "require_gpu: false" in result["msg"]


def test_missing_tool_allowed(host, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    args = host.args(require_gpu=False)
    del args["nvidia_smi_path"]
    result = run_module(gpu_numa_facts_main, args)
    assert not result["failed"], result
    topology = result["ansible_facts"]["gpu_topology"]
    assert topology["gpus"] == [] and topology["recommendations"] == []
    assert len(topology["numa_nodes"]) == 2 and len(topology["nics"]) == 3
    assert any("nvidia-smi was not found" in warning for warning in result["warnings"])


def test_explicit_path_missing(host):
    result = run_module(gpu_numa_facts_main, host.args(nvidia_smi_path=str(host.dir / "nope")))
    assert result["failed"] and "missing or not executable" in result["msg"]


def test_driver_failure(host):
    host.answer("-q -x", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", rc=9)
    result = run_module(gpu_numa_facts_main, host.args())
    assert result["failed"]
    assert "exit code 9" in result["msg"] and "couldn't communicate" in result["msg"]
    relaxed = run_module(gpu_numa_facts_main, host.args(require_gpu=False))
    assert not relaxed["failed"] and relaxed["ansible_facts"]["gpu_topology"]["gpus"] == []


def test_no_gpus_reported(host):
    host.answer("-q -x", _xml([]))
    result = run_module(gpu_numa_facts_main, host.args())
    assert result["failed"] and "no GPUs" in result["msg"]


def test_topology_failure_is_a_warning(host):
    host.answer("topo -m", "topo is not supported here\n", rc=3)
    result = run_module(gpu_numa_facts_main, host.args())
    assert not result["failed"], result
    topology = result["ansible_facts"]["gpu_topology"]
    assert topology["links"]["matrix"] == {}
    assert topology["gpus"][0]["nearest_nics"] == ["mlx5_0", "mlx5_bond_0"]
    assert any("topo -m failed" in warning for warning in result["warnings"])


def test_hung_topology_keeps_the_gpu_data(host):
    host.script(
        "#!/bin/sh\n"
        'case "$*" in "topo -m") exec sleep 30 ;; esac\n'
        'key=$(echo "$*" | tr " " "_")\n'
        'cat "%s/out$key"\n' % host.dir)
    result = run_module(gpu_numa_facts_main, host.args(timeout=1))
    assert not result["failed"], result
    topology = result["ansible_facts"]["gpu_topology"]
    assert [gpu["pci_bus_id"] for gpu in topology["gpus"]] == ["0000:18:00.0", "0000:2a:00.0", "0000:9a:00.0", "0000:ab:00.0"]
    assert topology["links"]["matrix"] == {}
    assert topology["recommendations"][3]["numactl"] == "numactl --cpunodebind=2 --membind=2"
    assert any("nvidia-smi topo -m did not finish within 1 seconds; links and nearest NICs come from sysfs alone" in w
               for w in result["warnings"])


def test_cuda_visible_devices_is_the_uuid(host):
    result = run_module(gpu_numa_facts_main, host.args())
    plans = result["ansible_facts"]["gpu_topology"]["recommendations"]
    assert [plan["cuda_visible_devices"] for plan in plans] == [
        "GPU-0000000%d-aaaa-bbbb-cccc-dddddddddddd" % index for index in range(4)]
    assert [plan["nvidia_smi_index"] for plan in plans] == [0, 1, 2, 3]


def test_hung_tool_times_out(host):
    host.script("#!/bin/sh\nsleep 30\n")
    result = run_module(gpu_numa_facts_main, host.args(timeout=1, timeout_variable="numa_binding_nvidia_smi_timeout"))
    # The message names what to raise: the operator sets the role variable, not the module option.
    assert result["failed"] and "did not finish within 1 seconds (the module's timeout option, set by the role " \
        "variable numa_binding_nvidia_smi_timeout)" in result["msg"], result["msg"]


def test_hung_tool_without_a_variable_names_the_option(host):
    host.script("#!/bin/sh\nsleep 30\n")
    result = run_module(gpu_numa_facts_main, host.args(timeout=1))
    assert result["failed"] and result["msg"].endswith("did not finish within 1 seconds (the module's timeout option)")


# ------------------------------------------------------------------ against the GPU emulator

EMULATOR_PROFILES = sorted(api.PROFILES)


@pytest.mark.parametrize("profile", EMULATOR_PROFILES)
def test_facts_match_the_emulated_profile(tmp_path, profile):
    args, state, _path = emulated_host(tmp_path, profile)
    result = run_module(gpu_numa_facts_main, args)
    assert not result["failed"], result
    topology = result["ansible_facts"]["gpu_topology"]
    nodes = dict((node["id"], node["cpus"]) for node in state["numa_nodes"])
    one_cpu_node = [node_id for node_id, cpus in nodes.items() if cpus]

    assert [gpu["uuid"] for gpu in topology["gpus"]] == [gpu["uuid"] for gpu in state["gpus"]]
    for gpu, want in zip(topology["gpus"], state["gpus"]):
        assert gpu["pci_bus_id"] == want["pci_bus_id"]
        if want["numa_node"] >= 0:
            assert gpu["numa_node"] == want["numa_node"]
            assert gpu["numa_affinity"] == [want["numa_node"]]
            assert gpu["local_cpulist"] == nodes[want["numa_node"]]
        else:
            assert gpu["numa_node"] is None
            assert gpu["numa_affinity"] == (one_cpu_node if len(one_cpu_node) == 1 else None)
        assert gpu["gpu_memory_numa_node"] == want.get("gpu_numa_id")
        assert gpu["driver_version"] == state["driver_version"]

    assert [(nic["name"], nic["netdevs"], nic["pci_bus_id"]) for nic in topology["nics"]] == \
        [(nic["ibdev"], [nic["netdev"]], nic["pci_bus_id"]) for nic in state["nics"]]
    assert [nic["numa_node"] for nic in topology["nics"]] == \
        [nic["numa_node"] if nic["numa_node"] >= 0 else None for nic in state["nics"]]
    assert [(node["id"], node["cpulist"]) for node in topology["numa_nodes"]] == \
        [(node["id"], node["cpus"]) for node in state["numa_nodes"]]
    for plan, gpu in zip(topology["recommendations"], topology["gpus"]):
        if gpu["numa_affinity"]:
            node = ",".join(str(n) for n in gpu["numa_affinity"])
            assert plan["numactl"] == "numactl --cpunodebind=%s --membind=%s" % (node, node)


def test_emulated_dgx_h100_nearest_nics_and_binding(tmp_path):
    args, _state, _path = emulated_host(tmp_path, "dgx_h100")
    topology = run_module(gpu_numa_facts_main, args)["ansible_facts"]["gpu_topology"]
    # One compute NIC behind each GPU's PCIe switch; the storage NIC is nobody's nearest.
    assert [gpu["nearest_nics"] for gpu in topology["gpus"]] == [["mlx5_%d" % n] for n in range(8)]
    assert [nic["nearest_gpus"] for nic in topology["nics"]] == [[n] for n in range(8)] + [[]]
    assert topology["recommendations"][5]["numactl"] == "numactl --cpunodebind=1 --membind=1"
    assert topology["recommendations"][5]["taskset_cpus"] == "56-111,168-223"
    assert topology["numa_nodes"][1]["gpus"] == [4, 5, 6, 7]
    assert topology["warnings"] == []


def test_emulated_gh200_gpu_memory_node(tmp_path):
    args, _state, _path = emulated_host(tmp_path, "gh200")
    topology = run_module(gpu_numa_facts_main, args)["ansible_facts"]["gpu_topology"]
    (gpu,) = topology["gpus"]
    assert gpu["pci_bus_id"] == "0009:01:00.0" and gpu["pci_bus_id_nvidia_smi"] == "00000009:01:00.0"
    assert gpu["numa_node"] == 0 and gpu["gpu_memory_numa_node"] == 1
    assert topology["recommendations"][0]["numactl"] == "numactl --cpunodebind=0 --membind=0"
    cpuless = [node for node in topology["numa_nodes"] if not node["has_cpu"]]
    assert [node["id"] for node in cpuless] == list(range(1, 9))
    assert cpuless[0]["memory_total_kib"] > 0


def test_emulated_workstation_without_numa_nodes(tmp_path):
    args, _state, _path = emulated_host(tmp_path, "workstation_2gpu")
    result = run_module(gpu_numa_facts_main, args)
    topology = result["ansible_facts"]["gpu_topology"]
    assert [gpu["numa_node"] for gpu in topology["gpus"]] == [None, None]
    assert [gpu["numa_affinity"] for gpu in topology["gpus"]] == [[0], [0]]
    assert sum("numa_node is -1" in warning for warning in result["warnings"]) == 4  # 2 GPUs, 2 NICs


def test_emulated_mig_adds_device_uuids(tmp_path):
    args, _state, state_path = emulated_host(tmp_path, "a100_8x_mig")
    assert api.run("nvidia-smi", ["-i", "0", "-mig", "1"], state_path)[0] == 0
    api.reboot(state_path)
    assert api.run("nvidia-smi", ["mig", "-i", "0", "-cgi", "9,9", "-C"], state_path)[0] == 0
    topology = run_module(gpu_numa_facts_main, args)["ansible_facts"]["gpu_topology"]
    devices = topology["gpus"][0]["mig_devices"]
    assert [device["profile"] for device in devices] == ["3g.40gb", "3g.40gb"]
    assert all(device["uuid"].startswith("MIG-") for device in devices)


def test_emulated_missing_tool(tmp_path, monkeypatch):
    args, _state, _path = emulated_host(tmp_path, "l40s_4x")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    del args["nvidia_smi_path"]
    relaxed = run_module(gpu_numa_facts_main, dict(args, require_gpu=False))
    assert relaxed["ansible_facts"]["gpu_topology"]["gpus"] == []
    assert [nic["name"] for nic in relaxed["ansible_facts"]["gpu_topology"]["nics"]] == ["mlx5_0", "mlx5_1"]
    assert run_module(gpu_numa_facts_main, args)["failed"]


FACT = "/etc/ansible/facts.d/gpu_topology.fact"


def test_fact_file_is_written_once(host):
    fact = host.dir / FACT.lstrip("/")
    result = run_module(gpu_numa_facts_main, host.args(fact_path=FACT), diff=True)
    assert not result["failed"], result
    assert result["changed"] is True and result["fact_file"] == str(fact)
    assert result["diff"]["before_header"].endswith("(absent)")
    assert json.loads(fact.read_text()) == result["ansible_facts"]["gpu_topology"]
    assert stat.S_IMODE(fact.stat().st_mode) == 0o644
    assert stat.S_IMODE(fact.parent.stat().st_mode) == 0o755
    # What the role's copy task wrote before: to_nice_json(indent=2) and a newline.
    assert fact.read_text().startswith('{\n  "cuda_version": "12.4",\n')
    assert fact.read_text().endswith("}\n")

    again = run_module(gpu_numa_facts_main, host.args(fact_path=FACT), diff=True)
    assert again["changed"] is False and "diff" not in again
    assert [name for name in os.listdir(fact.parent) if name != "gpu_topology.fact"] == []


def test_fact_file_follows_the_topology(host):
    fact = host.dir / FACT.lstrip("/")
    run_module(gpu_numa_facts_main, host.args(fact_path=FACT))
    host.answer("-q -x", _xml(BUS4[:2]))
    before = fact.read_text()

    checked = run_module(gpu_numa_facts_main, host.args(fact_path=FACT), check_mode=True, diff=True)
    assert checked["changed"] is True and checked["diff"]["before"] == before
    assert fact.read_text() == before

    changed = run_module(gpu_numa_facts_main, host.args(fact_path=FACT))
    assert changed["changed"] is True
    assert [gpu["index"] for gpu in json.loads(fact.read_text())["gpus"]] == [0, 1]


def test_fact_file_mode_is_restored(host):
    fact = host.dir / FACT.lstrip("/")
    run_module(gpu_numa_facts_main, host.args(fact_path=FACT))
    fact.chmod(0o600)
    result = run_module(gpu_numa_facts_main, host.args(fact_path=FACT))
    assert result["changed"] is True
    assert stat.S_IMODE(fact.stat().st_mode) == 0o644


def test_no_fact_path_writes_nothing(host):
    result = run_module(gpu_numa_facts_main, host.args())
    assert "fact_file" not in result
    assert not (host.dir / "etc").exists()


def test_reports_where_numactl_is(host, monkeypatch, tmp_path):
    """The numa_binding role calls the package manager only when this is None."""
    tools = tmp_path / "tools"
    tools.mkdir()
    # Only what the scripted nvidia-smi and the module's own command path need, so the host's numactl is out of sight.
    for name in ("sh", "cat", "tr", "timeout", "env"):
        found = shutil.which(name)
        if found:
            (tools / name).symlink_to(found)
    monkeypatch.setenv("PATH", str(tools))
    result = run_module(gpu_numa_facts_main, host.args())
    assert not result["failed"], result
    assert result["numactl_path"] is None
    numactl = tools / "numactl"
    numactl.write_text("#!/bin/sh\n", encoding="utf-8")
    numactl.chmod(0o755)
    assert run_module(gpu_numa_facts_main, host.args())["numactl_path"] == str(numactl)


@pytest.mark.parametrize("profile", EMULATOR_PROFILES)
def test_the_health_comes_from_the_same_read_and_a_healthy_emulated_node_is_ready(tmp_path, profile):
    args, state, _path = emulated_host(tmp_path, profile)
    result = run_module(gpu_numa_facts_main, args)
    health = result["ansible_facts"]["gpu_health"]
    assert [gpu["uuid"] for gpu in health] == [gpu["uuid"] for gpu in state["gpus"]]
    for gpu in health:
        assert gpu["pcie"]["width_max"] == 16 and gpu["pcie"]["gen_max"] in (3, 4, 5)
    kernel_log = result["ansible_facts"]["gpu_kernel_log"]
    assert kernel_log == {"read": True, "problem": None, "unlisted": []}
    assert [gpu["xid"] for gpu in health] == [[]] * len(health)
    gpudirect = result["ansible_facts"]["gpu_gpudirect"]
    assert gpudirect["rdma_devices"] == [nic["ibdev"] for nic in state["nics"]]
    findings = audit_hardware_checks.assess(health, kernel_log=kernel_log, gpudirect=gpudirect)
    assert audit_hardware_checks.readiness(findings) == {"verdict": "ready", "reasons": []}
    verdicts = set((item["check"]["id"].split(".")[-1], item["check"]["verdict"]) for item in findings
                   if item["check"]["id"].endswith((".iommu", ".acs", ".nvidia_peermem", ".gpudirect")))
    assert verdicts == ({("iommu", "PASS"), ("acs", "PASS"), ("nvidia_peermem", "PASS")} if state["nics"]
                        else {("gpudirect", "SKIP")})


@pytest.mark.parametrize("faults, check_id, actual", [
    ({"iommu_type": {"2": "DMA-FQ"}}, "hardware.gpu2.iommu", "GPU 2 (0000:3a:00.0): DMA-FQ, mlx5_2 (0000:3c:00.0): identity"),
    ({"acs_redirect": ["5"]}, "hardware.gpu5.acs", "(ReqRedir+CmpltRedir)"),
    ({"peermem": "missing"}, "hardware.nvidia_peermem", "not loaded"),
])
def test_each_gpudirect_fault_on_an_emulated_dgx_h100_degrades_the_node_naming_its_check(
        tmp_path, faults, check_id, actual):
    args, _state, _path = emulated_host(tmp_path, "dgx_h100")
    emulator_sysfs.set_faults("dgx_h100", str(tmp_path / "sys"), faults)
    facts = run_module(gpu_numa_facts_main, args)["ansible_facts"]
    findings = audit_hardware_checks.assess(facts["gpu_health"], gpudirect=facts["gpu_gpudirect"])
    verdict = audit_hardware_checks.readiness(findings)
    assert verdict["verdict"] == "degraded" and len(verdict["reasons"]) == 1, verdict
    assert verdict["reasons"][0].startswith(check_id + ": ")
    found = next(item["check"] for item in findings if item["check"]["id"] == check_id)
    assert found["verdict"] == "WARN" and found["actual"].endswith(actual), found
    # gpu_gpudirect, as gpu_health, stays out of the fact file.
    assert "gpu_gpudirect" not in json.dumps(facts["gpu_topology"])


def test_an_nvlink_down_on_an_emulated_dgx_h100_is_read_and_degrades_the_node(tmp_path):
    args, state, state_path = emulated_host(tmp_path, "dgx_h100")
    state.setdefault("faults", {})["nvlink_down"] = {"3": [4, 9]}
    api.write_state(state, state_path)
    health = run_module(gpu_numa_facts_main, args)["ansible_facts"]["gpu_health"]
    assert health[3]["nvlink"] == {"active": [link for link in range(18) if link not in (4, 9)], "inactive": [4, 9]}
    assert health[2]["nvlink"] == {"active": list(range(18)), "inactive": []}
    verdict = audit_hardware_checks.readiness(audit_hardware_checks.assess(health))
    assert verdict["verdict"] == "degraded" and verdict["reasons"][0].startswith("hardware.gpu3.nvlink: NVLinks down")


def test_a_matrix_without_nvlinks_reads_no_nvlink_state(host):
    host.answer("topo -m", "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tSYS\t0-15\t0\nGPU1\tSYS\t X \t0-15\t0\n")
    result = run_module(gpu_numa_facts_main, host.args())
    assert "nvlink -s" not in host.called()
    assert {gpu["nvlink"] for gpu in result["ansible_facts"]["gpu_health"]} == {None}


def test_a_failed_nvlink_read_is_a_note_and_the_rest_stands(host):
    host.answer("nvlink -s", "", rc=3)
    result = run_module(gpu_numa_facts_main, host.args())
    assert not result["failed"], result
    assert {gpu["nvlink"] for gpu in result["ansible_facts"]["gpu_health"]} == {None}
    assert any(warning.startswith("nvidia-smi nvlink -s failed") for warning in result["warnings"])


def _faulted_facts(tmp_path, **faults):
    args, state, state_path = emulated_host(tmp_path, "dgx_h100")
    state.setdefault("faults", {}).update(faults)
    api.write_state(state, state_path)
    result = run_module(gpu_numa_facts_main, args)
    assert not result["failed"], result
    return result["ansible_facts"]


def test_an_xid_79_in_the_kernel_log_reaches_its_gpu_and_asks_for_a_reboot(tmp_path):
    facts = _faulted_facts(tmp_path, xid=[{"gpu": 2, "xid": 79, "message": "GPU has fallen off the bus.",
                                           "time": 5107.644336}])
    health, kernel_log = facts["gpu_health"], facts["gpu_kernel_log"]
    assert health[2]["xid"] == [{"xid": 79, "count": 1, "first_seconds": 5107.644336, "last_seconds": 5107.644336,
                                 "message": "GPU has fallen off the bus.", "pid": None, "name": None}]
    assert [gpu["xid"] for index, gpu in enumerate(health) if index != 2] == [[]] * 7
    verdict = audit_hardware_checks.readiness(audit_hardware_checks.assess(health, kernel_log=kernel_log))
    assert verdict["verdict"] == "reboot" and verdict["reasons"][0].startswith("hardware.gpu2.xid: Xid 79: ")


def test_an_unreadable_kernel_log_is_said_so_and_no_gpu_reads_as_without_xid(tmp_path):
    facts = _faulted_facts(tmp_path, kernel_log="restricted",
                           xid=[{"gpu": 0, "xid": 48, "message": "DBE", "time": 1.0}])
    assert facts["gpu_kernel_log"]["read"] is False
    assert facts["gpu_kernel_log"]["problem"].startswith(
        "dmesg failed with exit code 1: dmesg: read kernel buffer failed: Operation not permitted")
    assert {gpu["xid"] is None for gpu in facts["gpu_health"]} == {True}
    findings = audit_hardware_checks.assess(facts["gpu_health"], kernel_log=facts["gpu_kernel_log"])
    assert {item["check"]["verdict"] for item in findings if item["check"]["id"].endswith(".xid")} == {"SKIP"}


def test_xids_of_a_gpu_nvidia_smi_no_longer_lists_are_kept_for_the_node(host):
    """A scripted dmesg: the GPU at 0000:2b:00 fell off the bus and left nvidia-smi's list."""
    dmesg = host.dir / "dmesg"
    dmesg.write_text("#!/bin/sh\ncat <<'EOF'\n"
                     "[ 5107.644336] NVRM: GPU at PCI:0000:2b:00: GPU-5e0b4bd0-8d4c-4bb1-9a0e-6c3a2f1e7d55\n"
                     "[ 5107.644336] NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.\n"
                     "[ 5200.000000] NVRM: Xid (PCI:0000:18:00): 13, pid=7, name=python3, Graphics Exception\n"
                     "EOF\n")
    dmesg.chmod(0o755)
    result = run_module(gpu_numa_facts_main, host.args(dmesg_path=str(dmesg)))
    assert not result["failed"], result
    facts = result["ansible_facts"]
    assert [[entry["xid"] for entry in gpu["xid"]] for gpu in facts["gpu_health"]] == [[13], [], [], []]
    assert facts["gpu_kernel_log"]["unlisted"] == [{
        "pci_bus_id": "0000:2b:00.0", "uuid": "GPU-5e0b4bd0-8d4c-4bb1-9a0e-6c3a2f1e7d55",
        "xid": [{"xid": 79, "count": 1, "first_seconds": 5107.644336, "last_seconds": 5107.644336,
                 "message": "GPU has fallen off the bus.", "pid": None, "name": None}]}]


def test_a_missing_dmesg_is_said_so(host, tmp_path):
    result = run_module(gpu_numa_facts_main, host.args(dmesg_path=str(tmp_path / "no-such-dmesg")))
    assert not result["failed"], result
    assert result["ansible_facts"]["gpu_kernel_log"]["read"] is False
    assert "dmesg failed with exit code 127" in result["ansible_facts"]["gpu_kernel_log"]["problem"]


def test_a_gpu_fallen_off_the_bus_that_takes_nvidia_smi_with_it_still_gives_its_xid_and_a_verdict(host):
    """nvidia-smi fails, the kernel log says why: the feature fails, its Xids reach the audit, the verdict is reboot."""
    host.answer("-q -x", "Unable to determine the device handle for GPU0000:2B:00.0: Unknown Error\n", rc=15)
    dmesg = host.dir / "dmesg"
    dmesg.write_text("#!/bin/sh\ncat <<'EOF'\n"
                     "[ 5107.644336] NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.\n"
                     "EOF\n")
    dmesg.chmod(0o755)
    result = run_module(gpu_numa_facts_main, host.args(dmesg_path=str(dmesg)))
    assert result["failed"] and "exit code 15" in result["msg"]
    kernel_log = result["ansible_facts"]["gpu_kernel_log"]
    assert kernel_log["read"] and [entry["pci_bus_id"] for entry in kernel_log["unlisted"]] == ["0000:2b:00.0"]
    verdict = audit_hardware_checks.readiness(audit_hardware_checks.assess(None, kernel_log=kernel_log),
                                              collected=False)
    assert verdict["verdict"] == "reboot", verdict
    assert verdict["reasons"][0].startswith("hardware.xid.unlisted: ")
    assert verdict["reasons"][-1] == "the GPUs' health was not read"


def test_a_failed_gpu_read_that_is_allowed_gives_no_health_and_so_no_verdict(host):
    host.answer("-q -x", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", rc=9)
    relaxed = run_module(gpu_numa_facts_main, host.args(require_gpu=False))
    assert not relaxed["failed"] and relaxed["ansible_facts"]["gpu_health"] is None
    findings = audit_hardware_checks.assess(relaxed["ansible_facts"]["gpu_health"],
                                            kernel_log=relaxed["ansible_facts"]["gpu_kernel_log"])
    assert audit_hardware_checks.readiness(findings, collected=False)["verdict"] is None
