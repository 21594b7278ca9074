# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fails unless every awx.awx task of the given playbooks uses only its module's options, with the
required ones given and literal values among the choices. ansible-lint's args rule lets awx.awx
modules through unchecked, and no controller runs here to refuse a bad argument.

Usage: python scripts/check_awx_task_args.py PLAYBOOK...
"""

from __future__ import annotations

import json
import subprocess
import sys

import yaml

PREFIX = "awx.awx."
# Keywords of a task, not arguments of its module.
TASK_KEYWORDS = {"name", "loop", "loop_control", "when", "vars", "tags", "register", "no_log", "delegate_to"}


def module_options(module, cache):
    if module not in cache:
        out = subprocess.run(["ansible-doc", "-j", module], capture_output=True, text=True, check=True).stdout
        cache[module] = json.loads(out)[module]["doc"]["options"]
    return cache[module]


def problems(playbook, cache):
    found = []
    with open(playbook, encoding="utf-8") as handle:
        plays = yaml.safe_load(handle)
    for play in plays:
        for task in play.get("tasks", []):
            modules = [key for key in task if key.startswith(PREFIX)]
            if not modules:
                continue
            module = modules[0]
            args, options = task[module] or {}, module_options(module, cache)
            where = "%s: %s (%s)" % (playbook, task.get("name"), module)
            found += ["%s: %s is no option" % (where, key) for key in sorted(set(args) - set(options))]
            found += ["%s: %s is required" % (where, key) for key, spec in sorted(options.items())
                      if spec.get("required") and key not in args]
            for key, value in sorted(args.items()):
                choices = (options.get(key) or {}).get("choices")
                if choices and isinstance(value, str) and "{{" not in value and value not in choices:
                    found.append("%s: %s: %r is none of %s" % (where, key, value, choices))
    return found


def main(playbooks):
    cache = {}
    found = [problem for playbook in playbooks for problem in problems(playbook, cache)]
    for problem in found:
        print(problem, file=sys.stderr)
    checked = sum(len(options) > 0 for options in cache.values())
    print("%d awx.awx modules checked, %d problems" % (checked, len(found)))
    return 1 if found or not checked else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
