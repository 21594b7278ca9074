# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The slurm_gres module against a host tree: sysfs CPU topology, mig-minors and /etc/slurm."""

from __future__ import annotations

import os
from unittest import mock

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import gpu_numa_facts
from ansible_collections.gpuops.hardening.plugins.module_utils.engines import slurm_gres as engine
from ansible_collections.gpuops.hardening.plugins.module_utils.slurm_gres import BLOCK_BEGIN
from ansible_collections.gpuops.hardening.plugins.modules.node import main as node_main
from ansible_collections.gpuops.hardening.plugins.modules.slurm_gres import main as slurm_gres_main
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import installer
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module

USER_GRES = "# site settings\nName=shard Count=8\n"
USER_CGROUP = "CgroupPlugin=autodetect\nConstrainDevices=no\n"


@pytest.fixture
def host(tmp_path):
    """1 socket, 4 cores with 2 threads (CPUs 0-3 first threads, 4-7 siblings), core_id with a gap."""
    base = tmp_path / "sys" / "devices" / "system" / "cpu"
    for cpu in range(8):
        topology = base / ("cpu%d" % cpu) / "topology"
        topology.mkdir(parents=True)
        (topology / "core_id").write_text("%d\n" % [0, 1, 4, 5][cpu % 4])
        (topology / "physical_package_id").write_text("0\n")
    slurm = tmp_path / "etc" / "slurm"
    slurm.mkdir(parents=True)
    (slurm / "gres.conf").write_text(USER_GRES)
    (slurm / "cgroup.conf").write_text(USER_CGROUP)
    return tmp_path


def _gpus():
    return [
        {"index": 0, "name": "NVIDIA L40S", "minor_number": 0, "pci_bus_id": "0000:17:00.0",
         "cpus": [0, 1, 4, 5], "mig_mode": "N/A"},
        {"index": 1, "name": "NVIDIA L40S", "minor_number": 1, "pci_bus_id": "0000:65:00.0",
         "cpus": [2, 3, 6, 7], "mig_mode": "N/A"},
    ]


def _run(root, check_mode=False, **args):
    params = {"root": str(root), "gpus": _gpus()}
    params.update(args)
    return run_module(slurm_gres_main, params, check_mode=check_mode, diff=True)


def _read(root, name):
    return (root / "etc" / "slurm" / name).read_text()


def test_writes_core_indexes_and_keeps_user_lines_then_is_idempotent(host):
    result = _run(host)
    assert result["changed"] and not result.get("failed")
    assert result["lines"] == ["Name=gpu Type=l40s File=/dev/nvidia0 Cores=0-1",
                               "Name=gpu Type=l40s File=/dev/nvidia1 Cores=2-3"]
    gres = _read(host, "gres.conf")
    assert gres.startswith(USER_GRES) and BLOCK_BEGIN in gres
    assert _read(host, "cgroup.conf") == "CgroupPlugin=autodetect\nConstrainDevices=yes\nConstrainCores=yes\n"
    assert result["gres_conf"]["backup_file"] and os.path.exists(result["gres_conf"]["backup_file"])
    assert len(result["diff"]) == 2
    again = _run(host)
    assert not again["changed"] and again["diff"] == []


def test_check_mode_reports_and_writes_nothing(host):
    result = _run(host, check_mode=True)
    assert result["changed"] and len(result["diff"]) == 2
    assert _read(host, "gres.conf") == USER_GRES and _read(host, "cgroup.conf") == USER_CGROUP
    assert not (host / "run").exists()


def test_autodetect_nvml_needs_no_gpus(host):
    result = _run(host, autodetect="nvml", gpus=[{"index": 0, "mig_mode": "Enabled"}])
    assert result["lines"] == ["AutoDetect=nvml"]
    assert "AutoDetect=nvml\n" in _read(host, "gres.conf")


def test_gpu_lines_outside_the_block_are_refused_before_any_change(host):
    (host / "etc" / "slurm" / "gres.conf").write_text("Name=gpu File=/dev/nvidia0\n")
    result = _run(host)
    assert result["failed"] and "outside the block" in result["msg"]
    assert _read(host, "cgroup.conf") == USER_CGROUP


def _mig_gpus(devices):
    gpus = _gpus()
    gpus[1].update(name="NVIDIA A100-SXM4-80GB", mig_mode="Enabled", mig_devices=devices)
    return gpus


MIG_DEVICES = [{"index": 0, "profile": "3g.40gb", "uuid": "MIG-a", "gpu_instance_id": 2, "compute_instance_id": 0},
               {"index": 1, "profile": "1g.10gb", "uuid": "MIG-b", "gpu_instance_id": 9, "compute_instance_id": 0}]


def test_mig_devices_get_multiple_files_lines_from_the_nodes_mig_minors(host):
    # The emulator lays down the driver's table, as it does on lab nodes.
    assert installer.mig_minors(str(host))
    result = _run(host, gpus=_mig_gpus(MIG_DEVICES))
    assert not result.get("failed") and result["changed"]
    gpu1 = 3 + 135
    assert result["lines"] == [
        "Name=gpu Type=l40s File=/dev/nvidia0 Cores=0-1",
        "Name=gpu Type=a100_3g.40gb MultipleFiles=/dev/nvidia1,/dev/nvidia-caps/nvidia-cap%d,"
        "/dev/nvidia-caps/nvidia-cap%d Cores=2-3" % (gpu1 + 18, gpu1 + 19),
        "Name=gpu Type=a100_1g.10gb MultipleFiles=/dev/nvidia1,/dev/nvidia-caps/nvidia-cap%d,"
        "/dev/nvidia-caps/nvidia-cap%d Cores=2-3" % (gpu1 + 81, gpu1 + 82)]
    assert [item["cores"] for item in result["wanted"]] == [[0, 1], [2, 3], [2, 3]]
    assert not _run(host, gpus=_mig_gpus(MIG_DEVICES))["changed"]


def test_mig_devices_without_mig_minors_fail_before_any_change(host):
    result = _run(host, gpus=_mig_gpus(MIG_DEVICES))
    assert result["failed"] and "/proc/driver/nvidia-caps/mig-minors cannot be read" in result["msg"]
    assert _read(host, "gres.conf") == USER_GRES and _read(host, "cgroup.conf") == USER_CGROUP


def test_mig_on_without_devices_gives_no_line_and_a_warning(host):
    result = _run(host, gpus=_mig_gpus([]))
    assert not result.get("failed")
    assert result["lines"] == ["Name=gpu Type=l40s File=/dev/nvidia0 Cores=0-1"]
    assert any("GPU 1 (0000:65:00.0) has MIG enabled but no MIG devices" in item for item in result["warnings"])


def test_cgroup_false_leaves_cgroup_conf_alone(host):
    result = _run(host, cgroup=False)
    assert result["cgroup_conf"] is None and _read(host, "cgroup.conf") == USER_CGROUP


def test_missing_files_are_created(host):
    os.unlink(str(host / "etc" / "slurm" / "gres.conf"))
    os.unlink(str(host / "etc" / "slurm" / "cgroup.conf"))
    result = _run(host)
    assert result["changed"] and _read(host, "gres.conf").startswith(BLOCK_BEGIN)
    assert _read(host, "cgroup.conf") == "ConstrainDevices=yes\nConstrainCores=yes\n"


def test_a_change_asks_for_slurmds_restart_where_it_is_installed_or_a_reconfigure():
    changed, unchanged = {"changed": True, "slurmd_installed": True}, {"changed": False, "slurmd_installed": True}
    spec = {"slurmd_action": "restart", "slurmd_unit": "slurmd.service"}
    assert engine.handlers(spec, changed) == [{"action": "restart", "unit": "slurmd.service"}]
    assert engine.handlers(spec, unchanged) == []
    assert engine.handlers(spec, dict(changed, slurmd_installed=False)) == []
    assert engine.handlers(dict(spec, slurmd_action="reconfigure"), changed) == [
        {"action": "command", "argv": ["scontrol", "reconfigure"]}]
    assert engine.handlers(dict(spec, slurmd_action="none"), changed) == []


def test_in_a_node_call_the_lines_describe_the_gpus_the_topology_feature_read(host):
    """Without gpus, the feature takes the gpu_topology fact of the call's topology feature, which ran before it."""
    topology = {"name": "topology", "engine": "gpu_numa_facts", "args": {"require_gpu": False}}
    gres = {"name": "gres", "engine": "slurm_gres", "args": {"topology_feature": "topology"}}
    with mock.patch.object(gpu_numa_facts, "read_gpus", return_value=({"gpus": _gpus(), "warnings": []}, [], None)) as read:
        result = run_module(node_main, {"root": str(host), "features": [topology, gres]}, diff=True)
    assert not result.get("failed"), result
    assert read.call_count == 1
    assert result["features"]["gres"]["lines"] == ["Name=gpu Type=l40s File=/dev/nvidia0 Cores=0-1",
                                                   "Name=gpu Type=l40s File=/dev/nvidia1 Cores=2-3"]
    # Alone (the topology feature left out by the play's tags), the feature reads the GPUs itself.
    with mock.patch.object(engine, "read_topology", return_value={"gpus": _gpus()[:1], "warnings": []}) as read:
        alone = run_module(node_main, {"root": str(host), "features": [gres]}, diff=True)
    assert read.call_count == 1 and alone["features"]["gres"]["lines"] == [
        "Name=gpu Type=l40s File=/dev/nvidia0 Cores=0-1"]
