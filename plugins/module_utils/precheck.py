# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Runs feature modules in this process, in check mode, and says what each would do.

gpuops.hardening.precheck uses it to check every call the node recorded (receipts.py)
in one module call; the unit tests use run_in_process to run a module as Ansible would.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import traceback

from ansible.module_utils import basic
from ansible.module_utils.common import warnings
# The one public way to hand arguments to an AnsibleModule made in this process (ansible-core 2.19 and later);
# it sets what AnsiballZ sets for a module process, and nothing else.
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.hardening.plugins.module_utils import receipts
from ansible_collections.gpuops.hardening.plugins.module_utils.commands import shared_reads
from ansible_collections.gpuops.hardening.plugins.module_utils.gpu_numa_facts_main import main as gpu_numa_facts
from ansible_collections.gpuops.hardening.plugins.module_utils.installed_files_main import main as installed_files
from ansible_collections.gpuops.hardening.plugins.module_utils.memlock_main import main as memlock
from ansible_collections.gpuops.hardening.plugins.module_utils.mps_main import main as mps
from ansible_collections.gpuops.hardening.plugins.module_utils.nvidia_mig_main import main as nvidia_mig
from ansible_collections.gpuops.hardening.plugins.module_utils.persistenced_main import main as persistenced
from ansible_collections.gpuops.hardening.plugins.module_utils.run_lock import locks_held, release_held
from ansible_collections.gpuops.hardening.plugins.module_utils.swap_off_main import main as swap_off
from ansible_collections.gpuops.hardening.plugins.module_utils.sysctl_settings_main import main as sysctl_settings
from ansible_collections.gpuops.hardening.plugins.module_utils.thp_main import main as thp

# The modules whose calls are recorded and checked: the ones a no-op site.yml calls on its nodes.
FEATURES = {
    "gpu_numa_facts": gpu_numa_facts,
    "installed_files": installed_files,
    "memlock": memlock,
    "mps": mps,
    "nvidia_mig": nvidia_mig,
    "persistenced": persistenced,
    "swap_off": swap_off,
    "sysctl_settings": sysctl_settings,
    "thp": thp,
}


# nvidia-smi's queries that only read (nvidia-smi(1): -q, -L, --query-*, topo -m, and mig's -l listings):
# several recorded calls ask the same (the facts and nvidia_mig both read -q -x, the slowest), and in the
# precheck nothing changes between them, so each is asked once.
_READ_ONLY_MIG_LISTINGS = ("-lgip", "-lgipp", "-lgi", "-lci", "-lcip")


def is_shared_query(argv):
    """True for an nvidia-smi call that only reads, in the forms the feature modules use."""
    if os.path.basename(argv[0]) != "nvidia-smi" or len(argv) < 2:
        return False
    first = argv[1]
    if first == "mig":
        return len(argv) == 3 and argv[2] in _READ_ONLY_MIG_LISTINGS
    return first in ("-q", "-L") or first.startswith("--query-") or argv[1:] == ["topo", "-m"]


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


def check_call(module_name, args):
    """What one recorded call would do now: its check-mode result."""
    try:
        return run_in_process(FEATURES[module_name], args, check_mode=True)
    except Exception as error:  # pylint: disable=broad-except
        # One call that breaks is a call the play makes itself; the others still count.
        return {"failed": True, "msg": "%s: %s" % (error.__class__.__name__, error),
                "exception": traceback.format_exc()}


def check_recorded(root, modules):
    """[{module, args, result}] for every recorded call of the given modules, in the record's order; the
    nvidia-smi queries the calls share are asked once."""
    checked = []
    with shared_reads(is_shared_query):
        for key, call in sorted(receipts.load(root).items()):
            if call["module"] in modules:
                checked.append({"module": call["module"], "args": call["args"],
                                "result": check_call(call["module"], call["args"]), "use": key})
    return checked
