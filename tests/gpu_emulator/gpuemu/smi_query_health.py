# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""--query-gpu fields for the health readings (health.py). The names and their
aliases are those of `nvidia-smi --help-query-gpu` on an R580 driver (the project's
H200 capture, tests/unit/plugins/module_utils/fixtures/h200_device_check)."""

from .health import CLOCK_REASONS, yes_no

NA = "[N/A]"


def _ecc(kind, period, memory):
    """ecc.errors.<corrected|uncorrected>.<period>.<sram|dram|total>."""
    suffix = "_correctable" if kind == "corrected" else "_uncorrectable"

    def get(f):
        counts = f.health.ecc
        if counts is None:
            return NA
        parts = ("sram", "dram") if memory == "total" else (memory,)
        return str(sum(counts[period][part + suffix] for part in parts))
    return get


def _read(section, key, word=False):
    def get(f):
        values = getattr(f.health, section)
        if values is None:
            return NA
        return yes_no(values[key]) if word else str(values[key])
    return get


def _reason(name):
    return lambda f: "Active" if dict(f.health.clock_reasons)[name] else "Not Active"


def _fabric(index):
    return lambda f: NA if f.health.fabric is None else f.health.fabric[index]


def _fields():
    fields = []
    for kind in ("corrected", "uncorrected"):
        for period in ("volatile", "aggregate"):
            for memory in ("dram", "sram", "total"):
                name = "ecc.errors.%s.%s.%s" % (kind, period, memory)
                fields.append(((name,), name, _ecc(kind, period, memory)))
    fields += [
        (("retired_pages.single_bit_ecc.count", "retired_pages.sbe"), "retired_pages.single_bit_ecc.count",
         _read("retired", "single_bit")),
        (("retired_pages.double_bit.count", "retired_pages.dbe"), "retired_pages.double_bit.count", _read("retired", "double_bit")),
        (("retired_pages.pending",), "retired_pages.pending", _read("retired", "pending", word=True)),
        (("remapped_rows.correctable", "remapped_rows.sbe"), "remapped_rows.correctable", _read("remapped", "correctable")),
        (("remapped_rows.uncorrectable", "remapped_rows.dbe"), "remapped_rows.uncorrectable", _read("remapped", "uncorrectable")),
        (("remapped_rows.pending",), "remapped_rows.pending", _read("remapped", "pending", word=True)),
        (("remapped_rows.failure",), "remapped_rows.failure", _read("remapped", "failure", word=True)),
        (("fabric.state",), "fabric.state", _fabric(0)),
        (("fabric.status",), "fabric.status", _fabric(1)),
    ]
    # The R580 help has a field for every reason but display_clocks_setting.
    for name, _bit in CLOCK_REASONS:
        if name != "display_clocks_setting":
            event = "clocks_event_reasons." + name
            fields.append(((event, "clocks_throttle_reasons." + name), event, _reason(name)))
    return fields


FIELDS = _fields()
