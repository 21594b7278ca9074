# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fails unless Molecule's check step ran and changed nothing on any host.

Usage: python scripts/assert_check_recap.py RECAP_FILE LOG_FILE

RECAP_FILE holds one JSON object per --check run (host -> recap counters),
written by molecule/callback_plugins/check_mode_recap.py.
"""

from __future__ import annotations

import json
import os
import sys


def problems(records):
    """What is wrong with the recorded check-mode recaps, as sentences."""
    if not records:
        return ["no check-mode run was recorded: the scenario's test_sequence needs a check step"]
    found = []
    for recap in records:
        for host, counters in sorted(recap.items()):
            if counters.get("changed"):
                found.append("%s: the check step reported changed=%d after converge" % (host, counters["changed"]))
            if counters.get("failures") or counters.get("unreachable"):
                found.append("%s: the check step failed (failed=%d unreachable=%d)"
                             % (host, counters.get("failures", 0), counters.get("unreachable", 0)))
    return found


def main(argv):
    recap_file, log_file = argv[1], argv[2]
    records = []
    if os.path.exists(recap_file):
        with open(recap_file, encoding="utf-8") as handle:
            records = [json.loads(line) for line in handle if line.strip()]
    found = problems(records)
    if found:
        sys.stderr.write("".join("ERROR: %s\n" % line for line in found))
        sys.stderr.write("ERROR: see the check step in %s\n" % log_file)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
