# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The persistenced module on a host tree with the emulator's units, nvidia-smi and daemon.

systemctl is a stand-in that starts the emulated daemon with the ExecStart the
drop-in gives it, so persistence reads what the drop-in really achieves.
"""

from __future__ import annotations

import os
from unittest import mock

import pytest
from ansible.module_utils import basic

from ansible_collections.gpuops.hardening.plugins.module_utils import persistenced, smi_tool
from ansible_collections.gpuops.hardening.plugins.module_utils.engines import persistenced as persistenced_module
from ansible_collections.gpuops.hardening.plugins.modules.persistenced import main as persistenced_main
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api, units
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import NODE_LOCK_PATHS, run_module
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.recorded_systemctl import UnitEnablement

NVIDIA_SMI = "/usr/bin/nvidia-smi"
PACKAGED = "/lib/systemd/system/nvidia-persistenced.service"
PENDING_RESTART = "/var/lib/gpuops-hardening/persistenced-restart-pending.json"
MASK = "/etc/systemd/system/nvidia-persistenced.service"


class Host:
    """A host tree, an emulator state and what systemctl was told."""

    def __init__(self, tmp_path):
        self.root = tmp_path / "host"
        self.root.mkdir()
        self.state = str(tmp_path / "state.json")
        state = api.new_state("l40s_4x")
        state["settings"]["persistenced_run_dir"] = str(tmp_path / "run-persistenced")
        api.write_state(state, self.state)
        self.driver = True
        self.enabled = set()
        self.calls = []

    def path(self, host_path):
        return self.root / host_path.lstrip("/")

    def install_unit(self, flavour):
        unit = self.path(PACKAGED)
        unit.parent.mkdir(parents=True, exist_ok=True)
        unit.write_text(units.unit_text(flavour))
        if flavour == "masked":
            mask = self.path(MASK)
            mask.parent.mkdir(parents=True, exist_ok=True)
            os.symlink("/dev/null", str(mask))

    def daemon_running(self):
        return bool(api.read_state(self.state)["daemons"].get("persistenced"))

    def smi(self, *argv):
        return api.run("nvidia-smi", list(argv), self.state, env={"GPUEMU_EUID": "0"})

    def files(self):
        return sorted(name for name in (str(path.relative_to(self.root)) for path in self.root.rglob("*"))
                      if name not in NODE_LOCK_PATHS)


@pytest.fixture
def host(tmp_path):
    current = Host(tmp_path)

    class FakeSystemctl(UnitEnablement):
        books = current

        def show(self, units_, properties):
            return [{"ActiveState": "active" if current.daemon_running() else "inactive"}]

        def start(self, unit, restart=False):
            if self.module.check_mode:
                return
            current.calls.append(("restart " if restart else "start ") + unit)
            api.stop_daemons(current.state)
            dropin = current.path(persistenced.DROPIN_PATH).read_text()
            argv = dropin.rsplit("ExecStart=", 1)[1].split()
            rc, dummy, err = api.run("nvidia-persistenced", argv[1:], current.state)
            assert rc == 0, err

    def fake_run(module, argv, timeout=30, check_rc=False, data=None):
        assert argv[0] == NVIDIA_SMI and timeout == module.params["timeout"]
        return current.smi(*argv[1:])

    def get_bin_path(module, name, *args, **kwargs):
        return NVIDIA_SMI if name == "nvidia-smi" and current.driver else None

    with mock.patch.object(persistenced_module, "Systemctl", FakeSystemctl), \
            mock.patch.object(smi_tool, "run", fake_run), \
            mock.patch.object(persistenced_module.time, "sleep", lambda seconds: None), \
            mock.patch.object(basic.AnsibleModule, "get_bin_path", get_bin_path):
        yield current
    api.stop_daemons(current.state)


def _run(host, check_mode=False, **args):
    return run_module(persistenced_main, dict(args, root=str(host.root)), check_mode=check_mode, diff=True)


@pytest.mark.parametrize("flavour", ["upstream", "debian", "default"])
def test_installable_unit_is_enabled_and_persistence_reads_enabled(host, flavour):
    host.install_unit(flavour)
    result = _run(host)
    assert not result["failed"], result["msg"]
    assert result["changed"] and result["mode"] == "daemon"
    assert result["flavour"] == {"default": "custom"}.get(flavour, flavour)
    assert result["enabled_by"] == "install" and "enable nvidia-persistenced.service" in host.calls
    assert result["service_action"] == "started" and result["verification"] == "passed"
    assert [gpu["persistence_mode"] for gpu in result["gpus"]] == ["Enabled"] * 4
    assert not host.path(persistenced.WANTS_PATH).exists()
    # The packaged unit is never edited.
    assert host.path(PACKAGED).read_text() == units.unit_text(flavour)


def test_second_run_changes_nothing(host):
    host.install_unit("upstream")
    assert _run(host)["changed"]
    host.calls[:] = []
    result = _run(host)
    assert not result["failed"] and not result["changed"], result
    assert result["service_action"] == "none" and host.calls == []
    assert _run(host, check_mode=True)["changed"] is False


@pytest.mark.parametrize("flavour", ["ubuntu", "nvidia-ubuntu"])
def test_static_unit_gets_a_wants_link_and_loses_no_persistence_mode(host, flavour):
    host.install_unit(flavour)
    result = _run(host)
    assert not result["failed"], result["msg"]
    assert result["flavour"] == flavour and result["enabled_by"] == "wants_link"
    assert os.readlink(str(host.path(persistenced.WANTS_PATH))) == PACKAGED
    assert not any(call.startswith("enable") for call in host.calls)
    assert "--no-persistence-mode" not in result["dropin"]["exec_start"]
    assert result["verification"] == "passed"


def test_without_the_drop_in_the_ubuntu_unit_leaves_persistence_off(host):
    """The reason for the drop-in: Ubuntu's packaged arguments keep persistence mode off."""
    argv = units.UNITS["ubuntu"].split("ExecStart=")[1].split("\n")[0].split()
    assert api.run("nvidia-persistenced", argv[1:], host.state)[0] == 0
    rc, out, dummy = host.smi(*persistenced.QUERY_ARGS)
    assert rc == 0 and persistenced.not_persistent(persistenced.parse_persistence(out))


def test_changed_drop_in_restarts_a_running_daemon(host):
    host.install_unit("debian")
    assert _run(host)["service_action"] == "started"
    host.path(persistenced.DROPIN_PATH).write_text("[Service]\nExecStart=\nExecStart=/usr/bin/nvidia-persistenced\n")
    result = _run(host)
    assert result["changed"] and result["service_action"] == "restarted"
    assert host.calls[-2:] == ["daemon-reload", "restart nvidia-persistenced.service"]
    assert result["diff"][0]["before"].startswith("[Service]")


def test_a_run_killed_before_the_restart_leaves_it_to_the_next_run(host):
    host.install_unit("debian")
    assert _run(host)["service_action"] == "started"
    host.path(persistenced.DROPIN_PATH).write_text("[Service]\nExecStart=\nExecStart=/usr/bin/nvidia-persistenced\n")

    def killed(systemctl):
        raise KeyboardInterrupt("the module's process dies after the drop-in is written")
    with mock.patch.object(persistenced_module.Systemctl, "daemon_reload", killed), pytest.raises(KeyboardInterrupt):
        _run(host)
    host.calls[:] = []
    # The drop-in is already right: only the record says that the daemon still runs the old command.
    result = _run(host)
    assert result["changed"] and not result["dropin"]["changed"] and result["service_action"] == "restarted"
    assert host.calls == ["daemon-reload", "restart nvidia-persistenced.service"]
    assert not host.path(PENDING_RESTART).exists()
    assert not _run(host)["changed"]


def test_check_mode_reports_and_skips_verification(host):
    host.install_unit("ubuntu")
    result = _run(host, check_mode=True)
    assert not result["failed"] and result["changed"]
    assert result["verification"].startswith("skipped in check mode")
    assert result["gpus"] == [] and host.calls == []
    assert host.files() == ["lib", "lib/systemd", "lib/systemd/system", "lib/systemd/system/nvidia-persistenced.service"]
    assert {entry["after_header"] for entry in result["diff"]} == {
        str(host.path(persistenced.DROPIN_PATH)), str(host.path(persistenced.WANTS_PATH))}


def test_masked_unit_fails_before_any_change(host):
    host.install_unit("masked")
    before = host.files()
    result = _run(host)
    assert result["failed"]
    assert "masked (/etc/systemd/system/nvidia-persistenced.service -> /dev/null)" in result["msg"]
    assert "unmask" in result["msg"]
    assert host.files() == before and host.calls == [] and not host.daemon_running()


def test_masked_unit_is_unmasked_when_asked(host):
    host.install_unit("masked")
    result = _run(host, unmask=True)
    assert not result["failed"], result["msg"]
    assert result["unmasked"] == MASK and result["changed"]
    assert not os.path.lexists(str(host.path(MASK)))
    assert result["flavour"] == "upstream" and result["verification"] == "passed"
    assert "daemon-reload" in host.calls


def test_no_daemon_falls_back_to_legacy_persistence_and_a_boot_unit(host):
    result = _run(host)
    assert not result["failed"], result["msg"]
    assert result["mode"] == "legacy" and result["service_action"] == "set" and result["changed"]
    assert any("legacy" in warning and "reboot" in warning for warning in result["warnings"])
    assert host.path(persistenced.LEGACY_UNIT_PATH).read_text() == persistenced.render_legacy_unit(NVIDIA_SMI)
    assert "enable gpuops-persistence-mode.service" in host.calls
    assert result["verification"] == "passed"
    again = _run(host)
    assert not again["changed"] and again["service_action"] == "none"


def test_the_legacy_boot_unit_goes_once_the_daemon_is_installed(host):
    legacy = _run(host)
    assert legacy["mode"] == "legacy" and host.path(persistenced.LEGACY_UNIT_PATH).exists()
    host.install_unit("upstream")
    checked = _run(host, check_mode=True)
    assert checked["changed"] and checked["legacy_unit_removed"] == persistenced.LEGACY_UNIT_PATH
    assert host.path(persistenced.LEGACY_UNIT_PATH).exists()
    result = _run(host)
    assert not result["failed"], result["msg"]
    assert result["mode"] == "daemon" and result["legacy_unit_removed"] == persistenced.LEGACY_UNIT_PATH
    assert not host.path(persistenced.LEGACY_UNIT_PATH).exists()
    assert "disable gpuops-persistence-mode.service" in host.calls
    assert _run(host)["legacy_unit_removed"] is None


def test_a_later_drop_in_that_sets_exec_start_is_named(host):
    host.install_unit("upstream")
    later = host.path("/etc/systemd/system/nvidia-persistenced.service.d/99-local.conf")
    later.parent.mkdir(parents=True)
    later.write_text("[Service]\nExecStart=\nExecStart=/usr/bin/nvidia-persistenced --no-persistence-mode\n")
    # An earlier name, or one without ExecStart, does not override.
    host.path("/etc/systemd/system/nvidia-persistenced.service.d/10-env.conf").write_text(
        "[Service]\nExecStart=/usr/bin/true\n")
    host.path("/etc/systemd/system/nvidia-persistenced.service.d/95-nice.conf").write_text("[Service]\nNice=-5\n")
    result = _run(host, check_mode=True)
    assert result["overridden_by"] == ["/etc/systemd/system/nvidia-persistenced.service.d/99-local.conf"]
    assert any("99-local.conf sets ExecStart after" in warning for warning in result["warnings"])


def test_gpus_left_without_persistence_are_named(host):
    host.install_unit("upstream")
    with mock.patch.object(persistenced, "PERSISTENCE_ON", "--no-persistence-mode"):
        result = _run(host)
    assert result["failed"]
    assert "not Enabled on GPU 0 (GPU-" in result["msg"] and "3 (GPU-" in result["msg"]


def test_no_driver_fails_or_skips(host):
    host.driver = False
    host.install_unit("upstream")
    failed = _run(host)
    assert failed["failed"] and "nvidia-smi not found" in failed["msg"] and "require_gpu" in failed["msg"]
    skipped = _run(host, require_gpu=False)
    assert not skipped["failed"] and not skipped["changed"] and skipped["skipped_reason"]
    assert not host.path(persistenced.DROPIN_PATH).exists()


def test_check_mode_verifies_what_is_in_place(host):
    """With nothing to change, check mode reads persistence mode as a run would verify it, so a GPU that lost it
    fails both alike."""
    host.install_unit("upstream")
    assert _run(host)["verification"] == "passed"
    result = _run(host, check_mode=True)
    assert not result["failed"] and not result["changed"] and result["verification"] == "passed"
    # As an operator would: nvidia-smi asks the running daemon to drop GPU 1's persistence mode.
    rc, out, dummy = host.smi("-i", "1", "-pm", "0")
    assert rc == 0 and out.startswith("Disabled persistence mode for GPU"), out
    result = _run(host, check_mode=True)
    assert result["failed"] and "not Enabled on GPU 1 (GPU-" in result["msg"]
