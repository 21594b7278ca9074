# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each GPU's hardware health, from the ``nvidia-smi -q -x`` the topology already reads.

Pure parsing, no judgement (that is the audit's readiness checks). Element names and
their generations, as the real captures in the unit tests show them:

- PCIe: ``pci/pci_gpu_link_info``: ``pcie_gen/{max,current}_link_gen`` always; the
  device's and the host's own maxima (``device_current_link_gen``, ``max_device_link_gen``,
  ``max_host_link_gen``) from about driver 530; widths as ``16x``.
- ECC counters: ``ecc_errors/{volatile,aggregate}``: ``{sram,dram}_{correctable,uncorrectable}``
  (driver 5xx; 580 splits SRAM uncorrectable into ``_parity`` and ``_secded``), or
  ``{single,double}_bit/total`` before (driver 418).
- Retired pages (dynamic page retirement, before row remapping): counts and
  ``pending_retirement`` (older drivers also ``pending_blacklist``); N/A where the GPU
  remaps rows instead (A100 and later).
- Remapped rows: ``remapped_row_{corr,unc,pending,failure}``; ``N/A`` as the whole element
  where the GPU has no row remapper.
- Clock event reasons: ``clocks_event_reasons/clocks_event_reason_*`` (driver 535 on),
  ``clocks_throttle_reasons/clocks_throttle_reason_*`` before; each ``Active`` or ``Not Active``.
- Fabric (NVSwitch systems): ``fabric/state`` and ``fabric/status``; ``N/A`` elsewhere,
  absent before driver 525.
- NVLink, from ``nvidia-smi nvlink -s`` where ``topo -m`` shows NVLinks: ``GPU N: <name> (UUID: ...)``,
  then one ``Link K: <speed>`` line per link, ``<inactive>`` for a link that is down; nothing for
  a GPU without NVLink (the project's H200 capture).

A value nvidia-smi gives as ``N/A`` or ``Not Supported`` (or leaves out) is None: unknown, never zero.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# Relative imports: they work inside Ansible and where a script loads these files by path.
from .nvidia_smi import element_text as _text
from .nvidia_smi import parse_query_root, query_root

_CLOCK_REASON_GROUPS = (("clocks_event_reasons", "clocks_event_reason_"),
                        ("clocks_throttle_reasons", "clocks_throttle_reason_"))
_ECC_COUNTERS = {
    "correctable": ("sram_correctable", "dram_correctable", "single_bit/total"),
    "uncorrectable": ("sram_uncorrectable", "sram_uncorrectable_parity", "sram_uncorrectable_secded",
                      "dram_uncorrectable", "double_bit/total"),
}


def _number(element, path):
    """The leading integer of a value ('16x', '3072 bank(s)', '5'), or None."""
    match = re.match(r"\d+", _text(element, path) or "")
    return int(match.group(0)) if match else None


def _yes(element, path):
    value = _text(element, path)
    return None if value is None else value.lower() == "yes"


def _pcie(gpu):
    link = gpu.find("pci/pci_gpu_link_info")
    return {
        "gen_current": _number(link, "pcie_gen/current_link_gen"),
        "gen_max": _number(link, "pcie_gen/max_link_gen"),
        "gen_device_current": _number(link, "pcie_gen/device_current_link_gen"),
        "gen_device_max": _number(link, "pcie_gen/max_device_link_gen"),
        "gen_host_max": _number(link, "pcie_gen/max_host_link_gen"),
        "width_current": _number(link, "link_widths/current_link_width"),
        "width_max": _number(link, "link_widths/max_link_width"),
    }


def _ecc_total(counters, kind):
    """The sum of a volatile or aggregate group's counters of one kind; None when none is reported."""
    values = [_number(counters, path) for path in _ECC_COUNTERS[kind]]
    values = [value for value in values if value is not None]
    return sum(values) if values else None


def _ecc(gpu):
    volatile, aggregate = gpu.find("ecc_errors/volatile"), gpu.find("ecc_errors/aggregate")
    return {
        "mode_current": _text(gpu, "ecc_mode/current_ecc"),
        "mode_pending": _text(gpu, "ecc_mode/pending_ecc"),
        "volatile_correctable": _ecc_total(volatile, "correctable"),
        "volatile_uncorrectable": _ecc_total(volatile, "uncorrectable"),
        "aggregate_correctable": _ecc_total(aggregate, "correctable"),
        "aggregate_uncorrectable": _ecc_total(aggregate, "uncorrectable"),
        # Driver 5xx on GH100 and later: the SRAM error count that meets NVIDIA's RMA policy.
        "sram_threshold_exceeded": _yes(aggregate, "sram_threshold_exceeded"),
    }


def _retired_pages(gpu):
    pages = gpu.find("retired_pages")
    pending = _yes(pages, "pending_retirement")
    blacklist = _yes(pages, "pending_blacklist")
    return {
        "single_bit": _number(pages, "multiple_single_bit_retirement/retired_count"),
        "double_bit": _number(pages, "double_bit_retirement/retired_count"),
        "pending": None if pending is None and blacklist is None else bool(pending or blacklist),
    }


def _remapped_rows(gpu):
    rows = gpu.find("remapped_rows")
    return {
        "correctable": _number(rows, "remapped_row_corr"),
        "uncorrectable": _number(rows, "remapped_row_unc"),
        "pending": _yes(rows, "remapped_row_pending"),
        "failure": _yes(rows, "remapped_row_failure"),
    }


def _clock_event_reasons(gpu):
    """(reported, active): whether the GPU reports reasons at all, and the active ones' short names."""
    for group, prefix in _CLOCK_REASON_GROUPS:
        reasons = gpu.find(group)
        if reasons is not None:
            active = [child.tag[len(prefix):] for child in reasons
                      if child.tag.startswith(prefix) and (child.text or "").strip() == "Active"]
            return True, active
    return False, []


def _fabric(gpu):
    return {"state": _text(gpu, "fabric/state"), "status": _text(gpu, "fabric/status")}


_NVLINK_GPU = re.compile(r"^GPU (\d+):")
_NVLINK_LINK = re.compile(r"^\s*Link (\d+):\s*(.*?)\s*$")


def parse_nvlink_status(text):
    """{gpu index: {"active": [link numbers], "inactive": [link numbers]}} from ``nvidia-smi nvlink -s``."""
    links = {}
    current = None
    for line in (text or "").splitlines():
        gpu = _NVLINK_GPU.match(line)
        if gpu:
            current = links.setdefault(int(gpu.group(1)), {"active": [], "inactive": []})
            continue
        link = _NVLINK_LINK.match(line)
        if link and current is not None:
            state = "inactive" if "inactive" in link.group(2).lower() else "active"
            current[state].append(int(link.group(1)))
    return links


def uses_nvlink(matrix):
    """Whether ``topo -m`` (parse_topology_matrix) shows an NVLink between two GPUs (NV1 to NV18, ...)."""
    return any(str(value).upper().startswith("NV") for row in ((matrix or {}).get("links") or {}).values()
               for value in row.values())


def with_nvlinks(health, links):
    """health with each GPU's "nvlink" set from parse_nvlink_status (None: not read, or the GPU has none)."""
    for gpu in health:
        gpu["nvlink"] = links.get(gpu["index"]) if links is not None else None
    return health


def parse_gpu_health(text):
    """One dict per GPU, in nvidia-smi's (index) order: its identity and the health fields above.

    Raises ValueError as parse_query_xml does when the output holds no nvidia_smi_log document.
    """
    root = query_root(text)
    return gpu_health(root, parse_query_root(root)["gpus"])


def gpu_health(root, gpus):
    """parse_gpu_health() of a document query_root() read, whose GPUs parse_query_root() gave: one parse serves both."""
    health = []
    for identity, gpu in zip(gpus, root.findall("gpu")):
        reported, active = _clock_event_reasons(gpu)
        health.append({
            "index": identity["index"],
            "uuid": identity["uuid"],
            "name": identity["name"],
            "pci_bus_id": identity["pci_bus_id"],
            "pcie": _pcie(gpu),
            "ecc": _ecc(gpu),
            "retired_pages": _retired_pages(gpu),
            "remapped_rows": _remapped_rows(gpu),
            "clock_event_reasons_reported": reported,
            "clock_event_reasons": active,
            "fabric": _fabric(gpu),
            "nvlink": None,
        })
    return health
