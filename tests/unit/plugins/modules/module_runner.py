# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a module's main() in-process and capture what it would return to Ansible."""

from __future__ import annotations

import os

from ansible.module_utils import basic
from ansible.module_utils.common import warnings
# The one public way to hand arguments to an AnsibleModule made in this process (ansible-core 2.19 and later);
# it sets what AnsiballZ sets for a module process, and nothing else.
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.hardening.plugins.module_utils.run_lock import LOCK_PATH, locks_held, release_held

# The node lock file (below root) and its folders: every module that changes the host creates them,
# and none manages them; tests listing the files a module wrote leave them out.
NODE_LOCK_PATHS = ("run", os.path.dirname(LOCK_PATH).lstrip("/"), LOCK_PATH.lstrip("/"))


class ModuleExit(Exception):
    """Raised in place of exit_json/fail_json; carries the result."""

    def __init__(self, result):
        super(ModuleExit, self).__init__(result.get("msg", ""))
        self.result = result


def _with_warnings(result):
    """The warnings the module raised, attached as AnsibleModule attaches them."""
    result["warnings"] = list(warnings.get_warning_messages())
    return result


def _exit_json(self, **result):  # pylint: disable=unused-argument
    result.setdefault("changed", False)
    raise ModuleExit(_with_warnings(result))


def _fail_json(self, msg, **result):  # pylint: disable=unused-argument
    result.update(msg=msg, failed=True)
    raise ModuleExit(_with_warnings(result))


def run_in_process(main, args, check_mode=False, diff=False):
    """Call a module's main() with args as Ansible would; returns its result (``failed`` set on failure)."""
    full_args = dict(args)
    full_args["_ansible_check_mode"] = check_mode
    full_args["_ansible_diff"] = diff
    held = locks_held()
    saved_warnings = dict(warnings._global_warnings)
    saved_exit, saved_fail = basic.AnsibleModule.exit_json, basic.AnsibleModule.fail_json
    warnings._global_warnings.clear()
    basic.AnsibleModule.exit_json, basic.AnsibleModule.fail_json = _exit_json, _fail_json
    try:
        with patch_module_args(full_args):
            main()
    except ModuleExit as outcome:
        result = outcome.result
        result.setdefault("failed", False)
        return result
    finally:
        basic.AnsibleModule.exit_json, basic.AnsibleModule.fail_json = saved_exit, saved_fail
        warnings._global_warnings.clear()
        warnings._global_warnings.update(saved_warnings)
        # A module process ends here, and the kernel drops its node lock with it; a lock the caller held stays.
        release_held(keep=held)
    return {"failed": True, "msg": "the module returned without a result"}


def run_module(main, args, check_mode=False, diff=False):
    """Call main() with args; returns the result dict (``failed`` set on failure)."""
    result = run_in_process(main, args, check_mode=check_mode, diff=diff)
    if result.get("msg") == "the module returned without a result" and result.get("failed"):
        raise AssertionError("module returned without exit_json or fail_json")
    return result
