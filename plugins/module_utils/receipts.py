# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The arguments each feature module last converged the node with, kept on the node.

A feature module that ends without failure outside check mode records the arguments
it was called with. gpuops.hardening.precheck runs each recorded call again, in check
mode and in one process, at the start of a play; a later call with the same arguments
is then answered from that check instead of from another module call on the node.

One record per use of a module: a module used more than once in a play (the files of
the MIG boot service and of the launcher) tells its uses apart by the paths it manages
(USE_ARGUMENTS), so each record is replaced by the next call of the same use and the
file stays small. The content is sorted JSON, so a run that records the same calls
writes the same bytes and an unchanged node is not written at all.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import tempfile

from ansible.module_utils import basic

from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import read_text, under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.unit_record import STATE_DIR

RECEIPTS_PATH = STATE_DIR + "/converged-calls.json"


def _paths(entries):
    return sorted(entry.get("path") for entry in entries or [] if isinstance(entry, dict))


def _installed_files_use(args):
    """The paths a call installs, and those it removes when it removes any (the boot service's off state)."""
    use = [_paths(args.get("folders")), _paths(args.get("files"))]
    if args.get("absent"):
        use.append(sorted(args["absent"]))
    return use


# The arguments that tell one use of a module from another; modules not named here have one use.
USE_ARGUMENTS = {
    "installed_files": _installed_files_use,
    "gpu_numa_facts": lambda args: args.get("fact_path"),
}


def use_key(module_name, args):
    """The record's key: the module's name, and for a module with several uses, which one."""
    use = USE_ARGUMENTS.get(module_name)
    return module_name if use is None else "%s %s" % (module_name, json.dumps(use(args), sort_keys=True))


def call_arguments():
    """The arguments this module process was called with, as the task gave them (Ansible's own keys left out)."""
    return dict((name, value) for name, value in basic._load_params().items() if not name.startswith("_ansible_"))


def parse(text):
    """{key: {"module": name, "args": {...}}} from the file's text; {} for no file or one that is not ours."""
    try:
        calls = json.loads(text or "{}").get("calls")
    except (ValueError, AttributeError):
        return {}
    if not isinstance(calls, dict):
        return {}
    return dict((key, call) for key, call in calls.items()
                if isinstance(call, dict) and isinstance(call.get("module"), str) and isinstance(call.get("args"), dict))


def render(calls):
    return json.dumps({"calls": calls}, indent=1, sort_keys=True) + "\n"


def load(root):
    return parse(read_text(under_root(root, RECEIPTS_PATH)))


def _write(path, content):
    """Atomic: a temporary file beside path, renamed over it."""
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o755)
    fd, tmp_path = tempfile.mkstemp(prefix=".gpuops-", dir=directory)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(content)
        os.chmod(tmp_path, 0o644)
        os.rename(tmp_path, path)
    finally:
        if os.path.exists(tmp_path):
            os.unlink(tmp_path)


def record(root, module_name, args):
    """Keep args as the last call of this use of the module; writes only when the record changes."""
    calls = load(root)
    key = use_key(module_name, args)
    wanted = {"module": module_name, "args": json.loads(json.dumps(args, sort_keys=True))}
    if calls.get(key) == wanted:
        return False
    calls[key] = wanted
    _write(under_root(root, RECEIPTS_PATH), render(calls))
    return True


def remember_call(module, module_name):
    """Record this call's arguments when the module ends without failure, outside check mode.

    The record is bookkeeping for the precheck: it never changes the module's result, and a
    record that cannot be written is a warning (the next run then checks this call on its own).
    """
    if module.check_mode:
        return
    finish = module.exit_json

    def exit_recorded(**result):
        if not result.get("failed"):
            try:
                record(module.params["root"], module_name, call_arguments())
            except (IOError, OSError, TypeError, ValueError) as error:
                module.warn("could not record this call for gpuops.hardening.precheck in %s: %s; the next run checks "
                            "it with its own call" % (RECEIPTS_PATH, error))
        finish(**result)

    module.exit_json = exit_recorded
