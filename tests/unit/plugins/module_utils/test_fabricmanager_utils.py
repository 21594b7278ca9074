# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fabric Manager parsing: NVSwitch nodes, the daemon's and the package's versions, the drop-in,
the fabric state per GPU; read from the emulator's NVSwitch and PCIe nodes where it has them."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import fabricmanager, gpu_health
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import parse_ini_sections
from ansible_collections.gpuops.hardening.plugins.plugin_utils import gpu_models
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api, installer
from ansible_collections.gpuops.hardening.tests.unit import real_captures

FABRIC_GPUS = dict((name, spec.get("fabric_gpus")) for name, spec in gpu_models.MODELS.items())


def _installed(tmp_path, profile, **options):
    root = tmp_path / "root"
    root.mkdir()
    installer.install(profile, root=str(root), state_path="/state.json", **options)
    return root, str(root / "state.json")


def test_nvswitch_devices_of_the_emulated_dgx_h100(tmp_path):
    root, dummy = _installed(tmp_path, "dgx_h100")
    assert (root / "dev" / "nvidia-nvswitchctl").exists()
    assert fabricmanager.nvswitch_devices(str(root)) == ["/dev/nvidia-nvswitch%d" % n for n in range(4)]


def test_no_nvswitch_devices_on_a_pcie_node(tmp_path):
    root, dummy = _installed(tmp_path, "l40s_4x")
    assert fabricmanager.nvswitch_devices(str(root)) == []
    assert fabricmanager.nvswitch_devices(str(tmp_path / "absent")) == []


def test_switch_numbers_sort_as_numbers(tmp_path):
    (tmp_path / "dev").mkdir()
    for name in ("nvidia-nvswitch10", "nvidia-nvswitch2", "nvidia-nvswitchctl", "nvidia0"):
        (tmp_path / "dev" / name).write_text("")
    assert fabricmanager.nvswitch_devices(str(tmp_path)) == ["/dev/nvidia-nvswitch2", "/dev/nvidia-nvswitch10"]


@pytest.mark.parametrize("names, expected", [
    (["NVIDIA H100 80GB HBM3"] * 8, {"NVIDIA H100 80GB HBM3": 8}),
    # An HGX 4-GPU board links its GPUs directly: no fabric.
    (["NVIDIA H100 80GB HBM3"] * 4, {}),
    (["NVIDIA L40S"] * 8, {}),
    (["Some Future GPU"] * 8, {}),
])
def test_fabric_expected_from_the_model_table(names, expected):
    assert fabricmanager.fabric_expected(names, FABRIC_GPUS) == expected


def test_daemon_version_from_the_emulated_daemon(tmp_path):
    dummy, state_path = _installed(tmp_path, "dgx_h100", fabric_manager_version="535.104.05")
    rc, out, err = api.run("nv-fabricmanager", ["--version"], state_path)
    assert rc == 0, err
    assert fabricmanager.parse_daemon_version(out) == "535.104.05"


@pytest.mark.parametrize("text", ["", "nv-fabricmanager: command not found\n", "Fabric Manager version is : \n"])
def test_daemon_version_unreadable(text):
    assert fabricmanager.parse_daemon_version(text) is None


@pytest.mark.parametrize("manager, version, package", [
    ("dpkg", "535.104.05", "nvidia-fabricmanager-535"),
    ("rpm", "550.54.15", "nvidia-fabric-manager"),
])
def test_package_name(manager, version, package):
    assert fabricmanager.package_name(manager, version) == package


def test_package_query_argv():
    assert fabricmanager.package_query_argv("dpkg", "/usr/bin/dpkg-query", "nvidia-fabricmanager-535") == [
        "/usr/bin/dpkg-query", "--show", "--showformat=${db:Status-Abbrev}|${Version}\\n", "nvidia-fabricmanager-535"]
    assert fabricmanager.package_query_argv("rpm", "/usr/bin/rpm", "nvidia-fabric-manager") == [
        "/usr/bin/rpm", "-q", "--queryformat", "%{VERSION}\\n", "nvidia-fabric-manager"]


@pytest.mark.parametrize("text, version", [
    ("ii |535.104.05-1\n", "535.104.05"),
    ("ii |1:550.54.15-0ubuntu1\n", "550.54.15"),
    # Removed, its configuration kept: not installed.
    ("rc |535.104.05-1\n", None),
    ("550.54.15\n", "550.54.15"),
    ("package nvidia-fabric-manager is not installed\n", None),
    ("", None),
])
def test_parse_package_version(text, version):
    assert fabricmanager.parse_package_version(text) == version


def test_version_mismatch_names_both_versions_and_the_package():
    assert fabricmanager.version_mismatch("535.104.05", "535.104.05", "nvidia-fabricmanager-535") is None
    message = fabricmanager.version_mismatch("535.104.05", "535.129.03", "nvidia-fabricmanager-535")
    assert "535.104.05" in message and "535.129.03" in message and "nvidia-fabricmanager-535" in message
    assert "nothing was changed" in message


def test_dropin_adds_the_switch_condition_the_order_after_persistence_and_before_the_clients():
    sections = parse_ini_sections(fabricmanager.render_dropin("/lib/systemd/system/nvidia-fabricmanager.service",
                                                              ["nvidia-dcgm.service", "kubelet.service"]))
    assert sections == [("Unit", {"ConditionPathExistsGlob": "/dev/nvidia-nvswitch[0-9]*",
                                  "After": "nvidia-persistenced.service",
                                  "Before": "nvidia-dcgm.service kubelet.service"})]


def _fabric(state_path):
    rc, out, err = api.run("nvidia-smi", ["-q", "-x"], state_path, env={"GPUEMU_EUID": "0"})
    assert rc == 0, err
    return fabricmanager.fabric_states(gpu_health.parse_gpu_health(out))


def test_fabric_states_follow_the_emulated_daemon(tmp_path):
    dummy, state_path = _installed(tmp_path, "dgx_h100", fabric_manager=True)
    state = api.read_state(state_path)
    state["settings"]["fabricmanager_run_dir"] = str(tmp_path / "run-fm")
    api.write_state(state, state_path)
    before = _fabric(state_path)
    assert [gpu["state"] for gpu in before] == ["Not Started"] * 8
    assert len(fabricmanager.untrained(before)) == 8 and fabricmanager.fabric_reported(before)
    rc, dummy_out, err = api.run("nv-fabricmanager", ["-c", "/usr/share/nvidia/nvswitch/fabricmanager.cfg"], state_path)
    try:
        assert rc == 0, err
        assert [gpu["state"] for gpu in _fabric(state_path)] == ["In Progress"] * 8
        after = _fabric(state_path)
        assert fabricmanager.untrained(after) == []
        assert {(gpu["state"], gpu["status"]) for gpu in after} == {("Completed", "Success")}
    finally:
        api.stop_daemons(state_path)


def test_a_pcie_node_reports_no_fabric(tmp_path):
    dummy, state_path = _installed(tmp_path, "l40s_4x")
    states = _fabric(state_path)
    assert not fabricmanager.fabric_reported(states) and fabricmanager.untrained(states) == []


def test_untrained_wording():
    states = [{"index": 0, "uuid": "GPU-a", "state": "In Progress", "status": None},
              {"index": 1, "uuid": "GPU-b", "state": "Completed", "status": "Failure"},
              {"index": 2, "uuid": "GPU-c", "state": "Completed", "status": "Success"},
              {"index": 3, "uuid": "GPU-d", "state": None, "status": None}]
    assert fabricmanager.untrained(states) == ["0 (GPU-a): In Progress", "1 (GPU-b): Completed with status Failure"]


@pytest.mark.parametrize("name", ["telegraf_a100_sxm4_80gb_x4_mig_enabled_driver535_nvidia_smi_q_x.xml.txt",
                                  "netdata_rtx4090_persistence_enabled_driver535_nvidia_smi_q_x.xml.txt"])
def test_real_captures_without_a_reported_fabric(name):
    """An A100 board and a PCIe card on driver 535 read N/A: nothing to wait for, nothing untrained."""
    states = fabricmanager.fabric_states(gpu_health.parse_gpu_health(real_captures.load(name)))
    assert states and not fabricmanager.fabric_reported(states) and fabricmanager.untrained(states) == []


def test_the_versions_apt_cache_madison_offers():
    madison = ("nvidia-fabricmanager-535 | 535.129.03-1 | https://developer.download.nvidia.com/compute/cuda/repos/x  Packages\n"
               "nvidia-fabricmanager-535 | 535.104.05-1 | https://developer.download.nvidia.com/compute/cuda/repos/x  Packages\n"
               "nvidia-fabricmanager-535 | 535.129.03-1 | file:/srv/mirror  Packages\n"
               "N: Unable to locate package nvidia-fabricmanager-999\n")
    offered = fabricmanager.offered_versions(madison, "nvidia-fabricmanager-535")
    assert offered == ["535.129.03-1", "535.104.05-1"]
    assert fabricmanager.version_for_driver(offered, "535.104.05") == "535.104.05-1"
    assert fabricmanager.version_for_driver(offered, "550.54.15") is None
    assert fabricmanager.offered_versions("", "nvidia-fabricmanager-535") == []


def test_install_argv_pins_the_version():
    assert fabricmanager.install_argv("dpkg", "/usr/bin/apt-get", "nvidia-fabricmanager-535", "535.129.03-1") == [
        "/usr/bin/apt-get", "install", "-y", "-q", "--no-install-recommends", "nvidia-fabricmanager-535=535.129.03-1"]
    assert fabricmanager.install_argv("rpm", "/usr/bin/dnf", "nvidia-fabric-manager", "535.129.03") == [
        "/usr/bin/dnf", "install", "-y", "nvidia-fabric-manager-535.129.03"]
