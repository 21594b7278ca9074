# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Running external commands from modules: argv lists, C locale, and a timeout.

Every command is wrapped in coreutils ``timeout``: a hung tool (a wedged GPU driver,
say) ends the module with a clear error instead of blocking the play.

AnsibleModule.run_command polls the child twice once its pipes have closed; when the child
exits between the two polls, the loop selects on no pipes for a whole second (ansible-core
2.19 to 2.21, basic.py). A child that is a ``timeout`` wrapper exits a moment after its
pipes close, so on the GPU machine 4 of 11 timed runs of the facts module took a second
more (bench/results/2026-12-04-h200.md). run_argv gives run_command a steady poll (its
before_communicate_callback): a poll that found the child running answers so once more,
so the loop waits for the exit instead.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading

from ansible.module_utils.basic import AnsibleModule

TIMEOUT_RC = 124
KILLED_RC = 137

C_LOCALE = {"LC_ALL": "C", "LANG": "C", "LANGUAGE": "C"}


class CommandTimeout(Exception):
    """The command ran past its timeout and was stopped."""


def timeout_setting(module):
    """Where the timeout comes from, for messages: the module option, and the role variable that
    fills it when the role named it (timeout_variable): the operator raises that one."""
    variable = (getattr(module, "params", None) or {}).get("timeout_variable")
    return "the module's timeout option%s" % (", set by the role variable %s" % variable if variable else "")


def steady_poll(process):
    """Make process.poll() answer None once more after it found the process running.

    run_command checks "exited?" and then "still running?" with two polls; without this, an exit between them
    answers neither, and the loop waits a second on no pipes. A stale None costs at most one more turn of the loop.
    """
    poll = process.poll
    last = {"running": False}

    def steady():
        if last["running"]:
            last["running"] = False
            return None
        code = poll()
        last["running"] = code is None
        return code

    process.poll = steady


def run_argv(module, argv, environ_update=None, data=None):
    """(rc, stdout, stderr) of argv through run_command, with a steady poll and each word as written; data, with a
    newline added, is its stdin.

    A stand-in for AnsibleModule (a test's, the node call's FeatureRun) answers through its own run_command.
    """
    if not isinstance(module, AnsibleModule):
        return module.run_command(argv, environ_update=environ_update, data=data, check_rc=False)
    # expand_user_and_vars off: an argv word is passed as written, never with $VAR or ~ expanded.
    return module.run_command(argv, environ_update=environ_update, data=data, check_rc=False,
                              before_communicate_callback=steady_poll, expand_user_and_vars=False)


def _run_once(module, argv, timeout, data, environ):
    """(rc, stdout, stderr) of argv, or CommandTimeout raised."""
    timeout_bin = module.get_bin_path("timeout")
    full = list(argv)
    if timeout_bin:
        full = [timeout_bin, "--kill-after=5", "%ss" % int(timeout)] + full
    rc, out, err = run_argv(module, full, environ_update=dict(environ or {}, **C_LOCALE), data=data)
    if timeout_bin and rc in (TIMEOUT_RC, KILLED_RC):
        raise CommandTimeout("%s did not finish within %s seconds (%s)" % (" ".join(argv), timeout, timeout_setting(module)))
    return rc, out, err


def run(module, argv, timeout=30, check_rc=False, data=None, environ=None):
    """Run argv (a list, never a shell string) with a timeout.

    Returns (rc, stdout, stderr). Raises CommandTimeout when the command ran past
    ``timeout`` seconds. With ``check_rc`` a non-zero exit fails the module with
    the command's own error text. ``environ`` adds variables to the command's
    environment (the C locale always applies).
    """
    rc, out, err = _run_once(module, argv, timeout, data, environ)
    if check_rc and rc != 0:
        module.fail_json(
            msg="%s failed with exit code %s: %s" % (" ".join(argv), rc, (err or out).strip()),
            rc=rc, stdout=out, stderr=err, cmd=argv,
        )
    return rc, out, err


def run_outcome(module, argv, timeout=30):
    """run()'s (rc, stdout, stderr), or the CommandTimeout it raised, for callers that treat a hang as data."""
    try:
        return run(module, argv, timeout=timeout)
    except CommandTimeout as error:
        return error


def run_together(module, argvs, timeout=30):
    """Run independent commands at once, so the wait is the slowest one's, not the sum.

    Returns, in the order of ``argvs``, each command's run_outcome(). Any other
    exception, the SystemExit of a fail_json included, is raised again here, in the
    module's own thread.
    """
    outcomes = {}

    def run_one(position, argv):
        try:
            outcomes[position] = run_outcome(module, argv, timeout=timeout)
        except BaseException as error:  # pylint: disable=broad-exception-caught
            outcomes[position] = error

    threads = [threading.Thread(target=run_one, args=(position, argv)) for position, argv in enumerate(argvs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    in_order = [outcomes[position] for position in range(len(argvs))]
    for outcome in in_order:
        if isinstance(outcome, BaseException) and not isinstance(outcome, CommandTimeout):
            raise outcome
    return in_order
