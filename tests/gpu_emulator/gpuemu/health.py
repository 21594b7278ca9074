# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One GPU's hardware health as nvidia-smi reports it: PCIe link, ECC counters,
retired pages, remapped rows, clock event reasons and fabric state. Healthy values
come from the model; the state's faults (faults.py) change them per GPU."""

from . import fabric

# Row remapping replaced page retirement from Ampere on (NVML API reference,
# nvmlDeviceGetRemappedRows: "Ampere or newer"); the Ampere, Ada and Hopper captures
# report retired_pages as N/A, the Pascal ones (P100, P2000) report page counts.
ROW_REMAPPING = ("Ampere", "Ada Lovelace", "Hopper")

# The NVML bits (nvml.h, "nvmlClocksEventReasons", NVML API reference R550), in the
# order nvidia-smi -q -x lists its elements (every capture since R418).
CLOCK_REASONS = (
    ("gpu_idle", 0x1),
    ("applications_clocks_setting", 0x2),
    ("sw_power_cap", 0x4),
    ("hw_slowdown", 0x8),
    ("hw_thermal_slowdown", 0x40),
    ("hw_power_brake_slowdown", 0x80),
    ("sync_boost", 0x10),
    ("sw_thermal_slowdown", 0x20),
    ("display_clocks_setting", 0x100),
)

FABRIC_STATES = fabric.STATES

ECC_COUNTERS = ("sram_correctable", "sram_uncorrectable", "dram_correctable", "dram_uncorrectable")


def _fault(state, key, gpu):
    return state.get("faults", {}).get(key, {}).get(str(gpu["index"]))


def _link_generation(model, fault, idle):
    """The link's current generation: the fault's trained-down cap, else the model's maximum; lower at idle on
    models whose real GPUs drop it to save power, back up as soon as work (a CUDA application, a copy) runs.

    Real idle GPUs (-q -x in shared/fixtures/real) that drop it: netdata_rtx4090_persistence_enabled_driver535
    (AD102, the RTX 6000 Ada's and the L40S's chip: Gen1 of 3, P8), telegraf_a10g_driver515 (a data-center PCIe
    card: Gen1 of 4), telegraf_quadro_p2000_persistence_enabled_driver525 and telegraf_quadro_p400_driver418 (Gen1
    of 3). Those that keep it: netdata_tesla_p100_pcie_driver510 (Gen3 of 3 at 0 %), the A100 MIG captures (Gen4
    of 4) and the project's H200 (Gen5 of 5 before and after load, fixtures/h200_device_check). The width stays:
    the RTX 4090 and P400 keep x16 at Gen1.
    """
    generation = fault.get("gen", model["pcie_gen"])
    if idle and model.get("pcie_idle_gen"):
        return min(generation, model["pcie_idle_gen"])
    return generation


def driver_major(state):
    return int(state["driver_version"].split(".")[0])


class Health(object):
    """Read-only; None means N/A."""

    def __init__(self, state, gpu, facts):
        model = facts.model
        mig_on = facts.mig_enabled
        # The idle reason is off on both MIG-enabled A100 captures, on on every idle GPU.
        idle = not facts.processes and not mig_on
        link = _fault(state, "pcie_link", gpu) or {}
        self.pcie_max_gen = model["pcie_gen"]
        self.pcie_max_width = model["pcie_width"]
        self.pcie_gen = _link_generation(model, link, idle)
        self.pcie_width = link.get("width", self.pcie_max_width)
        self.ecc_on = facts.ecc == "Enabled"
        self.legacy_ecc = model["architecture"] not in ROW_REMAPPING
        self.ecc = self._ecc(_fault(state, "ecc_errors", gpu) or {})
        self.retired = self._retired(_fault(state, "retired_pages", gpu) or {})
        # Both A100 captures with MIG enabled (R510, R535) print remapped_rows as N/A.
        self.remapped = None if self.legacy_ecc or mig_on else self._remapped(_fault(state, "remapped_rows", gpu) or {})
        self.remap_banks = model.get("row_remapper_banks")
        active = set(_fault(state, "clock_reasons", gpu) or ()) | ({"gpu_idle"} if idle else set())
        self.clock_reasons = [(name, name in active) for name, _bit in CLOCK_REASONS]
        self.clock_mask = sum(bit for name, bit in CLOCK_REASONS if name in active)
        self.fabric = self._fabric(state, gpu, model, _fault(state, "fabric", gpu))

    def _ecc(self, fault):
        if not self.ecc_on:
            return None
        return dict((period, dict((name, int(fault.get(period, {}).get(name, 0))) for name in ECC_COUNTERS))
                    for period in ("volatile", "aggregate"))

    def _retired(self, fault):
        if not self.legacy_ecc or not self.ecc_on:
            return None
        return {"single_bit": int(fault.get("single_bit", 0)), "double_bit": int(fault.get("double_bit", 0)),
                "pending": bool(fault.get("pending", False))}

    @staticmethod
    def _remapped(fault):
        return {"correctable": int(fault.get("correctable", 0)), "uncorrectable": int(fault.get("uncorrectable", 0)),
                "pending": bool(fault.get("pending", False)), "failure": bool(fault.get("failure", False))}

    @staticmethod
    def _fabric(state, gpu, model, fault):
        # Fabric state is a Hopper-and-later probe (NVML nvmlDeviceGetGpuFabricInfo) that
        # only an NVSwitch system completes; the H800 NVSwitch node (R525) shows
        # Completed / Success, the PCIe and pre-Hopper captures N/A.
        if model["architecture"] != "Hopper" or not fabric.nvswitch(state):
            return None
        if fault and fault["state"] not in FABRIC_STATES:
            raise ValueError("fabric state %r is not one of %s" % (fault["state"], ", ".join(FABRIC_STATES)))
        return fabric.gpu_state(state, gpu)


def yes_no(flag):
    return "Yes" if flag else "No"
