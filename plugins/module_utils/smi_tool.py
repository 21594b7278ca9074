# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one way an engine runs nvidia-smi: the binary found once per feature, argv lists in the C locale with the
feature's timeout (commands.run), and one wording for a failure or a hang, naming the command.

Every read is made when the engine asks for it, never answered from an earlier one: the engines poll nvidia-smi
after their own changes (persistence mode read back, MIG processes ended), and the node changes under a call.
Pure parsing of what it prints is module_utils/nvidia_smi.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.module_utils.commands import CommandTimeout, run, run_outcome, run_together


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

    def call(self, args, allowed_rc=(0,)):
        """stdout of nvidia-smi ARGS; NvidiaSmiFailed when it fails or hangs."""
        try:
            rc, out, err = run(self.feature, self.argv(args), timeout=self.timeout)
        except CommandTimeout as error:
            raise NvidiaSmiFailed("%s; the NVIDIA driver is not answering" % error)
        if rc not in allowed_rc:
            raise NvidiaSmiFailed("nvidia-smi %s failed with exit code %s: %s" % (" ".join(args), rc, (err or out).strip()))
        return out

    def outcome(self, args):
        """(rc, stdout, stderr) of nvidia-smi ARGS, or the CommandTimeout: for a read whose failure is not fatal."""
        return run_outcome(self.feature, self.argv(args), timeout=self.timeout)

    def together(self, *calls):
        """The outcomes of several reads started at once (each as outcome() gives it)."""
        return run_together(self.feature, [self.argv(args) for args in calls], timeout=self.timeout)
