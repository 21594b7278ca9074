# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's hardware area: each GPU's health (the gpu_health fact, read from the same `nvidia-smi -q -x` as the
topology) judged, and one readiness verdict per node from those judgements.

Each finding pairs a check with what it would take to clear it (READINESS, mildest first):
ready, degraded (works, slower), reset (a GPU reset clears it), reboot, replace. Sources:
- pending row remaps need a GPU reset (NVML, nvmlDeviceGetRemappedRows); the row-remapping failure flag and
  the SRAM threshold-exceeded flag meet NVIDIA's RMA criteria once the field diagnostic confirms them
  (NVIDIA, GPU Memory Error Management, "RMA Policy");
- pages pending retirement are retired when the driver reloads (NVIDIA, Dynamic Page Retirement);
- uncorrectable ECC errors since the driver loaded: the application was stopped, and no new context starts
  until the page or row is mapped out (same two documents);
- a link's generation drops at idle to save power, so the generation is judged only while the GPU is not
  idle (its gpu_idle clock event reason inactive), and at idle the SKIP points to the baseline probe, which
  reads the link while its copies run (module_utils/gpu_baseline.py link_check); the width is judged always;
- a fabric reported as anything but Completed/Success: CUDA refuses work until Fabric Manager has trained it;
- an NVLink down (nvidia-smi nvlink -s): the GPUs still talk, over fewer links;
- the Xid lines of the kernel log since boot: NVIDIA's Xid catalogue (xid_catalog.py, audit_xid_checks.py);
- GPUDirect RDMA on nodes with RDMA NICs (audit_gpudirect_checks): a translating IOMMU, ACS redirect between a GPU
  and its NIC, nvidia_peermem missing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.module_utils.gpu_baseline import link_check_id
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_checks import FAIL, PASS, SKIP, WARN, check
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_xid_checks import xid_findings
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_gpudirect_checks import assess_gpudirect
from ansible_collections.gpuops.hardening.plugins.plugin_utils.gpu_models import model_spec

READINESS = ("ready", "degraded", "reset", "reboot", "replace")
AREA = "hardware"
# Clock event reasons that hold clocks down for a hardware or thermal cause (sw_power_cap is a job's own power).
SLOWDOWN_REASONS = ("hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown")


def _finding(gpu, name, title, verdict, expected, actual, reason, readiness="ready"):
    check_id = "hardware.gpu%s.%s" % (gpu["index"], name)
    return {"check": check(check_id, AREA, "GPU %s %s" % (gpu["index"], title), verdict, expected, actual, reason),
            "readiness": readiness if verdict in (FAIL, WARN) else "ready"}


def _model(gpu, spec):
    if spec["known"]:
        return _finding(gpu, "model", "model", PASS, "a known model", gpu["name"], "judged against this model's spec")
    return _finding(gpu, "model", "model", SKIP, "a known model", gpu["name"],
                    "no spec for this model: generic checks only (the link is held to its own reported maximum)")


def _pcie_width(gpu, spec):
    pcie = gpu["pcie"]
    current, widest = pcie["width_current"], pcie["width_max"]
    if current is None or widest is None:
        return _finding(gpu, "pcie_width", "PCIe link width", SKIP, "x%s" % widest, "unknown",
                        "nvidia-smi reports no link width")
    if spec["pcie_width"] and widest < spec["pcie_width"]:
        return _finding(gpu, "pcie_width", "PCIe link width", WARN, "x%d" % spec["pcie_width"],
                        "x%d at most" % widest, "the slot is narrower than the GPU: move it to a x%d slot"
                        % spec["pcie_width"], "degraded")
    if current < widest:
        return _finding(gpu, "pcie_width", "PCIe link width", WARN, "x%d" % widest, "x%d" % current,
                        "the link trained narrower than it can: reseat the GPU or its riser, check the slot",
                        "degraded")
    return _finding(gpu, "pcie_width", "PCIe link width", PASS, "x%d" % widest, "x%d" % current,
                    "the link runs at its full width")


def _pcie_generation(gpu, spec):
    pcie = gpu["pcie"]
    current, highest = pcie["gen_current"], pcie["gen_max"]
    # What the GPU itself can do: the model's spec, else the device's own maximum (driver 530 on), else the link's.
    wanted = spec["pcie_gen"] or pcie["gen_device_max"] or highest
    if highest is not None and wanted and highest < wanted:
        return _finding(gpu, "pcie_gen", "PCIe generation", WARN, "Gen%d" % wanted, "Gen%d at most" % highest,
                        "the host side caps the link below the GPU's generation: check the slot and the BIOS "
                        "PCIe setting", "degraded")
    if current is None or highest is None:
        return _finding(gpu, "pcie_gen", "PCIe generation", SKIP, "Gen%s" % wanted, "unknown",
                        "nvidia-smi reports no link generation")
    if "gpu_idle" in gpu["clock_event_reasons"]:
        return _finding(gpu, "pcie_gen", "PCIe generation", SKIP, "Gen%d under load" % highest,
                        "Gen%d at idle" % current, "the GPU is idle, and an idle link may lower its generation "
                        "to save power: judged only while the GPU works; playbooks/baseline.yml judges it under "
                        "load (its check %s)" % link_check_id(gpu["index"]))
    if current < highest:
        return _finding(gpu, "pcie_gen", "PCIe generation", WARN, "Gen%d" % highest, "Gen%d under load" % current,
                        "the link trained below its generation under load: reseat, check the riser and cabling",
                        "degraded")
    return _finding(gpu, "pcie_gen", "PCIe generation", PASS, "Gen%d" % highest, "Gen%d" % current,
                    "the link runs at its generation")


def _ecc(gpu):
    ecc = gpu["ecc"]
    found = []
    if ecc["mode_current"] and ecc["mode_pending"] and ecc["mode_current"] != ecc["mode_pending"]:
        found.append(_finding(gpu, "ecc_mode", "ECC mode", WARN, ecc["mode_pending"], ecc["mode_current"],
                              "an ECC mode change waits for a GPU reset", "reset"))
    errors = ecc["volatile_uncorrectable"]
    if errors:
        found.append(_finding(gpu, "ecc_uncorrectable", "uncorrectable ECC errors", FAIL, "0", errors,
                              "uncorrectable errors since the driver loaded stopped the work on this GPU: reset it "
                              "so the page or row is mapped out", "reset"))
    elif errors == 0:
        found.append(_finding(gpu, "ecc_uncorrectable", "uncorrectable ECC errors", PASS, "0", 0,
                              "none since the driver loaded"))
    if ecc["sram_threshold_exceeded"]:
        found.append(_finding(gpu, "sram_threshold", "SRAM error threshold", FAIL, "No", "Yes",
                              "the SRAM threshold-exceeded flag is set: run NVIDIA's field diagnostic and the RMA "
                              "process", "replace"))
    return found


def _memory_repair(gpu, spec):
    rows, pages = gpu["remapped_rows"], gpu["retired_pages"]
    found = []
    if rows["failure"]:
        found.append(_finding(gpu, "row_remap_failure", "row remapping", FAIL, "no failure", "failure",
                              "a row remap failed: the bank has no spare rows; run NVIDIA's field diagnostic and "
                              "the RMA process", "replace"))
    elif rows["pending"]:
        found.append(_finding(gpu, "row_remap_pending", "row remapping", FAIL, "none pending", "pending",
                              "rows wait to be remapped: reset the GPU", "reset"))
    elif rows["failure"] is False:
        found.append(_finding(gpu, "row_remap", "row remapping", PASS, "none pending", "%s rows remapped" % (
            (rows["correctable"] or 0) + (rows["uncorrectable"] or 0)), "no remap pending or failed"))
    retired = [count for count in (pages["single_bit"], pages["double_bit"]) if count is not None]
    limit = spec["retired_pages_limit"]
    if retired and sum(retired) >= limit:
        found.append(_finding(gpu, "retired_pages", "retired pages", FAIL, "under %d" % limit, sum(retired),
                              "as many retired pages as the limit: run NVIDIA's field diagnostic and the RMA "
                              "process", "replace"))
    elif pages["pending"]:
        found.append(_finding(gpu, "retired_pages", "retired pages", FAIL, "none pending", "pending",
                              "pages wait for retirement until the driver reloads: reset the GPU or reboot",
                              "reset"))
    elif retired:
        found.append(_finding(gpu, "retired_pages", "retired pages", PASS, "under %d" % limit, sum(retired),
                              "none pending, under the limit"))
    return found


def _clocks(gpu):
    if not gpu["clock_event_reasons_reported"]:
        return []
    held = [reason for reason in gpu["clock_event_reasons"] if reason in SLOWDOWN_REASONS]
    if held:
        return [_finding(gpu, "clocks", "clocks", WARN, "no slowdown", ", ".join(held),
                         "clocks held down: check cooling, the power supply and the power brake", "degraded")]
    return [_finding(gpu, "clocks", "clocks", PASS, "no slowdown", "none", "no hardware or thermal slowdown")]


def _fabric(gpu, spec, gpu_count):
    fabric = gpu["fabric"]
    if fabric["state"] is None:
        if spec["fabric_gpus"] and gpu_count >= spec["fabric_gpus"]:
            return [_finding(gpu, "fabric", "NVSwitch fabric", WARN, "Completed, Success", "not reported",
                             "this model's %d-GPU boards train an NVSwitch fabric but nvidia-smi reports none"
                             % spec["fabric_gpus"], "degraded")]
        return []
    actual = "%s, %s" % (fabric["state"], fabric["status"])
    if fabric["state"] == "Completed" and fabric["status"] == "Success":
        return [_finding(gpu, "fabric", "NVSwitch fabric", PASS, "Completed, Success", actual, "the fabric is trained")]
    return [_finding(gpu, "fabric", "NVSwitch fabric", FAIL, "Completed, Success", actual,
                     "CUDA refuses work until the fabric is trained: start nvidia-fabricmanager (its version must "
                     "equal the driver's), then reset the GPUs", "reset")]


def _nvlink(gpu, spec):
    links = gpu.get("nvlink")
    if links is None:
        return []
    wanted = spec["nvlinks"] or len(links["active"]) + len(links["inactive"])
    actual = "%d active" % len(links["active"])
    if links["inactive"]:
        return [_finding(gpu, "nvlink", "NVLinks", WARN, "%d active" % wanted, actual + ", down: %s" % ", ".join(
            str(link) for link in links["inactive"]), "NVLinks down: GPU-to-GPU traffic runs on fewer links; reset "
            "the GPU, and reseat or service the board if they stay down", "degraded")]
    if len(links["active"]) < wanted:
        return [_finding(gpu, "nvlink", "NVLinks", WARN, "%d active" % wanted, actual,
                         "fewer NVLinks than this model has", "degraded")]
    return [_finding(gpu, "nvlink", "NVLinks", PASS, "%d active" % wanted, actual, "every NVLink is up")]


def assess(health, models=None, kernel_log=None, gpudirect=None):
    """Every finding for the node's GPUs: a list of {"check": audit check, "readiness": one of READINESS}.

    models: the operator's per-model overrides (audit_gpu_models, gpu_models.model_spec); kernel_log: the
    gpu_kernel_log fact, whose Xids (and each GPU's "xid") are judged too; None judges no Xid.
    gpudirect: the gpu_gpudirect fact, judged by audit_gpudirect_checks after the GPUs' own findings."""
    found = []
    gpus = health or []
    for gpu in gpus:
        spec = model_spec(gpu["name"], models)
        found.append(_model(gpu, spec))
        found.append(_pcie_width(gpu, spec))
        found.append(_pcie_generation(gpu, spec))
        found.extend(_ecc(gpu))
        found.extend(_memory_repair(gpu, spec))
        found.extend(_clocks(gpu))
        found.extend(_nvlink(gpu, spec))
        found.extend(_fabric(gpu, spec, len(gpus)))
    if kernel_log is not None:
        found.extend(xid_findings(gpus, kernel_log, READINESS.index))
    if gpus:
        found.extend(assess_gpudirect(gpudirect))
    return found


def readiness(findings, collected=True):
    """The node's verdict and its reasons (the checks behind it, worst first).

    Without the GPUs' health (collected false) the node is not known to be ready: no verdict, unless what was
    read still holds it back (an Xid in the kernel log of a GPU nvidia-smi no longer answers for)."""
    rank = dict((name, position) for position, name in enumerate(READINESS))
    worst = max([finding["readiness"] for finding in findings] or ["ready"], key=rank.get)
    reasons = ["%s: %s (%s)" % (item["check"]["id"], item["check"]["reason"], item["readiness"])
               for item in sorted(findings, key=lambda item: -rank[item["readiness"]]) if item["readiness"] != "ready"]
    if not collected:
        return {"verdict": None if worst == "ready" else worst, "reasons": reasons + ["the GPUs' health was not read"]}
    return {"verdict": worst, "reasons": reasons}
