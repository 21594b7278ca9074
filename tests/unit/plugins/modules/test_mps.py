# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mps module on a host tree with the emulator's nvidia-smi and MPS control daemon.

systemctl is a stand-in that runs the unit's ExecStartPre, ExecStart, ExecStartPost,
ExecStop and ExecStopPost lines against the emulator, with the unit's directories
taken below the host tree, so the daemon answers what the unit really achieves.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
import time
from unittest import mock

import pytest
from ansible.module_utils import basic

from ansible_collections.gpuops.hardening.plugins.module_utils import mps, smi_tool
from ansible_collections.gpuops.hardening.plugins.module_utils.engines import mps as mps_module
from ansible_collections.gpuops.hardening.plugins.modules.mps import main as mps_main
from ansible_collections.gpuops.hardening.plugins.plugin_utils.input_rules import mps as role_rules
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import enable_mig, single_gpu
from ansible_collections.gpuops.hardening.tests.unit.plugins.module_utils.fake_accounts import AccountTables
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import NODE_LOCK_PATHS, run_module
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.recorded_systemctl import UnitEnablement

NVIDIA_SMI = "/usr/bin/nvidia-smi"
MPS_CONTROL = "/usr/bin/nvidia-cuda-mps-control"
BINARIES = {"nvidia-smi": NVIDIA_SMI, "nvidia-cuda-mps-control": MPS_CONTROL, "sh": "/bin/sh",
            "systemd-tmpfiles": "/usr/bin/systemd-tmpfiles", "groupadd": "/usr/sbin/groupadd", "gpasswd": "/usr/bin/gpasswd"}
UNIT = "gpuops-mps-all.service"
UNIT_PATH = "/etc/systemd/system/" + UNIT
CLIENT_PID = 51818


class Host:
    """A host tree, an emulator state, and what systemctl and nvidia-smi -c were told."""

    def __init__(self, tmp_path, profile, edit=None):
        # A short root: the daemon's socket lies below it, and unix socket paths are short.
        self.root = tempfile.mkdtemp(prefix="mps")
        self.state = str(tmp_path / "state.json")
        state = api.new_state(profile)
        state["settings"]["persistenced_run_dir"] = str(tmp_path / "run-persistenced")
        if edit:
            edit(state)
        api.write_state(state, self.state)
        self.enabled = set()
        self.started = {}
        self.calls = []
        self.missing = set()

    def path(self, host_path):
        return os.path.join(self.root, host_path.lstrip("/"))

    def text(self, host_path):
        with open(self.path(host_path), encoding="utf-8") as handle:
            return handle.read()

    def files(self):
        found = []
        for folder, dirs, names in os.walk(self.root):
            found.extend(os.path.relpath(os.path.join(folder, name), self.root) for name in dirs + names)
        return sorted(path for path in found if path not in NODE_LOCK_PATHS)

    def gpus(self):
        return api.read_state(self.state)["gpus"]

    def modes(self):
        return [gpu["compute_mode"] for gpu in self.gpus()]

    def edit(self, change):
        state = api.read_state(self.state)
        change(state)
        api.write_state(state, self.state)

    def daemons(self):
        return api.read_state(self.state)["daemons"]["mps"]

    def rooted(self, environ):
        """The unit's or module's MPS environment with its folders below the host tree."""
        return dict((key, self.path(value) if key.startswith("CUDA_MPS_") else value)
                    for key, value in (environ or {}).items())

    def smi(self, argv):
        if "-c" in argv:
            self.calls.append("nvidia-smi " + " ".join(argv))
        return api.run("nvidia-smi", list(argv), self.state, env={"GPUEMU_EUID": "0"})

    def control(self, argv, environ, stdin=None):
        return api.run("nvidia-cuda-mps-control", list(argv), self.state, env=dict(self.rooted(environ), GPUEMU_EUID="0"),
                       stdin=stdin)

    def serving(self, pipe_directory):
        return any(entry["pipe_dir"] == self.path(pipe_directory) for entry in self.daemons())


def _lines(text, key):
    return [line[len(key) + 1:] for line in text.splitlines() if line.startswith(key + "=")]


class FakeSystemctl(UnitEnablement):
    """systemctl against the emulator: the unit's Exec lines, run as systemd would."""

    host = None

    @property
    def books(self):
        return self.host

    def _unit(self, unit):
        text = self.host.text("/etc/systemd/system/" + unit)
        return text, mps.unit_environment(text)

    def _exec_smi(self, lines):
        for line in lines:
            argv = line.split()
            if argv[0] == NVIDIA_SMI:
                rc, dummy, err = self.host.smi(argv[1:])
                assert rc == 0, err

    def _pipe(self, unit):
        """The pipe the unit's daemon was started on: systemd follows its main pid, not the unit file."""
        return self.host.started.get(unit) or self._unit(unit)[1]["CUDA_MPS_PIPE_DIRECTORY"]

    def show(self, units, properties):
        assert properties == ["ActiveState"]
        active = [os.path.exists(self.host.path(mps.UNIT_DIR + "/" + unit)) and self.host.serving(self._pipe(unit))
                  for unit in units]
        return [{"ActiveState": "active" if on else "inactive"} for on in active]

    def start(self, unit, restart=False):
        if self.module.check_mode:
            return
        self.host.calls.append(("restart " if restart else "start ") + unit)
        if restart:
            self._stop(unit)
        text, environ = self._unit(unit)
        self._exec_smi(_lines(text, "ExecStartPre"))
        argv = _lines(text, "ExecStart")[0].split()
        assert argv[0] == MPS_CONTROL
        rc, dummy, err = self.host.control(argv[1:], environ)
        assert rc == 0, err
        self.host.started[unit] = environ["CUDA_MPS_PIPE_DIRECTORY"]
        commands = re.search(r"< (\S+)", _lines(text, "ExecStartPost")[0]).group(1)
        rc, dummy, err = self.host.control([], environ, stdin=self.host.text(commands))
        assert rc == 0, err

    def stop(self, unit):
        if self.module.check_mode:
            return
        self.host.calls.append("stop " + unit)
        self._stop(unit)

    def _stop(self, unit):
        text, environ = self._unit(unit)
        assert "echo quit | %s" % MPS_CONTROL in _lines(text, "ExecStop")[0]
        # Where ExecStop misses the daemon (its pipe moved), systemd's SIGTERM still ends it.
        pipe = self._pipe(unit)
        self.host.control([], dict(environ, CUDA_MPS_PIPE_DIRECTORY=pipe), stdin="quit\n")
        deadline = time.time() + 5
        while self.host.serving(pipe) and time.time() < deadline:
            time.sleep(0.05)
        self._exec_smi(_lines(text, "ExecStopPost"))


@pytest.fixture
def make_host(tmp_path):
    hosts = []

    def _make(profile="l40s_4x", edit=None):
        current = Host(tmp_path, profile, edit)
        current.accounts = accounts
        hosts.append(current)
        FakeSystemctl.host = current
        return current

    def fake_run(module, argv, timeout=30, check_rc=False, data=None, environ=None):
        assert timeout == module.params["timeout"]
        if argv[0] == NVIDIA_SMI:
            return FakeSystemctl.host.smi(argv[1:])
        assert argv[0] == MPS_CONTROL, argv
        return FakeSystemctl.host.control(argv[1:], environ, stdin=data)

    def get_bin_path(module, name, *args, **kwargs):
        return None if name in FakeSystemctl.host.missing else BINARIES.get(name)

    # The host's accounts, the same for every host of a test.
    accounts = AccountTables(users={"root": 0, "alice": 1000, "bob": 1001})

    with mock.patch.object(mps_module, "Systemctl", FakeSystemctl), \
            mock.patch.object(mps_module, "run", fake_run), \
            mock.patch.object(smi_tool, "run", fake_run), \
            mock.patch.object(basic.AnsibleModule, "get_bin_path", get_bin_path), \
            accounts.installed():
        yield _make
    for current in hosts:
        api.stop_daemons(current.state)
        shutil.rmtree(current.root, ignore_errors=True)


def _run(host, check_mode=False, **args):
    return run_module(mps_main, dict(dict(group="root"), root=host.root, **args), check_mode=check_mode, diff=True)


def _add_client(gpu):
    return lambda state: api.add_process(state, gpu=gpu, pid=CLIENT_PID, name="python3", process_type="M+C")


def _ask(host, command, pipe="/run/nvidia-mps/all"):
    rc, out, err = host.control([], {"CUDA_MPS_PIPE_DIRECTORY": pipe}, stdin=command + "\n")
    assert rc == 0, err
    return out.strip()


def test_fresh_host_gets_every_file_and_a_verified_daemon(make_host):
    host = make_host()
    uuids = [gpu["uuid"] for gpu in host.gpus()]
    result = _run(host, active_thread_percentage=50, pinned_mem_limit="2G")
    assert not result["failed"], result["msg"]
    assert result["changed"] and result["removed"] == [] and result["compute_modes_restored"] == {}
    daemon = result["daemons"][0]
    assert len(result["daemons"]) == 1
    assert (daemon["name"], daemon["unit"], daemon["gpus"], daemon["action"]) == ("all", UNIT, uuids, "started")
    assert daemon["multiuser_server"] is True and daemon["exclusive_process"] is True
    assert daemon["verified"] == {"server_list": [], "active_thread_percentage": 50.0,
                                  "pinned_mem_limits": {"0": "2G", "1": "2G", "2": "2G", "3": "2G"}}
    assert host.calls[0] == "daemon-reload" and host.calls[1:3] == ["enable " + UNIT, "start " + UNIT]

    unit = host.text(UNIT_PATH)
    assert mps.unit_environment(unit) == {"CUDA_MPS_PIPE_DIRECTORY": "/run/nvidia-mps/all",
                                          "CUDA_MPS_LOG_DIRECTORY": "/var/log/nvidia-mps/all",
                                          "CUDA_VISIBLE_DEVICES": ",".join(uuids)}
    assert _lines(unit, "ExecStart") == [MPS_CONTROL + " -d -multiuser-server"]
    assert _lines(unit, "ExecStopPost") == ["%s -i %s -c DEFAULT" % (NVIDIA_SMI, uuid) for uuid in uuids]
    assert host.text("/etc/gpuops-hardening/mps/all.commands") == mps.render_commands(50, "2G", 4)
    assert "CUDA_MPS_PIPE_DIRECTORY=/run/nvidia-mps/all\n" in host.text("/etc/gpuops-hardening/mps/all.env")
    assert "export CUDA_MPS_LOG_DIRECTORY=/var/log/nvidia-mps/all\n" in host.text(mps.PROFILE_PATH)
    assert [line for line in host.text(mps.TMPFILES_PATH).splitlines() if line.startswith("d ")] == [
        "d /run/nvidia-mps 0755 root root -", "d /var/log/nvidia-mps 0755 root root -",
        "d /run/nvidia-mps/all 0770 root root -", "d /var/log/nvidia-mps/all 0770 root root -"]
    assert json.loads(host.text(mps.MODES_RECORD_PATH)) == dict((uuid, "Default") for uuid in uuids)
    assert oct(os.stat(host.path("/run/nvidia-mps/all")).st_mode & 0o777) == "0o770"
    # ExecStartPre took the GPUs, and the daemon runs with the unit's settings.
    assert host.modes() == ["Exclusive_Process"] * 4
    assert [entry["multiuser"] for entry in host.daemons()] == [True]
    assert _ask(host, "get_default_device_pinned_mem_limit 3") == "2G"


def test_second_run_and_check_mode_change_nothing(make_host):
    host = make_host()
    assert _run(host)["changed"]
    host.calls[:] = []
    again = _run(host)
    assert not again["failed"] and not again["changed"], again
    assert again["daemons"][0]["action"] == "none" and again["daemons"][0]["verified"]["active_thread_percentage"] == 100.0
    assert again["diff"] == [] and host.calls == []
    assert _run(host, check_mode=True)["changed"] is False


def test_check_mode_before_the_group_exists_reports_the_group_and_the_folders_group_as_changes(make_host):
    """In check mode the group the call would create is not there, and the folders that exist cannot be its own."""
    host = make_host()
    assert _run(host)["changed"]
    result = _run(host, check_mode=True, group="gpuops-no-such-group", client_users=["alice"])
    assert not result["failed"] and result["changed"], result
    assert result["group_created"] is True and result["users_added"] == ["alice"]
    assert {"before_header": "group gpuops-no-such-group", "after_header": "group gpuops-no-such-group",
            "before": "absent\n", "after": "members: alice\n"} in result["diff"]
    assert "owner 0:gpuops-no-such-group" in "".join(entry["after"] for entry in result["diff"])
    assert host.accounts.commands == [] and "gpuops-no-such-group" not in host.accounts.groups


def test_the_group_is_created_with_its_users_and_owns_the_pipe_directories(make_host):
    host = make_host()
    result = _run(host, group="gpu-mps", client_users=["alice", "bob"])
    assert not result["failed"] and result["changed"], result
    assert result["group_created"] is True and result["users_added"] == ["alice", "bob"]
    assert host.accounts.commands == ["groupadd --system gpu-mps", "gpasswd -a alice gpu-mps", "gpasswd -a bob gpu-mps"]
    gid, members = host.accounts.groups["gpu-mps"]
    assert members == ["alice", "bob"] and os.stat(host.path("/run/nvidia-mps/all")).st_gid == gid
    assert "d /run/nvidia-mps/all 0770 root gpu-mps -" in host.text(mps.TMPFILES_PATH)

    host.accounts.commands[:] = []
    again = _run(host, group="gpu-mps", client_users=["alice", "bob"])
    assert not again["changed"] and again["group_created"] is False and again["users_added"] == [], again
    assert host.accounts.commands == []


def test_a_user_added_later_is_added_alone_and_the_diff_names_the_members(make_host):
    host = make_host()
    host.accounts.groups["gpu-mps"] = [990, ["alice"]]
    assert not _run(host, group="gpu-mps", client_users=["alice"])["failed"]
    host.accounts.commands[:] = []
    result = _run(host, group="gpu-mps", client_users=["alice", "bob"])
    assert result["changed"] and result["users_added"] == ["bob"] and result["group_created"] is False, result
    assert host.accounts.commands == ["gpasswd -a bob gpu-mps"]
    assert {"before_header": "group gpu-mps", "after_header": "group gpu-mps",
            "before": "members: alice\n", "after": "members: alice, bob\n"} in result["diff"]


def test_a_client_user_the_host_lacks_fails_before_any_change(make_host):
    host = make_host()
    result = _run(host, group="gpu-mps", client_users=["alice", "zed", "amy"])
    assert result["failed"] and not result["changed"], result
    assert result["msg"].startswith("client_users (mps_client_users in the role): zed, amy: no such account on this "
                                    "host; nothing was changed"), result["msg"]
    assert host.files() == [] and host.accounts.commands == [] and "gpu-mps" not in host.accounts.groups
    # Check mode refuses it the same way, so the validation play stops the run before any role changes anything.
    assert _run(host, check_mode=True, group="gpu-mps", client_users=["zed"])["failed"]


def test_a_failed_gpasswd_stops_before_the_daemons(make_host):
    host = make_host()
    host.accounts.users["carol"] = 1002
    host.accounts.run = lambda module, argv, timeout=30, **kwargs: (
        (3, "", "gpasswd: cannot lock /etc/group; try again later.\n") if "gpasswd" in argv[0] else (0, "", ""))
    host.accounts.groups["gpu-mps"] = [990, []]
    with host.accounts.installed():
        result = _run(host, group="gpu-mps", client_users=["carol"])
    assert result["failed"] and result["msg"] == (
        "gpasswd -a carol gpu-mps failed with exit code 3: gpasswd: cannot lock /etc/group; try again later.; "
        "the daemons and their files were not changed"), result["msg"]
    assert not os.path.exists(host.path(UNIT_PATH)) and host.calls == []


def test_settings_changed_through_the_pipe_are_sent_again(make_host):
    host = make_host()
    assert not _run(host, active_thread_percentage=40)["failed"]
    _ask(host, "set_default_active_thread_percentage 90")
    result = _run(host, active_thread_percentage=40)
    assert not result["failed"] and result["changed"], result
    assert result["daemons"][0]["action"] == "none" and _ask(host, "get_default_active_thread_percentage") == "40.0"


def test_a_compute_mode_someone_reset_under_a_running_daemon_is_taken_again(make_host):
    host = make_host()
    assert not _run(host)["failed"]
    rc, dummy, err = host.smi(["-i", "1", "-c", "DEFAULT"])
    assert rc == 0, err
    checked = _run(host, check_mode=True)
    assert checked["changed"] and host.modes()[1] == "Default"
    result = _run(host)
    assert not result["failed"], result["msg"]
    assert result["changed"] and result["daemons"][0]["action"] == "none"
    assert host.modes() == ["Exclusive_Process"] * 4
    assert not _run(host)["changed"]


def test_check_mode_on_a_fresh_host_writes_and_starts_nothing(make_host):
    host = make_host()
    result = _run(host, check_mode=True)
    assert not result["failed"] and result["changed"], result
    assert host.files() == [] and host.calls == [] and host.daemons() == []
    assert host.modes() == ["Default"] * 4
    assert result["daemons"][0]["action"] == "started" and result["daemons"][0]["verified"] is None
    assert UNIT_PATH in [entry["after_header"] for entry in result["diff"]]


def test_unknown_gpu_fails_before_any_file_exists(make_host):
    host = make_host()
    result = _run(host, gpu_sets={"left": [0, 9]})
    assert result["failed"] and result["msg"].startswith("nothing was changed: mps_gpu_sets.left: GPU 9 is not on this host")
    assert "3 (%s)" % host.gpus()[3]["uuid"] in result["msg"]
    assert host.files() == [] and host.calls == []


def test_mig_gpu_fails_unless_allowed(make_host):
    host = make_host("a100_8x_mig", edit=enable_mig)
    refused = _run(host, gpu_sets={"left": [0, 1]})
    assert refused["failed"] and "GPU 0 (%s) is in MIG mode" % host.gpus()[0]["uuid"] in refused["msg"]
    assert "mps_allow_mig" in refused["msg"] and "GPU 1 " not in refused["msg"]
    assert host.files() == [] and host.calls == []
    allowed = _run(host, gpu_sets={"left": [0, 1]}, allow_mig=True)
    assert not allowed["failed"], allowed["msg"]
    assert allowed["daemons"][0]["unit"] == "gpuops-mps-left.service" and len(allowed["daemons"][0]["gpus"]) == 2


def test_pre_volta_gpus_get_no_multiuser_server_and_a_warning(make_host):
    def pascal(state):
        single_gpu("Tesla P100-PCIE-16GB", "00000000:04:00.0")(state)
        state["gpus"][0]["mig"] = None
    host = make_host(edit=pascal)
    result = _run(host)
    assert not result["failed"], result["msg"]
    assert result["daemons"][0]["multiuser_server"] is False and result["daemons"][0]["action"] == "started"
    assert _lines(host.text(UNIT_PATH), "ExecStart") == [MPS_CONTROL + " -d"]
    assert [entry["multiuser"] for entry in host.daemons()] == [False]
    assert any("without -multiuser-server" in warning and "GPU 0 (%s)" % host.gpus()[0]["uuid"] in warning
               and "older than Volta" in warning for warning in result["warnings"]), result["warnings"]
    quiet = _run(host, multiuser_server=False)
    assert not quiet["changed"] and quiet["warnings"] == []


def _prohibited(state):
    state["gpus"][1]["compute_mode"] = "Prohibited"


def test_absent_stops_the_daemon_restores_the_modes_and_removes_everything(make_host):
    host = make_host(edit=_prohibited)
    uuids = [gpu["uuid"] for gpu in host.gpus()]
    assert not _run(host)["failed"]
    assert json.loads(host.text(mps.MODES_RECORD_PATH))[uuids[1]] == "Prohibited"
    assert host.modes() == ["Exclusive_Process"] * 4
    host.calls[:] = []
    result = _run(host, state="absent")
    assert not result["failed"] and result["changed"], result
    assert result["removed"] == ["all"] and host.daemons() == []
    # The unit's ExecStopPost set each GPU back to the mode it had before MPS.
    assert host.calls == ["stop " + UNIT] + ["nvidia-smi -i %s -c %s" % (uuid, mode) for uuid, mode in zip(
        uuids, ["DEFAULT", "PROHIBITED", "DEFAULT", "DEFAULT"])] + ["disable " + UNIT, "daemon-reload"]
    assert host.modes() == ["Default", "Prohibited", "Default", "Default"]
    # Only the logs stay, with the record that their folders are the module's own.
    assert [name for name in host.files() if not os.path.isdir(host.path(name))] == [
        mps.FOLDERS_RECORD_PATH.lstrip("/"), "var/log/nvidia-mps/all/control.log"]
    assert json.loads(host.text(mps.FOLDERS_RECORD_PATH)) == {"folders": ["/var/log/nvidia-mps", "/var/log/nvidia-mps/all"]}
    assert not os.path.exists(host.path("/run/nvidia-mps"))
    again = _run(host, state="absent")
    assert not again["failed"] and not again["changed"], again


def test_absent_restores_the_modes_itself_when_the_daemon_is_gone(make_host):
    host = make_host(edit=_prohibited)
    uuids = [gpu["uuid"] for gpu in host.gpus()]
    assert not _run(host)["failed"]
    api.stop_daemons(host.state)
    host.calls[:] = []
    result = _run(host, state="absent")
    assert not result["failed"], result["msg"]
    assert result["compute_modes_restored"] == dict(zip(uuids, ["Default", "Prohibited", "Default", "Default"]))
    assert "nvidia-smi -i %s -c PROHIBITED" % uuids[1] in host.calls and not any(c.startswith("stop") for c in host.calls)
    assert host.modes() == ["Default", "Prohibited", "Default", "Default"]
    assert not os.path.exists(host.path(mps.MODES_RECORD_PATH)) and not os.path.exists(host.path(UNIT_PATH))


def test_restart_with_clients_on_the_gpus_is_refused_without_force(make_host):
    host = make_host()
    assert not _run(host)["failed"]
    unit_before = host.text(UNIT_PATH)
    host.edit(_add_client(2))
    host.calls[:] = []
    for attempt in range(2):
        refused = _run(host, multiuser_server=False)
        assert refused["failed"], "attempt %d: %s" % (attempt, refused)
        assert "MPS daemon all must restart" in refused["msg"] and "nothing was restarted" in refused["msg"]
        assert "pid %d (python3) on %s" % (CLIENT_PID, host.gpus()[2]["uuid"]) in refused["msg"]
        assert "mps_force_restart" in refused["msg"]
        # The unit stays as the running daemon knows it, so the next run still restarts it.
        assert host.text(UNIT_PATH) == unit_before
    assert not any(call.startswith("restart") for call in host.calls)
    assert [entry["multiuser"] for entry in host.daemons()] == [True]
    forced = _run(host, multiuser_server=False, force=True)
    assert not forced["failed"], forced["msg"]
    assert forced["daemons"][0]["action"] == "restarted" and "restart " + UNIT in host.calls
    assert [entry["multiuser"] for entry in host.daemons()] == [False]


def test_a_unit_whose_ordering_alone_changed_is_rewritten_without_a_restart(make_host):
    host = make_host()
    assert not _run(host)["failed"]
    unit = host.text(UNIT_PATH)
    # The unit an earlier release wrote: no After= on Fabric Manager.
    with open(host.path(UNIT_PATH), "w", encoding="utf-8") as handle:
        handle.write(unit.replace(" nvidia-fabricmanager.service", ""))
    host.edit(_add_client(2))
    host.calls[:] = []
    result = _run(host)
    assert not result["failed"], result["msg"]
    assert result["changed"] and host.text(UNIT_PATH) == unit
    assert result["daemons"][0]["action"] != "restarted" and not any(call.startswith("restart") for call in host.calls)


def test_a_run_killed_between_the_new_unit_and_the_restart_leaves_the_restart_to_the_next_run(make_host):
    host = make_host()
    assert not _run(host)["failed"]

    def killed(systemctl):
        raise KeyboardInterrupt("the module's process dies after the unit is written")
    with mock.patch.object(FakeSystemctl, "daemon_reload", killed), pytest.raises(KeyboardInterrupt):
        _run(host, multiuser_server=False)
    assert [entry["multiuser"] for entry in host.daemons()] == [True]
    # The unit on disk is already the new one: only the record says the daemon does not run it yet.
    result = _run(host, multiuser_server=False)
    assert not result["failed"], result["msg"]
    assert result["daemons"][0]["action"] == "restarted" and [entry["multiuser"] for entry in host.daemons()] == [False]
    assert not os.path.exists(host.path("/var/lib/gpuops-hardening/mps-restart-pending.json"))
    assert not _run(host, multiuser_server=False)["changed"]


def test_a_stop_with_clients_is_refused_without_force(make_host):
    host = make_host()
    assert not _run(host)["failed"]
    host.edit(_add_client(0))
    refused = _run(host, state="absent")
    assert refused["failed"] and "MPS daemon all must stop" in refused["msg"] and "nothing was stopped" in refused["msg"]
    assert os.path.exists(host.path(UNIT_PATH)) and len(host.daemons()) == 1
    forced = _run(host, state="absent", force=True)
    assert not forced["failed"] and forced["removed"] == ["all"] and host.daemons() == []


def test_a_set_left_out_is_removed_and_its_gpus_set_back(make_host):
    host = make_host(edit=_prohibited)
    uuids = [gpu["uuid"] for gpu in host.gpus()]
    assert not _run(host, gpu_sets={"left": [0, 1], "right": [2, 3]})["failed"]
    assert not os.path.exists(host.path(mps.PROFILE_PATH))
    result = _run(host, gpu_sets={"right": [2, 3]})
    assert not result["failed"], result["msg"]
    assert result["removed"] == ["left"] and [entry["name"] for entry in result["daemons"]] == ["right"]
    assert host.modes() == ["Default", "Prohibited", "Exclusive_Process", "Exclusive_Process"]
    assert json.loads(host.text(mps.MODES_RECORD_PATH)) == {uuids[2]: "Default", uuids[3]: "Default"}
    assert not os.path.exists(host.path("/etc/systemd/system/gpuops-mps-left.service"))
    assert "CUDA_MPS_PIPE_DIRECTORY=/run/nvidia-mps/right" in host.text(mps.PROFILE_PATH)


def test_a_pipe_moved_elsewhere_leaves_no_old_directory(make_host):
    host = make_host()
    assert not _run(host)["failed"]
    result = _run(host, pipe_directory="/run/mps")
    assert not result["failed"], result["msg"]
    assert result["daemons"][0]["action"] == "restarted"
    assert not os.path.exists(host.path("/run/nvidia-mps/all"))
    assert os.path.isdir(host.path("/run/mps/all"))
    assert _ask(host, "get_default_active_thread_percentage", pipe="/run/mps/all") == "100.0"


@pytest.mark.parametrize("missing", ["nvidia-smi", "nvidia-cuda-mps-control"])
def test_a_host_without_the_tools_fails_or_is_skipped(make_host, missing):
    host = make_host()
    host.missing.add(missing)
    failed = _run(host)
    assert failed["failed"] and failed["msg"].startswith(missing + " not found") and "mps_require_gpu" in failed["msg"]
    skipped = _run(host, require_gpu=False)
    assert not skipped["failed"] and not skipped["changed"] and skipped["skipped_reason"] == missing + " not found"
    assert host.files() == [] and host.calls == []


def test_without_systemd_tmpfiles_the_unit_does_not_call_it(make_host):
    host = make_host()
    host.missing.add("systemd-tmpfiles")
    assert not _run(host)["failed"]
    assert not any("tmpfiles" in line for line in _lines(host.text(UNIT_PATH), "ExecStartPre"))
    assert os.path.exists(host.path(mps.TMPFILES_PATH))


def test_a_masked_daemon_unit_is_refused_and_left_masked(make_host):
    host = make_host()
    os.makedirs(os.path.dirname(host.path(UNIT_PATH)))
    os.symlink(os.devnull, host.path(UNIT_PATH))
    before = host.files()
    result = _run(host)
    assert result["failed"] and not result["changed"], result
    assert result["msg"] == ("MPS daemon unit is masked (%s -> /dev/null), nothing was changed. Unmask it (systemctl unmask), "
                             "or leave all out of the GPU sets (mps_gpu_sets in the role)" % UNIT_PATH)
    assert host.files() == before and host.calls == [] and host.modes() == ["Default"] * 4
    # state=absent does not take an operator's mask for a daemon of its own.
    removed = _run(host, state="absent")
    assert not removed["failed"] and not removed["changed"], removed
    assert os.readlink(host.path(UNIT_PATH)) == os.devnull


# Daemon names end up in unit names, paths and the unit's `sh -c '...'` lines.
BAD_DAEMON_NAMES = ["Left Set", "a'; reboot; '", "left\n", "../etc", "-left", "a" * 33]


@pytest.mark.parametrize("name", BAD_DAEMON_NAMES)
def test_a_bad_gpu_set_name_is_refused_before_any_change(make_host, name):
    host = make_host()
    result = _run(host, gpu_sets={name: [0]})
    assert result["failed"] and not result.get("changed"), result
    assert result["msg"].startswith("gpu_sets (mps_gpu_sets in the role): got %s; allowed: " % json.dumps(name)), result["msg"]
    assert "lower-case letters, digits, - and _" in result["msg"] and "nothing was changed" in result["msg"]
    assert host.files() == [] and host.calls == []


@pytest.mark.parametrize("name", BAD_DAEMON_NAMES + ["all", "left", "right_2", "gpu-0", "0", "a" * 32])
def test_the_role_refuses_exactly_the_gpu_set_names_the_module_refuses(name):
    """The role checks on the controller first; it must hold names to the module's one rule, no looser."""
    role_refuses = any(error.startswith("mps_gpu_sets: ") for error in role_rules.errors({"mps_gpu_sets": {name: [0]}}, None))
    assert role_refuses == (not mps.valid_daemon_name(name))


def _folder(host, path, mode):
    """A folder someone else made on the host, with its own mode."""
    os.makedirs(host.path(path))
    os.chmod(host.path(path), mode)


def _mode(host, path):
    return stat.S_IMODE(os.stat(host.path(path)).st_mode)


@pytest.mark.parametrize("option", ["pipe_directory", "log_directory"])
def test_an_existing_folder_the_module_did_not_create_is_refused_and_left_as_it_was(make_host, option):
    host = make_host()
    _folder(host, "/srv/shared", 0o775)
    before = host.files()
    result = _run(host, **{option: "/srv/shared"})
    assert result["failed"] and not result["changed"], result
    assert result["msg"].startswith("%s (mps_%s in the role): /srv/shared exists and this module did not create it; "
                                    "nothing was changed. Allowed: " % (option, option)), result["msg"]
    assert "a folder that does not exist yet" in result["msg"]
    assert _mode(host, "/srv/shared") == 0o775 and host.files() == before and host.calls == []


@pytest.mark.parametrize("folder", ["/var/log", "/var/log/", "/run", "/", "/etc", "/var/lib/../log"])
def test_a_system_folder_is_refused_whether_or_not_it_exists(make_host, folder):
    host = make_host()
    _folder(host, "/var/log", 0o775)
    before = host.files()
    result = _run(host, log_directory=folder)
    assert result["failed"] and not result["changed"], result
    assert result["msg"].startswith("log_directory (mps_log_directory in the role): %s is a system folder" % folder)
    assert "/var/log" in result["msg"].partition("never ")[2], result["msg"]
    assert _mode(host, "/var/log") == 0o775 and host.files() == before and host.calls == []


def test_a_system_folder_an_earlier_run_took_over_is_still_refused(make_host):
    """Earlier versions wrote /var/log into their tmpfiles.d entry; that record makes it no folder of ours."""
    host = make_host()
    assert not _run(host)["failed"]
    with open(host.path(mps.TMPFILES_PATH), "a", encoding="utf-8") as handle:
        handle.write("d /var/log 0755 root root -\n")
    result = _run(host, log_directory="/var/log")
    assert result["failed"] and "/var/log is a system folder" in result["msg"], result


def test_an_existing_set_directory_the_module_did_not_create_is_refused(make_host):
    host = make_host()
    assert not _run(host)["failed"]
    _folder(host, "/var/log/nvidia-mps/left", 0o700)
    result = _run(host, gpu_sets={"left": [0]})
    assert result["failed"] and not result["changed"], result
    assert result["msg"].startswith("log_directory (mps_log_directory in the role): /var/log/nvidia-mps/left (the log "
                                    "directory of MPS daemon left) exists and this module did not create it"), result["msg"]
    assert _mode(host, "/var/log/nvidia-mps/left") == 0o700 and os.path.exists(host.path(UNIT_PATH))


def test_folders_the_module_created_stay_its_own_after_absent_and_after_a_set_is_dropped(make_host):
    host = make_host()
    assert not _run(host, gpu_sets={"left": [0], "right": [1]})["failed"]
    # right's log directory stays when right is dropped, and every log directory stays after absent.
    assert not _run(host, gpu_sets={"left": [0]})["failed"]
    assert not _run(host, state="absent")["failed"]
    again = _run(host, gpu_sets={"left": [0], "right": [1]})
    assert not again["failed"], again["msg"]
    assert not _run(host, gpu_sets={"left": [0], "right": [1]})["changed"]


def test_folders_named_in_the_modules_tmpfiles_entry_are_its_own(make_host):
    """A host an earlier version converged has the tmpfiles.d entry but no record of the folders."""
    host = make_host()
    assert not _run(host)["failed"]
    os.unlink(host.path(mps.FOLDERS_RECORD_PATH))
    result = _run(host)
    assert not result["failed"], result["msg"]
    assert json.loads(host.text(mps.FOLDERS_RECORD_PATH))["folders"] == [
        "/run/nvidia-mps", "/run/nvidia-mps/all", "/var/log/nvidia-mps", "/var/log/nvidia-mps/all"]


def test_a_folder_created_by_a_run_killed_before_its_tmpfiles_entry_is_still_its_own(make_host):
    host = make_host()

    def killed(converger, path, content, mode=0o644):
        if path == mps.TMPFILES_PATH:
            raise KeyboardInterrupt("the module's process dies before the tmpfiles.d entry is written")
        return write(converger, path, content, mode)
    write = mps_module.Converger.write
    with mock.patch.object(mps_module.Converger, "write", killed), pytest.raises(KeyboardInterrupt):
        _run(host)
    assert os.path.isdir(host.path("/var/log/nvidia-mps/all")) and not os.path.exists(host.path(mps.TMPFILES_PATH))
    result = _run(host)
    assert not result["failed"], result["msg"]


def test_absent_leaves_an_empty_pipe_folder_it_did_not_create(make_host):
    host = make_host()
    _folder(host, "/srv/empty", 0o755)
    result = _run(host, state="absent", pipe_directory="/srv/empty")
    assert not result["failed"] and not result["changed"], result
    assert os.path.isdir(host.path("/srv/empty"))
