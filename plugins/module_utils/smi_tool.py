# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one way an engine runs nvidia-smi: the binary found once per feature, argv lists in the C locale with the
feature's timeout (commands.run), and one wording for a failure or a hang, naming the command.

call() and outcome() always run nvidia-smi: the engines poll it after their own changes (persistence mode read
back, MIG processes ended). read() is for an engine's survey of the node before it changes anything: in a node
call it takes the same read made earlier in the call while nothing has changed the node since (shared_reads.py).
Every successful read is recorded for that. Pure parsing of what it prints is module_utils/nvidia_smi.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.module_utils.commands import CommandTimeout, run, run_together


class NvidiaSmiFailed(Exception):
    """nvidia-smi exited with an unexpected status or ran past the timeout; the message says which and names it."""


class NvidiaSmi(object):
    """nvidia-smi for one feature: path (None when the node has no driver), call(), outcome() and together()."""

    def __init__(self, feature, path=None, opt_dirs=None):
        self.feature = feature
        self.path = path or feature.get_bin_path("nvidia-smi", opt_dirs=opt_dirs)

    @property
    def timeout(self):
        return self.feature.params["timeout"]

    def argv(self, args):
        return [self.path] + list(args)

    @property
    def _reads(self):
        """The call's shared reads (a NodeHost's), or None outside one."""
        return getattr(getattr(self.feature, "host", None), "reads", None)

    def call(self, args, allowed_rc=(0,)):
        """stdout of nvidia-smi ARGS, run now; NvidiaSmiFailed when it fails or hangs."""
        return self._checked(args, self.outcome(args), allowed_rc)

    def read(self, args, allowed_rc=(0,)):
        """call(), or, in a node call, the same read made since the node last changed: for a survey, never a poll."""
        return self._checked(args, self.outcome(args, survey=True), allowed_rc)

    def _checked(self, args, outcome, allowed_rc):
        if isinstance(outcome, CommandTimeout):
            raise NvidiaSmiFailed("%s; the NVIDIA driver is not answering" % outcome)
        rc, out, err = outcome
        if rc not in allowed_rc:
            raise NvidiaSmiFailed("nvidia-smi %s failed with exit code %s: %s" % (" ".join(args), rc, (err or out).strip()))
        return out

    def outcome(self, args, survey=False):
        """(rc, stdout, stderr) of nvidia-smi ARGS, or the CommandTimeout: for a read whose failure is not fatal. Run
        now, or, with survey, taken from the same read made since the node last changed."""
        return self.together(args, survey=survey)[0]

    def together(self, *calls, **options):
        """The outcomes of several reads started at once, each as outcome() gives it; with survey=True, those
        recorded since the node last changed are taken as read() takes them."""
        reads = self._reads
        argvs = [self.argv(args) for args in calls]
        found = [reads.recorded(argv) if reads is not None and options.get("survey") else None for argv in argvs]
        missing = [argv for argv, outcome in zip(argvs, found) if outcome is None]
        if reads is not None:
            for argv in missing:
                reads.seen(argv)  # a change forgets what was read before it
        fresh = iter(self._run(missing))
        outcomes = []
        for argv, outcome in zip(argvs, found):
            if outcome is None:
                outcome = next(fresh)
                if reads is not None:
                    reads.record(argv, outcome)
            outcomes.append(outcome)
        return outcomes

    def _run(self, argvs):
        """Each argv's run_outcome(): one in this thread, several at once."""
        if len(argvs) != 1:
            return run_together(self.feature, argvs, timeout=self.timeout) if argvs else []
        try:
            return [run(self.feature, argvs[0], timeout=self.timeout)]
        except CommandTimeout as error:
            return [error]
