# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabricmanager engine on an emulated node: the emulator's NVSwitch device nodes, Fabric Manager
package and unit, nvidia-smi and nv-fabricmanager daemon. systemctl is a stand-in that starts the
emulated daemon as the packaged unit's ExecStart does; dpkg-query answers from the test's package record."""

from __future__ import annotations

import os
import shlex
from unittest import mock

import pytest
from ansible.module_utils import basic
from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils import fabricmanager, smi_tool, systemd
from ansible_collections.gpuops.hardening.plugins.module_utils.engines import fabricmanager as engine
from ansible_collections.gpuops.hardening.plugins.module_utils.engines import nvidia_mig
from ansible_collections.gpuops.hardening.plugins.module_utils.feature_module import run_engine
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import last_setting
from ansible_collections.gpuops.hardening.plugins.modules.node import main as node_main
from ansible_collections.gpuops.hardening.plugins.plugin_utils import gpu_models
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api, installer
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import NODE_LOCK_PATHS, run_module
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.recorded_systemctl import UnitEnablement

FABRIC_GPUS = dict((name, spec.get("fabric_gpus")) for name, spec in gpu_models.MODELS.items())
PACKAGED = "/lib/systemd/system/nvidia-fabricmanager.service"
# One line of `apt-cache madison` per offered version (apt-cache(8); apt's own format: the name padded, then
# "| version | source").
MADISON_LINE = "%s | %s | https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64  Packages\n"
DRIVER = "535.129.03"


def main():
    module = AnsibleModule(argument_spec=engine.ARGUMENT_SPEC, supports_check_mode=True, **engine.SPEC_RULES)
    run_engine(module, engine)


class Node:
    """A host tree with the emulator installed, its state, the units that run and what systemctl was told."""

    def __init__(self, tmp_path, profile, fabric_manager_version):
        self.root = tmp_path / "host"
        self.root.mkdir()
        self.profile = profile
        # The versions the stand-in apt repository offers (apt-cache madison), and the apt-get runs.
        self.offered = []
        self.installs = []
        installer.install(profile, root=str(self.root), state_path="/state.json",
                          fabric_manager=fabric_manager_version is not None,
                          fabric_manager_version=fabric_manager_version)
        self.state = str(self.root / "state.json")
        state = api.read_state(self.state)
        state["driver_version"] = DRIVER
        state["settings"]["fabricmanager_run_dir"] = str(tmp_path / "run-fm")
        api.write_state(state, self.state)
        self.package_version = fabric_manager_version
        self.enabled = set()
        self.calls = []
        self.clients = set()
        self.journal = []

    def edit_state(self, change):
        state = api.read_state(self.state)
        change(state)
        api.write_state(state, self.state)

    def daemon_running(self):
        return bool(api.read_state(self.state)["daemons"].get("fabricmanager"))

    def apt_get_install(self, argv, environ):
        """apt-get install PACKAGE=VERSION: the emulator's Fabric Manager package at that version."""
        self.installs.append((argv, environ))
        package, version = argv[-1].split("=", 1)
        if version not in self.offered:
            return 100, "", "E: Version '%s' for '%s' was not found\n" % (version, package)
        installer.install(self.profile, root=str(self.root), state_path="/state.json",
                          fabric_manager_version=fabricmanager.upstream_version(version))
        self.package_version = fabricmanager.upstream_version(version)
        return 0, "Setting up %s (%s) ...\n" % (package, version), ""

    def smi(self, *argv):
        return api.run("nvidia-smi", list(argv), self.state, env={"GPUEMU_EUID": "0"})

    def fabric(self):
        return [gpu.get("fabric") for gpu in api.read_state(self.state)["gpus"]]

    def events(self):
        return [event["event"] for event in api.events(self.state)]

    def files(self):
        return sorted(str(path.relative_to(self.root)) for path in self.root.rglob("*")
                      if str(path.relative_to(self.root)) not in NODE_LOCK_PATHS)

    def start_daemon(self):
        argv = shlex.split(last_setting((self.root / PACKAGED.lstrip("/")).read_text(), "Service", "ExecStart"))
        rc, dummy, err = api.run("nv-fabricmanager", argv[1:], self.state)
        self.journal.extend(line for line in err.splitlines() if line)
        return rc, err


class FakeClock:
    """time.time and time.sleep for the engine: a sleep moves the clock on at once."""

    def __init__(self):
        self.now = 1000.0

    def time(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def fake_systemctl(node):
    class FakeSystemctl(UnitEnablement):
        books = node

        def show(self, units, properties):
            def active(unit):
                running = node.daemon_running() if unit == fabricmanager.UNIT else unit in node.clients
                return {"LoadState": "loaded", "ActiveState": "active" if running else "inactive"}
            return [active(unit) for unit in units]

        def start(self, unit, restart=False):
            if self.module.check_mode:
                return
            node.calls.append("start " + unit)
            rc, err = node.start_daemon()
            if rc != 0:
                self.module.fail_json(msg="systemctl start %s failed: %s" % (unit, err.strip()))

        def try_verb(self, verb, unit):
            if self.module.check_mode:
                return None
            node.calls.append("%s %s" % (verb, unit))
            if unit == fabricmanager.UNIT:
                rc, err = node.start_daemon()
                return err.strip() if rc else None
            (node.clients.add if verb == "start" else node.clients.discard)(unit)
            return None
    return FakeSystemctl


@pytest.fixture
def make_node(tmp_path):
    made = []

    def build(profile="dgx_h100", fabric_manager_version=DRIVER):
        node = Node(tmp_path, profile, fabric_manager_version)
        made.append(node)
        return node

    def fake_run(module, argv, timeout=30, check_rc=False, data=None, environ=None):
        node = made[-1]
        tool = os.path.basename(argv[0])
        if tool == "nvidia-smi":
            return node.smi(*argv[1:])
        if tool == "nv-fabricmanager":
            return api.run("nv-fabricmanager", argv[1:], node.state)
        if tool == "dpkg-query":
            if node.package_version is None:
                return 1, "", "dpkg-query: no packages found matching %s\n" % argv[-1]
            return 0, "ii |%s-1\n" % node.package_version, ""
        if tool == "journalctl":
            return 0, "\n".join(node.journal[-10:]) + "\n", ""
        if tool == "apt-cache":
            return 0, "".join(MADISON_LINE % (argv[-1], version) for version in node.offered), ""
        if tool == "apt-get":
            return node.apt_get_install(argv, environ)
        raise AssertionError("unexpected command %r" % argv)

    def get_bin_path(module, name, *args, **kwargs):
        node = made[-1]
        if name == "nv-fabricmanager" and node.package_version is None:
            return None
        known = ("nvidia-smi", "nv-fabricmanager", "dpkg-query", "journalctl", "apt-cache", "apt-get")
        return "/usr/bin/" + name if name in known else None

    with mock.patch.object(smi_tool, "run", fake_run), mock.patch.object(engine, "run", fake_run), \
            mock.patch.object(engine, "run_outcome", fake_run), mock.patch.object(systemd, "run_outcome", fake_run), \
            mock.patch.object(engine, "time", FakeClock()), \
            mock.patch.object(basic.AnsibleModule, "get_bin_path", get_bin_path):
        yield build
    for node in made:
        api.stop_daemons(node.state)


def _run(node, check_mode=False, **args):
    systemctl = fake_systemctl(node)
    with mock.patch.object(engine, "Systemctl", systemctl), mock.patch.object(nvidia_mig, "Systemctl", systemctl):
        return run_module(main, dict(args, root=str(node.root), fabric_gpus=FABRIC_GPUS), check_mode=check_mode, diff=True)


def test_pcie_node_is_a_no_op_that_says_why(make_node):
    node = make_node("l40s_4x", fabric_manager_version=None)
    before = node.files()
    result = _run(node)
    assert not result["failed"], result["msg"]
    assert not result["changed"] and "no NVSwitch" in result["skipped_reason"]
    assert node.files() == before and node.calls == []


def test_converges_an_nvswitch_node_and_waits_for_the_fabric(make_node):
    node = make_node()
    assert node.fabric() == ["Not Started"] * 8
    result = _run(node)
    assert not result["failed"], result["msg"]
    assert result["changed"] and result["service_action"] == "started" and result["enabled_changed"]
    assert result["nvswitch_devices"] == ["/dev/nvidia-nvswitch%d" % n for n in range(4)]
    assert result["daemon_version"] == result["driver_version"] == result["package_version"] == DRIVER
    assert result["package"] == "nvidia-fabricmanager-535"
    assert result["verification"] == "passed"
    assert {(gpu["state"], gpu["status"]) for gpu in result["gpus"]} == {("Completed", "Success")}
    assert node.enabled == {fabricmanager.UNIT} and node.daemon_running()
    dropin = node.root / fabricmanager.DROPIN_PATH.lstrip("/")
    assert "ConditionPathExistsGlob=/dev/nvidia-nvswitch[0-9]*" in dropin.read_text()
    assert [entry["after_header"].endswith(fabricmanager.DROPIN_PATH) for entry in result["diff"]] == [True]
    # The packaged unit stays as shipped.
    assert (node.root / PACKAGED.lstrip("/")).read_text() == installer.fabricmanager_package.UNIT


def test_second_run_changes_nothing_and_check_mode_predicts_it(make_node):
    node = make_node()
    assert not _run(node)["failed"]
    files = node.files()
    for check_mode in (True, False):
        result = _run(node, check_mode=check_mode)
        assert not result["failed"], result["msg"]
        assert not result["changed"] and result["service_action"] == "none" and result["diff"] == []
        assert result["verification"] == "passed"
    assert node.files() == files


def test_check_mode_predicts_the_first_run_and_changes_nothing(make_node):
    node = make_node()
    files, state = node.files(), api.read_state(node.state)
    predicted = _run(node, check_mode=True)
    assert not predicted["failed"], predicted["msg"]
    assert node.files() == files and node.calls == [] and not node.daemon_running()
    assert api.read_state(node.state)["gpus"] == state["gpus"]
    applied = _run(node)
    for key in ("changed", "service_action", "enabled_changed", "dropin", "diff", "daemon_version", "package"):
        assert predicted[key] == applied[key], key
    assert predicted["verification"].startswith("skipped in check mode")


def test_version_mismatch_fails_before_any_change(make_node):
    node = make_node(fabric_manager_version="535.104.05")
    files = node.files()
    result = _run(node)
    assert result["failed"]
    assert "535.104.05" in result["msg"] and DRIVER in result["msg"] and "nvidia-fabricmanager-535" in result["msg"]
    assert node.files() == files and node.calls == [] and not node.daemon_running()


def test_missing_package_fails_naming_it(make_node):
    node = make_node(fabric_manager_version=None)
    result = _run(node)
    assert result["failed"] and "install nvidia-fabricmanager-535 at version %s" % DRIVER in result["msg"]
    assert node.calls == []


def test_model_with_a_fabric_but_no_switch_nodes_fails(make_node):
    node = make_node()
    for name in os.listdir(str(node.root / "dev")):
        if name.startswith("nvidia-nvswitch"):
            os.unlink(str(node.root / "dev" / name))
    result = _run(node)
    assert result["failed"] and "8 x NVIDIA H100 80GB HBM3" in result["msg"] and "nothing was changed" in result["msg"]


def test_timeout_names_the_gpus_in_progress_and_the_journal(make_node):
    node = make_node()
    node.edit_state(lambda state: state["faults"].update(fabric={"3": {"state": "In Progress"}}))
    node.journal.append("nv-fabricmanager[4242]: a line the daemon logged")
    result = _run(node, wait_seconds=30)
    assert result["failed"] and "after 30 seconds" in result["msg"]
    assert "GPU 3 (" in result["msg"] and "In Progress" in result["msg"]
    assert "GPU 2 (" not in result["msg"] and "a line the daemon logged" in result["msg"]


def test_check_mode_reads_a_fabric_still_training_once_and_reports_it(make_node):
    node = make_node()
    assert not _run(node)["failed"]
    node.edit_state(lambda state: state["faults"].update(fabric={"3": {"state": "In Progress"}}))
    clock = engine.time.now
    result = _run(node, check_mode=True, wait_seconds=600)
    assert not result["failed"], result["msg"]
    assert engine.time.now == clock, "check mode waited for the fabric"
    assert result["service_action"] == "none" and not result["changed"]
    assert result["verification"].startswith("not trained when read") and "GPU 3 (" in result["verification"]
    assert "In Progress" in result["verification"] and "GPU 2 (" not in result["verification"]


def _trained_then_stopped(node):
    """The fabric an earlier daemon trained, then the daemon gone: a start now is a restart."""
    assert not _run(node)["failed"]
    api.stop_daemons(node.state)
    assert node.fabric() == ["Completed"] * 8 and not node.daemon_running()


def test_restart_under_compute_processes_is_refused(make_node):
    node = make_node()
    _trained_then_stopped(node)
    node.edit_state(lambda state: api.add_process(state, 2, 4242, name="python3"))
    calls, files = list(node.calls), node.files()
    result = _run(node)
    assert result["failed"] and "GPU 2: pid 4242 (python3)" in result["msg"] and "force" in result["msg"]
    assert node.calls == calls and node.files() == files and not node.daemon_running()


def test_a_restart_under_compute_processes_is_refused_before_the_package_is_installed(make_node):
    node = make_node()
    _trained_then_stopped(node)
    node.edit_state(lambda state: api.add_process(state, 2, 4242, name="python3"))
    node.package_version, node.offered = "535.104.05", [DRIVER + "-1"]
    calls, files = list(node.calls), node.files()
    for check_mode in (True, False):
        result = _run(node, check_mode=check_mode, install=True)
        assert result["failed"] and "GPU 2: pid 4242 (python3)" in result["msg"], (check_mode, result)
        assert "nothing was changed" in result["msg"]
    assert node.installs == [] and node.calls == calls and node.files() == files and not node.daemon_running()


def test_restart_resets_the_gpus_with_the_clients_stopped(make_node):
    node = make_node()
    _trained_then_stopped(node)
    node.clients.add("nvidia-dcgm.service")
    del node.calls[:]
    events_before = len(node.events())
    predicted = _run(node, check_mode=True)
    assert predicted["service_action"] == "restarted" and predicted["clients_stopped"] == ["nvidia-dcgm.service"]
    assert node.calls == []
    result = _run(node)
    assert not result["failed"], result["msg"]
    assert result["service_action"] == "restarted" and result["clients_stopped"] == ["nvidia-dcgm.service"]
    assert node.calls == ["stop nvidia-dcgm.service", "start " + fabricmanager.UNIT, "start nvidia-dcgm.service"]
    assert node.events()[events_before:].count("reset") == 8
    assert result["verification"] == "passed" and node.clients == {"nvidia-dcgm.service"}


def test_forced_restart_whose_reset_fails_starts_the_clients_again(make_node):
    node = make_node()
    _trained_then_stopped(node)
    node.edit_state(lambda state: api.add_process(state, 2, os.getpid(), name="python3"))
    node.clients.add("nvidia-dcgm.service")
    del node.calls[:]
    result = _run(node, force=True)
    assert result["failed"] and "the GPU reset before the restart failed" in result["msg"] and "-i 2 -r" in result["msg"]
    assert not node.daemon_running() and node.clients == {"nvidia-dcgm.service"}
    assert node.calls == ["stop nvidia-dcgm.service", "start nvidia-dcgm.service"]


def test_masked_unit_is_refused(make_node):
    node = make_node()
    mask = node.root / "etc/systemd/system" / fabricmanager.UNIT
    mask.parent.mkdir(parents=True, exist_ok=True)
    os.symlink("/dev/null", str(mask))
    result = _run(node)
    assert result["failed"] and "masked" in result["msg"] and "nothing was changed" in result["msg"]
    assert node.calls == [] and not (node.root / fabricmanager.DROPIN_PATH.lstrip("/")).exists()


def test_restart_whose_start_fails_names_the_journal_and_starts_the_clients_again(make_node):
    node = make_node()
    _trained_then_stopped(node)
    node.clients.add("nvidia-dcgm.service")
    node.journal.append("nv-fabricmanager[4242]: the line of a failed start")
    node.start_daemon = lambda: (1, "Job for nvidia-fabricmanager.service failed")
    result = _run(node)
    assert result["failed"] and "failed after the GPU reset" in result["msg"]
    assert "the line of a failed start" in result["msg"] and node.clients == {"nvidia-dcgm.service"}


def test_install_puts_in_the_drivers_version_then_converges(make_node):
    node = make_node(fabric_manager_version=None)
    node.offered = ["550.54.15-1", DRIVER + "-1"]
    predicted = _run(node, check_mode=True, install=True)
    assert not predicted["failed"], predicted["msg"]
    assert predicted["changed"] and predicted["installed"] == "nvidia-fabricmanager-535 %s" % DRIVER
    assert node.installs == [] and node.calls == []
    result = _run(node, install=True)
    assert not result["failed"], result["msg"]
    ((argv, environ),) = node.installs
    assert argv == ["/usr/bin/apt-get", "install", "-y", "-q", "--no-install-recommends",
                    "nvidia-fabricmanager-535=%s-1" % DRIVER]
    assert environ == {"DEBIAN_FRONTEND": "noninteractive"}
    assert result["installed"] == "nvidia-fabricmanager-535 %s-1" % DRIVER
    assert result["daemon_version"] == result["package_version"] == DRIVER and result["verification"] == "passed"
    again = _run(node, install=True)
    assert not again["changed"] and again["installed"] is None and len(node.installs) == 1


def test_install_of_a_version_the_repositories_lack_fails_naming_what_they_offer(make_node):
    node = make_node(fabric_manager_version="535.104.05")
    node.offered = ["535.104.05-1"]
    files = node.files()
    result = _run(node, install=True)
    assert result["failed"] and "offer nvidia-fabricmanager-535 at 535.104.05-1, not at the driver's version" in result["msg"]
    assert node.installs == [] and node.calls == [] and node.files() == files


def test_in_a_node_call_a_mismatch_fails_before_the_features_ahead_of_it_change_anything(make_node):
    node = make_node(fabric_manager_version="535.104.05")
    written = "/etc/gpuops-hardening/written-before-fabricmanager"
    features = [{"name": "files", "engine": "installed_files",
                 "args": {"files": [{"path": written, "content": "x\n"}]}},
                {"name": "fabricmanager", "engine": "fabricmanager", "args": {"fabric_gpus": FABRIC_GPUS}}]
    systemctl = fake_systemctl(node)
    with mock.patch.object(engine, "Systemctl", systemctl), mock.patch.object(nvidia_mig, "Systemctl", systemctl):
        result = run_module(node_main, {"root": str(node.root), "features": features})
    assert result["failed"] and result["failed_feature"] == "fabricmanager", result
    assert "535.104.05 does not match" in result["msg"]
    assert not (node.root / written.lstrip("/")).exists() and node.calls == []
