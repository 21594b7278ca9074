# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a module's main() in-process and capture what it would return to Ansible."""

from __future__ import annotations

from ansible_collections.gpuops.hardening.plugins.module_utils.precheck import run_in_process
from ansible_collections.gpuops.hardening.plugins.module_utils.receipts import RECEIPTS_PATH


# The node lock file (below root) and its folders: every module that changes the host creates them,
# and none manages them; tests listing the files a module wrote leave them out. The same goes for
# the record of the calls that ended without failure (module_utils/receipts.py).
NODE_LOCK_PATHS = ("run", "run/lock", "run/lock/gpuops-hardening.lock",
                   "var", "var/lib", "var/lib/gpuops-hardening", RECEIPTS_PATH.lstrip("/"))


def run_module(main, args, check_mode=False, diff=False):
    """Call main() with args; returns the result dict (``failed`` set on failure)."""
    result = run_in_process(main, args, check_mode=check_mode, diff=diff)
    if result.get("msg") == "the module returned without a result" and result.get("failed"):
        raise AssertionError("module returned without exit_json or fail_json")
    return result
