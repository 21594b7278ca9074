# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""run and run_together: independent commands at once, each with its own outcome; an AnsibleModule's commands through
run_command with a steady poll."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.hardening.plugins.module_utils.commands import (
    CommandTimeout,
    run,
    run_together,
    steady_poll,
)


class Module:
    """The two AnsibleModule methods commands.run uses."""

    def __init__(self):
        self.params = {}

    @staticmethod
    def get_bin_path(name):
        return shutil.which(name)

    @staticmethod
    def run_command(argv, environ_update=None, data=None, check_rc=False):  # pylint: disable=unused-argument
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        return done.returncode, done.stdout, done.stderr


def _waits_for(mine, other):
    """A command that marks its start, then waits up to 20 s for the other's mark: it
    succeeds only when both run at the same time, whatever the machine's speed."""
    return ["sh", "-c", "touch %s; for i in $(seq 200); do [ -e %s ] && echo met && exit 0; sleep 0.1; done; exit 3"
            % (mine, other)]


def test_the_commands_overlap(tmp_path):
    first, second = str(tmp_path / "first"), str(tmp_path / "second")
    outcomes = run_together(Module(), [_waits_for(first, second), _waits_for(second, first)], timeout=30)
    assert outcomes == [(0, "met\n", ""), (0, "met\n", "")]


def test_a_hung_command_times_out_alone(tmp_path):
    outcomes = run_together(Module(), [["sleep", "30"], ["echo", "done"]], timeout=1)
    assert isinstance(outcomes[0], CommandTimeout) and "sleep 30 did not finish within 1 seconds" in str(outcomes[0])
    assert outcomes[1] == (0, "done\n", "")


def test_a_failing_module_call_is_raised_in_the_callers_thread():
    class Failing(Module):
        @staticmethod
        def run_command(argv, environ_update=None, data=None, check_rc=False):  # pylint: disable=unused-argument
            raise SystemExit(1)

    with pytest.raises(SystemExit):
        run_together(Failing(), [["true"], ["true"]])


@pytest.fixture(name="ansible_module")
def fixture_ansible_module():
    with patch_module_args({}):
        return AnsibleModule(argument_spec={})


class Process:
    """A process whose poll() answers from a script: None while it runs, its code once it exited."""

    def __init__(self, answers):
        self.answers = list(answers)

    def poll(self):
        return self.answers.pop(0)


def test_a_poll_that_found_the_process_running_answers_so_once_more():
    """The race run_command loses: running at its first poll, exited at its second."""
    process = Process([None, 0, 0])
    steady_poll(process)
    assert [process.poll(), process.poll(), process.poll()] == [None, None, 0]


def test_an_exit_is_answered_at_once():
    process = Process([3, 3])
    steady_poll(process)
    assert [process.poll(), process.poll()] == [3, 3]


def test_an_ansible_module_runs_a_command_with_its_data_and_the_c_locale(ansible_module):
    assert run(ansible_module, ["sh", "-c", "cat; printenv LC_ALL; echo warned >&2; exit 4"], data="input") == (
        4, "input\nC\n", "warned\n")


def test_a_child_that_outlives_its_closed_pipes_is_waited_for(ansible_module):
    """The shape of the race: the pipes close, the process exits a moment later."""
    assert run(ansible_module, ["sh", "-c", "exec >&- 2>&-; sleep 0.2; exit 3"]) == (3, "", "")


def test_an_ansible_modules_hung_command_times_out(ansible_module):
    with pytest.raises(CommandTimeout, match="sleep 30 did not finish within 1 seconds"):
        run(ansible_module, ["sleep", "30"], timeout=1)


def test_argv_words_reach_the_command_as_written(ansible_module, monkeypatch):
    """run_command would expand $VAR and ~ in each word with the module's environment; an argv list is literal."""
    monkeypatch.setenv("GPUOPS_WORD", "expanded")
    assert run(ansible_module, ["printf", "%s|%s", "$GPUOPS_WORD", "~"]) == (0, "$GPUOPS_WORD|~", "")
