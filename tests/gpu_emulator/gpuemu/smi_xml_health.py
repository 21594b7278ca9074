# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The health elements of nvidia-smi -q -x (nvsmi_device_v12), as (tag, value) pairs
for smi_xml. Layouts follow the real captures named at each function."""

from .health import driver_major, yes_no

NA = "N/A"

# The Pascal (pre row remapping) counter set: P100 (R510) and Quadro P2000 (R525) captures.
LEGACY_ECC = ("device_memory", "register_file", "l1_cache", "l2_cache", "texture_memory", "texture_shm", "cbu", "total")
LEGACY_ABSENT = ("l1_cache", "cbu")


def pci_gpu_link_info(h):
    # All five gens from R525 on (H800 R525 text capture; A100 and RTX 4090 R535); a
    # link trained down drops the current values only (RTX 4090 R535: max 3, current 1).
    return ("pci_gpu_link_info", [
        ("pcie_gen", [
            ("max_link_gen", str(h.pcie_max_gen)),
            ("current_link_gen", str(h.pcie_gen)),
            ("device_current_link_gen", str(h.pcie_gen)),
            ("max_device_link_gen", str(h.pcie_max_gen)),
            ("max_host_link_gen", str(h.pcie_max_gen)),
        ]),
        ("link_widths", [("max_link_width", "%dx" % h.pcie_max_width), ("current_link_width", "%dx" % h.pcie_width)]),
    ])


def _legacy_counts(h, period, kind):
    if h.ecc is None:
        return [(tag, NA) for tag in LEGACY_ECC]
    memory = h.ecc[period]["dram_correctable" if kind == "single_bit" else "dram_uncorrectable"]
    values = dict((tag, "0") for tag in LEGACY_ECC)
    values.update((tag, NA) for tag in LEGACY_ABSENT)
    values.update(device_memory=str(memory), total=str(memory))
    return [(tag, values[tag]) for tag in LEGACY_ECC]


def ecc_errors(h):
    # SRAM/DRAM counters from Ampere on (A100 R510/R535, H800 R525), N/A with ECC off
    # (RTX 4090 R535); per-unit single/double bit counters before (P100, P2000).
    if h.legacy_ecc:
        return ("ecc_errors", [(period, [(kind, _legacy_counts(h, period, kind)) for kind in ("single_bit", "double_bit")])
                               for period in ("volatile", "aggregate")])
    return ("ecc_errors", [(period, [(name, NA if h.ecc is None else str(h.ecc[period][name]))
                                     for name in ("sram_correctable", "sram_uncorrectable", "dram_correctable", "dram_uncorrectable")])
                           for period in ("volatile", "aggregate")])


def retired_pages(h):
    # P100 R510: counts, an empty page list, No/No; N/A throughout where rows are remapped.
    r = h.retired
    if r is None:
        return ("retired_pages", [
            ("multiple_single_bit_retirement", [("retired_count", NA), ("retired_pagelist", NA)]),
            ("double_bit_retirement", [("retired_count", NA), ("retired_pagelist", NA)]),
            ("pending_blacklist", NA),
            ("pending_retirement", NA),
        ])
    return ("retired_pages", [
        ("multiple_single_bit_retirement", [("retired_count", str(r["single_bit"])), ("retired_pagelist", [])]),
        ("double_bit_retirement", [("retired_count", str(r["double_bit"])), ("retired_pagelist", [])]),
        ("pending_blacklist", yes_no(r["pending"])),
        ("pending_retirement", yes_no(r["pending"])),
    ])


def remapped_rows(h):
    # RTX 4090 R535, A10G R515 and the H800 R525 text capture: counts, No/No and the
    # bank histogram, whose size is the model's (only set where a capture gives it).
    r = h.remapped
    if r is None:
        return ("remapped_rows", NA)
    children = [
        ("remapped_row_corr", str(r["correctable"])),
        ("remapped_row_unc", str(r["uncorrectable"])),
        ("remapped_row_pending", yes_no(r["pending"])),
        ("remapped_row_failure", yes_no(r["failure"])),
    ]
    if h.remap_banks is not None:
        children.append(("row_remapper_histogram", [
            ("row_remapper_histogram_max", "%d bank(s)" % h.remap_banks),
            ("row_remapper_histogram_high", "0 bank(s)"),
            ("row_remapper_histogram_partial", "0 bank(s)"),
            ("row_remapper_histogram_low", "0 bank(s)"),
            ("row_remapper_histogram_none", "0 bank(s)"),
        ]))
    return ("remapped_rows", children)


def clock_reasons(state, h):
    # "Clocks Throttle Reasons" until R525 (H800 R525 text, P2000 R525 XML), "Clocks
    # Event Reasons" from R535 (A100 and RTX 4090 R535 captures).
    word = "event" if driver_major(state) >= 535 else "throttle"
    reasons = [("clocks_%s_reason_%s" % (word, name), "Active" if on else "Not Active") for name, on in h.clock_reasons]
    return ("clocks_%s_reasons" % word, reasons)


def fabric(h):
    state, status = h.fabric or (NA, NA)
    return ("fabric", [("state", state), ("status", status)])
