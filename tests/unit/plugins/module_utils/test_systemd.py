# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Systemctl: a hung systemctl ends the module with a message."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils.commands import TIMEOUT_RC
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import Systemctl


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
