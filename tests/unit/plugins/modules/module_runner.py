# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a module's main() in-process and capture what it would return to Ansible."""

from __future__ import annotations

from unittest import mock

from ansible.module_utils import basic
from ansible.module_utils.common import warnings
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.hardening.plugins.module_utils.run_lock import release_held


# The node lock file (below root) and its folders: every module that changes the host creates them,
# and none manages them; tests listing the files a module wrote leave them out.
NODE_LOCK_PATHS = ("run", "run/lock", "run/lock/gpuops-hardening.lock")


class ModuleExit(Exception):
    """Raised in place of exit_json/fail_json; carries the result."""

    def __init__(self, result, failed):
        super().__init__(result.get("msg", ""))
        self.result = result
        self.failed = failed


def _with_warnings(result):
    """Attach the warnings the module raised, as AnsibleModule would."""
    result["warnings"] = list(warnings.get_warning_messages())
    return result


def _exit_json(self, **kwargs):  # pylint: disable=unused-argument
    kwargs.setdefault("changed", False)
    raise ModuleExit(_with_warnings(kwargs), failed=False)


def _fail_json(self, msg, **kwargs):  # pylint: disable=unused-argument
    kwargs["msg"] = msg
    kwargs["failed"] = True
    raise ModuleExit(_with_warnings(kwargs), failed=True)


def run_module(main, args, check_mode=False, diff=False):
    """Call main() with args; returns the result dict (``failed`` set on failure)."""
    full_args = dict(args)
    full_args["_ansible_check_mode"] = check_mode
    full_args["_ansible_diff"] = diff
    # Warnings are process-global in AnsibleModule; start each run clean.
    with mock.patch.dict(warnings._global_warnings, clear=True), \
            patch_module_args(full_args), \
            mock.patch.object(basic.AnsibleModule, "exit_json", _exit_json), \
            mock.patch.object(basic.AnsibleModule, "fail_json", _fail_json):
        try:
            main()
        except ModuleExit as outcome:
            result = outcome.result
            result.setdefault("failed", outcome.failed)
            return result
        finally:
            # A real module's process ends here, and the kernel drops its node lock with it.
            release_held()
    raise AssertionError("module returned without exit_json or fail_json")
