# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What nvidia-smi reports about one GPU, computed from the state and the model
facts. Every renderer (CSV, XML, tables) reads these so they always agree."""

from . import catalog, health, pci, runtime

COMPUTE_MODE_NAMES = {
    "Default": "DEFAULT",
    "Exclusive_Thread": "EXCLUSIVE_THREAD",
    "Prohibited": "PROHIBITED",
    "Exclusive_Process": "EXCLUSIVE_PROCESS",
}


def enabled(flag):
    return "Enabled" if flag else "Disabled"


class Facts(object):
    """Read-only view of one GPU; attributes are plain values, None means N/A."""

    def __init__(self, state, gpu):
        self.state = state
        self.gpu = gpu
        self.model = catalog.model(gpu["model"])
        self.processes = runtime.processes_on(state, gpu["index"])
        busy = bool(self.processes)
        model = self.model
        self.index = gpu["index"]
        self.name = gpu["model"]
        self.uuid = gpu["uuid"]
        self.serial = gpu["serial"]
        self.bus_id = pci.smi_id(gpu["pci_bus_id"])
        self.domain, self.bus, self.device, self.function = pci.split(gpu["pci_bus_id"])
        self.device_id = "%s10DE" % model["pci_device_id"][2:].upper()
        self.sub_system_id = "%s10DE" % model["pci_subsystem_id"][2:].upper()
        self.minor_number = gpu["minor_number"]
        self.module_id = gpu.get("module_id")
        self.persistence = enabled(runtime.persistence_enabled(state, gpu))
        self.compute_mode = gpu["compute_mode"]
        self.mig_capable = gpu["mig"] is not None
        self.mig_current = gpu["mig"]["current"] if gpu["mig"] else None
        self.mig_pending = gpu["mig"]["pending"] if gpu["mig"] else None
        self.mig_enabled = self.mig_current == "Enabled"
        self.memory_total = model["memory_total_mib"]
        self.memory_reserved = model["memory_reserved_mib"]
        self.memory_used = model["memory_idle_used_mib"] + sum(p["used_memory_mib"] for p in self.processes)
        self.memory_free = self.memory_total - self.memory_reserved - self.memory_used
        self.bar1_total = model["bar1_total_mib"]
        self.bar1_used = 1 + (2 * len(self.processes))
        self.power_limit = model["power_limit_w"]
        self.power_min = model["power_min_w"]
        self.power_draw = model["power_idle_w"] + (model["power_limit_w"] // 3 if busy else 0)
        self.temperature = model["temperature_c"] + (12 if busy else 0)
        self.memory_temperature = model["memory_temperature_c"]
        self.fan = model["fan"]
        self.pstate = "P0" if busy or not model["display"] else "P8"
        # Utilisation is not reported per GPU while MIG is on.
        self.utilization = None if self.mig_enabled else (87 if busy else 0)
        self.memory_utilization = None if self.mig_enabled else (41 if busy else 0)
        clocks = model["clocks_max_mhz"] if busy else model["clocks_idle_mhz"]
        self.clocks = dict(clocks)
        self.max_clocks = dict(model["clocks_max_mhz"])
        self.ecc = enabled(model["ecc"])
        self.display_mode = enabled(model["display"])
        self.pcie_gen = model["pcie_gen"]
        self.pcie_width = model["pcie_width"]
        self.vbios = model["vbios_version"]
        self.compute_cap = model["compute_cap"]
        self.architecture = model["architecture"]
        self.brand = model["brand"]

    @property
    def health(self):
        """The GPU's health readings (health.py), built on first use."""
        if not hasattr(self, "_health"):
            self._health = health.Health(self.state, self.gpu, self)
        return self._health
