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

    def _recorded(self, argv):
        reads = self._reads
        return reads.recorded(argv) if reads is not None else None

    def _record(self, argv, outcome):
        if self._reads is not None:
            self._reads.record(argv, outcome)
        return outcome

    def call(self, args, allowed_rc=(0,)):
        """stdout of nvidia-smi ARGS, run now; NvidiaSmiFailed when it fails or hangs."""
        return self._checked(args, self.outcome(args), allowed_rc)

    def read(self, args, allowed_rc=(0,)):
        """call(), or, in a node call, the same read made since the node last changed: for a survey, never a poll."""
        recorded = self._recorded(self.argv(args))
        return self._checked(args, recorded or self.outcome(args), allowed_rc)

    def _checked(self, args, outcome, allowed_rc):
        if isinstance(outcome, CommandTimeout):
            raise NvidiaSmiFailed("%s; the NVIDIA driver is not answering" % outcome)
        rc, out, err = outcome
        if rc not in allowed_rc:
            raise NvidiaSmiFailed("nvidia-smi %s failed with exit code %s: %s" % (" ".join(args), rc, (err or out).strip()))
        return out

    def outcome(self, args):
        """(rc, stdout, stderr) of nvidia-smi ARGS run now, or the CommandTimeout: for a read whose failure is not
        fatal."""
        argv = self.argv(args)
        if self._reads is not None:
            self._reads.seen(argv)  # a change forgets what was read before it
        try:
            return self._record(argv, run(self.feature, argv, timeout=self.timeout))
        except CommandTimeout as error:
            return error

    def together(self, *calls, **options):
        """The outcomes of several reads started at once (each as outcome() gives it); with survey=True, those
        recorded since the node last changed are taken as read() takes them."""
        argvs = [self.argv(args) for args in calls]
        found = [self._recorded(argv) if options.get("survey") else None for argv in argvs]
        missing = [argv for argv, outcome in zip(argvs, found) if outcome is None]
        for argv in missing:
            if self._reads is not None:
                self._reads.seen(argv)
        fresh = iter(run_together(self.feature, missing, timeout=self.timeout) if missing else [])
        return [outcome if outcome is not None else self._record(argv, next(fresh)) for argv, outcome in zip(argvs, found)]
