# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Records the recap of every ansible-playbook --check run of a Molecule scenario.

Molecule asserts idempotence itself but not that its check step changes
nothing; scripts/molecule-scenario.sh reads these records after the scenario.
"""

from __future__ import annotations

DOCUMENTATION = r"""
name: check_mode_recap
type: aggregate
short_description: Append the recap of each --check run to a JSON lines file
description:
  - When ansible-playbook runs with C(--check) and E(GPUOPS_CHECK_RECAP) names a file,
    appends one JSON object per run to it, mapping each host to its recap counters.
  - Runs without C(--check), or without E(GPUOPS_CHECK_RECAP), record nothing.
requirements:
  - enabled in callbacks_enabled
"""

import json
import os

from ansible import context
from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    """Appends the recap of check-mode runs to the file named by GPUOPS_CHECK_RECAP."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "check_mode_recap"
    CALLBACK_NEEDS_ENABLED = True

    def v2_playbook_on_stats(self, stats):
        path = os.environ.get("GPUOPS_CHECK_RECAP")
        if not path or not context.CLIARGS.get("check"):
            return
        recap = {host: stats.summarize(host) for host in sorted(stats.processed)}
        # One write of one line: concurrent runs never interleave their records.
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(recap, sort_keys=True) + "\n")
