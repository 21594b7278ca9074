# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node side of one call: the host object every feature engine in that call shares.

A feature engine (module_utils/engines/) is plain Python, converge(spec, host, check_mode) -> result.
It reaches the node only through the host: commands (argv lists, the C locale and a timeout, through
commands.run) and file writes (managed_files). Every read is made when the engine asks: an engine sees
the node as the engines before it left it, and nothing is kept past the call. The one exception is an
nvidia-smi survey read, answered by the same read made earlier in the call while nothing has changed
the node since (shared_reads.py); polls never are.

host.feature() gives an engine its own view of the call (FeatureRun): its spec, its check mode, its
warnings, and a failure that names the feature. FeatureRun offers the handful of AnsibleModule methods
the shared helpers use (run_command, get_bin_path, fail_json, warn, check_mode, params), so a helper
serves a feature module and the node call alike.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpuops.hardening.plugins.module_utils.commands import run_argv
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.shared_reads import SharedReads
from ansible_collections.gpuops.hardening.plugins.module_utils.unit_record import STATE_DIR

# The replay record of gpuops.hardening 1.x, which 2.0 no longer reads (CHANGELOG: 2.0.0).
LEGACY_RECORD_PATH = STATE_DIR + "/converged-calls.json"


class FeatureFailed(Exception):
    """An engine refused or failed; msg says why, result holds what it had found and done so far."""

    def __init__(self, msg, result):
        super(FeatureFailed, self).__init__(msg)
        self.msg = msg
        self.result = result


class NodeHost(object):
    """One process's reach into the node, shared by every engine of the call."""

    def __init__(self, module):
        self.module = module
        self.warnings = []
        # Each feature's result by name, as the call records it: a later feature may build on an earlier one
        # (the MIG boot service records the layout the MIG feature resolved).
        self.results = {}
        # Each feature's facts by name (a feature's result as recorded in results leaves them out).
        self.facts = {}
        self.reads = SharedReads()

    def run_command(self, args, environ_update=None, data=None, check_rc=False):
        """AnsibleModule.run_command's shape, as commands.run calls it (check_rc is always false there)."""
        if check_rc:
            raise ValueError("NodeHost.run_command leaves the exit code to commands.run")
        self.reads.seen(args)
        return run_argv(self.module, args, environ_update=environ_update, data=data)

    def feature(self, name, spec, check_mode):
        """The view of this call one engine works through."""
        return FeatureRun(self, name, spec, check_mode)

    def remove_legacy_record(self, root, check_mode):
        """Remove 1.x's replay record; returns its path when there was one (and says so), else None."""
        path = under_root(root, LEGACY_RECORD_PATH)
        if not os.path.lexists(path):
            return None
        if not check_mode:
            os.unlink(path)
        self.warnings.append("%s %s: the record of calls gpuops.hardening 1.x replayed; 2.0 converges every call "
                             "and never reads it" % ("would remove" if check_mode else "removed", path))
        return path


class FeatureRun(object):
    """One engine's view of the call: its spec and check mode, the host's commands, its warnings, its failure."""

    _diff = True  # engines always compute their diff; the caller keeps it only when asked (--diff)

    def __init__(self, host, name, spec, check_mode):
        self.host = host
        self.name = name
        self.params = spec
        self.check_mode = check_mode

    def warn(self, msg):
        self.host.warnings.append(msg)

    def fail_json(self, msg, **result):
        raise FeatureFailed(msg, result)

    def run_command(self, args, **kwargs):
        return self.host.run_command(args, **kwargs)

    def get_bin_path(self, arg, required=False, opt_dirs=None):
        path = self.host.module.get_bin_path(arg, required=False, opt_dirs=opt_dirs)
        if required and not path:
            self.fail_json(msg="Failed to find required executable %s in paths: %s" % (arg, os.environ.get("PATH", "")))
        return path

    # File ownership and moves: AnsibleModule's own, which honour the call's check mode and SELinux contexts.
    def atomic_move(self, *args, **kwargs):
        self.host.reads.forget()
        return self.host.module.atomic_move(*args, **kwargs)

    def set_owner_if_different(self, *args, **kwargs):
        return self.host.module.set_owner_if_different(*args, **kwargs)

    def set_group_if_different(self, *args, **kwargs):
        return self.host.module.set_group_if_different(*args, **kwargs)
