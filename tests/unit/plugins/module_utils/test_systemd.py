# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Systemctl: a hung systemctl ends the module with a message."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils.commands import TIMEOUT_RC
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import Systemctl, journal_tail


class Failed(Exception):
    pass


class HungModule:
    """An AnsibleModule stand-in whose every command runs past its timeout."""

    check_mode = False

    def __init__(self):
        self.argv = []

    def get_bin_path(self, name):
        return "/usr/bin/" + name

    def run_command(self, argv, **kwargs):
        self.argv.append(argv)
        return TIMEOUT_RC, "", ""

    def fail_json(self, msg, **kwargs):
        raise Failed(msg)


@pytest.mark.parametrize("call", [
    lambda systemctl: systemctl.is_enabled("gpuops-thp.service"),
    lambda systemctl: systemctl.enable("gpuops-thp.service"),
    lambda systemctl: systemctl.disable("gpuops-thp.service"),
    lambda systemctl: systemctl.show([], ["DefaultLimitMEMLOCK"]),
    lambda systemctl: systemctl.start("nvidia-persistenced.service", restart=True),
])
def test_timeout_fails_with_the_command_and_the_limit(call):
    module = HungModule()
    with pytest.raises(Failed) as failure:
        call(Systemctl(module, timeout=7))
    assert "/usr/bin/systemctl" in str(failure.value) and "within 7 seconds" in str(failure.value)
    assert module.argv[0][:3] == ["/usr/bin/timeout", "--kill-after=5", "7s"]


class AnsweringModule(HungModule):
    """systemctl answers is-enabled with a fixed state and accepts every change."""

    def __init__(self, state, check_mode=False):
        super().__init__()
        self.state = state
        self.check_mode = check_mode

    def run_command(self, argv, **kwargs):
        self.argv.append(argv[3:])
        if argv[4] == "is-enabled":
            return (0 if self.state == "enabled" else 1), self.state + "\n", ""
        return 0, "", ""


@pytest.mark.parametrize("state, method, changed, calls", [
    ("enabled", "disable", True, [["/usr/bin/systemctl", "is-enabled", "u"], ["/usr/bin/systemctl", "disable", "u"]]),
    ("disabled", "disable", False, [["/usr/bin/systemctl", "is-enabled", "u"]]),
    ("disabled", "enable", True, [["/usr/bin/systemctl", "is-enabled", "u"], ["/usr/bin/systemctl", "enable", "u"]]),
    ("enabled", "enable", False, [["/usr/bin/systemctl", "is-enabled", "u"]]),
])
def test_enable_and_disable_change_only_what_differs(state, method, changed, calls):
    module = AnsweringModule(state)
    assert getattr(Systemctl(module), method)("u") is changed
    assert module.argv == calls


def test_disable_in_check_mode_only_asks():
    module = AnsweringModule("enabled", check_mode=True)
    assert Systemctl(module).disable("u") is True
    assert module.argv == [["/usr/bin/systemctl", "is-enabled", "u"]]


@pytest.mark.parametrize("restart, verb", [(False, "start"), (True, "restart")])
def test_start_and_restart(restart, verb):
    module = AnsweringModule("enabled")
    Systemctl(module).start("u", restart=restart)
    assert module.argv == [["/usr/bin/systemctl", verb, "u"]]


def test_start_in_check_mode_runs_nothing():
    module = AnsweringModule("enabled", check_mode=True)
    Systemctl(module).start("u", restart=True)
    assert module.argv == []


def test_a_failed_start_fails_with_systemctls_words():
    class Refusing(AnsweringModule):
        def run_command(self, argv, **kwargs):
            return 1, "", "Job for u failed because the control process exited with error code.\n"

    with pytest.raises(Failed) as failure:
        Systemctl(Refusing("enabled")).start("u")
    assert str(failure.value) == "systemctl start u failed: Job for u failed because the control process exited with error code."


class ScriptedModule(HungModule):
    """Answers each command by its program and first word (after the timeout wrapper);
    any other command runs past its timeout. Programs in missing are not installed."""

    def __init__(self, answers, missing=()):
        super().__init__()
        self.answers = answers
        self.missing = missing
        self.locales = []

    def get_bin_path(self, name):
        return None if name in self.missing else super().get_bin_path(name)

    def run_command(self, argv, **kwargs):
        self.argv.append(argv)
        self.locales.append(kwargs["environ_update"]["LC_ALL"])
        return self.answers.get(tuple(argv[3:5]), (TIMEOUT_RC, "", ""))


STOPPING = {
    ("/usr/bin/systemctl", "show"): (0, "ActiveState=deactivating\nSubState=stop-sigterm\nMainPID=4242\n", ""),
    ("/usr/bin/journalctl", "-u"): (0, "Stopping MPS daemon infer-b...\nExecStop: quit sent\n", ""),
}
HUNG_STOP = "/usr/bin/systemctl stop gpuops-mps-infer-b.service did not finish within 7 seconds (the module's timeout option)"


def failure_of_stop(module):
    with pytest.raises(Failed) as failure:
        Systemctl(module, timeout=7).try_verb("stop", "gpuops-mps-infer-b.service")
    return str(failure.value)


def test_a_hung_stop_names_the_units_state_main_pid_and_journal():
    module = ScriptedModule(STOPPING)
    assert failure_of_stop(module) == (
        HUNG_STOP + "; gpuops-mps-infer-b.service is deactivating (stop-sigterm), main pid 4242; "
        "its last journal lines:\nStopping MPS daemon infer-b...\nExecStop: quit sent")
    # Each read has its own short limit, in the C locale like every command.
    assert sorted(argv[2:] for argv in module.argv[1:]) == [
        ["10s", "/usr/bin/journalctl", "-u", "gpuops-mps-infer-b.service", "-n", "10", "--no-pager"],
        ["10s", "/usr/bin/systemctl", "show", "--property=ActiveState,SubState,MainPID", "gpuops-mps-infer-b.service"],
    ]
    assert module.locales == ["C"] * 3


def test_reads_that_fail_or_hang_are_said_to():
    module = ScriptedModule({("/usr/bin/journalctl", "-u"): (1, "", "Failed to get journal access: Permission denied\n")})
    assert failure_of_stop(module) == (
        HUNG_STOP + "; the state of gpuops-mps-infer-b.service is unknown (systemctl show did not answer within 10 seconds); "
        "its journal could not be read (journalctl failed with exit code 1: Failed to get journal access: Permission denied)")


def test_without_journalctl_the_state_alone():
    module = ScriptedModule({("/usr/bin/systemctl", "show"): (0, "ActiveState=active\nSubState=running\nMainPID=0\n", "")},
                            missing=("journalctl",))
    assert failure_of_stop(module) == (
        HUNG_STOP + "; gpuops-mps-infer-b.service is active (running), main pid none; no journalctl to read its journal")


def test_a_hung_query_reads_nothing_more():
    module = ScriptedModule(STOPPING)
    with pytest.raises(Failed) as failure:
        Systemctl(module, timeout=7).is_enabled("gpuops-thp.service")
    assert str(failure.value).endswith("; systemd or D-Bus is not answering")
    assert len(module.argv) == 1


def test_a_units_journal_tail_for_a_failure_message():
    module = ScriptedModule({("/usr/bin/journalctl", "-u"): (0, "fabric training failed\n", "")})
    assert journal_tail(module, "nvidia-fabricmanager.service") == "its last journal lines:\nfabric training failed"
    assert [argv[2:] for argv in module.argv] == [
        ["10s", "/usr/bin/journalctl", "-u", "nvidia-fabricmanager.service", "-n", "10", "--no-pager"]]
    assert journal_tail(ScriptedModule({}, missing=("journalctl",)), "nvidia-fabricmanager.service") == (
        "no journalctl to read its journal")
