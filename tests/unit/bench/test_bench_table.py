# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bench's table of the node call by feature: a row per feature, a column per node kind, the sum last."""

from __future__ import annotations

import importlib.util
import os
import sys

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")


def load_table():
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    try:
        spec = importlib.util.spec_from_file_location("bench_table", os.path.join(ROOT, "scripts", "bench_table.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.pop(0)


def test_each_feature_has_a_row_and_a_kind_without_it_a_dash():
    table = load_table()
    rows = table.node_call_rows({
        "dgx_h100 (training)": {"timings": {"sysctl_settings": 0.01, "thp": 0.002}, "changed": False},
        "a100_8x_mig (MIG)": {"timings": {"sysctl_settings": 0.02, "mig_layout": 0.5}, "changed": False},
    })
    assert rows[:2] == ["| feature | a100_8x_mig (MIG) | dgx_h100 (training) |", "|---|---:|---:|"]
    assert "| sysctl_settings | 0.020 | 0.010 |" in rows
    assert "| mig_layout | 0.500 | - |" in rows and "| thp | - | 0.002 |" in rows
    assert rows[-1] == "| **the call's features, together** | 0.520 | 0.012 |"
    assert table.TARGET_RATIO == 2.0
