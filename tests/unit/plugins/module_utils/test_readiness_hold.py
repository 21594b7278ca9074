# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gate's decision: its own hold held, marked anew or released; anyone else's left alone."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import readiness_hold as gate
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_hardware_checks import READINESS

HOLD = ("reset", "reboot", "replace")
MARK = "gpuops: reset: hardware.gpu0.row_remap_pending"


def test_the_mark_names_the_verdict_and_each_check_once():
    reasons = ["hardware.gpu0.row_remap_pending: 1 row waits (reset)", "hardware.gpu0.ecc_uncorrectable: 2 (reset)",
               "hardware.gpu0.row_remap_pending: again (reset)"]
    assert gate.hold_mark("reset", reasons) == "gpuops: reset: hardware.gpu0.row_remap_pending, hardware.gpu0.ecc_uncorrectable"
    assert gate.hold_mark("reboot", []) == "gpuops: reboot: no check named"
    assert gate.ours(gate.hold_mark("replace", [])) and not gate.ours("maintenance") and not gate.ours(None)


@pytest.mark.parametrize("verdict, held, mark, action", [
    # Not held: the holding verdicts hold, the others keep.
    ("reset", False, None, gate.HOLD),
    ("replace", False, None, gate.HOLD),
    ("degraded", False, None, gate.KEEP),
    ("ready", False, None, gate.KEEP),
    # The gate's own hold: kept while the same mark holds, marked anew, or released.
    ("reset", True, MARK, gate.KEEP),
    ("reboot", True, MARK, gate.UPDATE),
    ("ready", True, MARK, gate.RELEASE),
    ("degraded", True, MARK, gate.RELEASE),
    # The gate's mark without its hold (an interrupted run): held again, or the mark released.
    ("reset", False, MARK, gate.HOLD),
    ("ready", False, MARK, gate.RELEASE),
    # Anyone else's hold or mark: never touched.
    ("reset", True, "maintenance", gate.KEEP),
    ("ready", True, "maintenance", gate.KEEP),
    ("reset", True, None, gate.KEEP),
    ("ready", True, None, gate.KEEP),
    ("reset", False, "Not responding", gate.KEEP),
    # No verdict: nothing changes, the gate's own hold included.
    (None, True, MARK, gate.KEEP),
    (None, False, None, gate.KEEP),
])
def test_each_decision(verdict, held, mark, action):
    wanted = gate.hold_mark(verdict, ["hardware.gpu0.row_remap_pending: x (reset)"]) if verdict else None
    assert gate.decide(verdict, HOLD, held, mark, wanted)[0] == action


def test_every_verdict_but_ready_can_hold():
    for verdict in READINESS[1:]:
        assert gate.decide(verdict, READINESS[1:], False, None, gate.hold_mark(verdict, []))[0] == gate.HOLD
