# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the readiness checks expect of each GPU model, by the product name nvidia-smi prints.

pcie_gen, pcie_width: the GPU's own host interface (NVIDIA's product datasheets: H100 and H200 PCIe Gen5 x16,
A100 and L40S PCIe Gen4 x16). fabric_gpus: the model's 8-GPU boards (HGX A100, HGX H100, HGX H200) connect their
GPUs through NVSwitches, whose fabric Fabric Manager trains (NVIDIA Fabric Manager User Guide); their 4-GPU boards
link the GPUs directly, with no fabric, so a fabric is expected only on a node with 8 or more of them. NVML
reports a GPU's fabric state on Hopper and newer only (nvmlDeviceGetGpuFabricInfo), so an A100 board's fabric is
Fabric Manager's to report, not nvidia-smi's: A100 models expect none here. nvlinks: the links of an SXM GPU
(datasheets: H100 and H200 SXM 18 fourth-generation links for 900 GB/s, A100 SXM4 12 third-generation for 600 GB/s).
retired_pages_limit: NVIDIA documents no page count for dynamic page retirement (its RMA policy is the field
diagnostic's); 60 is the count field guides give as the point to replace a board.

A model missing here gets GENERIC: its own reported maximum generation is what the link is held to, and no
fabric is expected; model_spec says so in "known". An operator overrides or adds models per inventory group with
the audit role's audit_gpu_models (OVERRIDE_RULES says what each key takes).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

GENERIC = {"pcie_gen": None, "pcie_width": None, "fabric_gpus": None, "nvlinks": None, "retired_pages_limit": 60}

MODELS = {
    "NVIDIA H100 80GB HBM3": {"pcie_gen": 5, "pcie_width": 16, "fabric_gpus": 8, "nvlinks": 18},
    "NVIDIA H100 PCIe": {"pcie_gen": 5, "pcie_width": 16},
    "NVIDIA H200": {"pcie_gen": 5, "pcie_width": 16, "fabric_gpus": 8, "nvlinks": 18},
    "NVIDIA H200 NVL": {"pcie_gen": 5, "pcie_width": 16},
    "NVIDIA A100-SXM4-40GB": {"pcie_gen": 4, "pcie_width": 16, "nvlinks": 12},
    "NVIDIA A100-SXM4-80GB": {"pcie_gen": 4, "pcie_width": 16, "nvlinks": 12},
    "NVIDIA A100-PCIE-40GB": {"pcie_gen": 4, "pcie_width": 16},
    "NVIDIA A100 80GB PCIe": {"pcie_gen": 4, "pcie_width": 16},
    "NVIDIA L40S": {"pcie_gen": 4, "pcie_width": 16},
}


# What each spec key takes, for an operator's override (audit_gpu_models): (allowed, test).
OVERRIDE_RULES = {
    "pcie_gen": ("a PCIe generation, 1 to 6", lambda value: value in (1, 2, 3, 4, 5, 6)),
    "pcie_width": ("a link width: 1, 2, 4, 8, 16 or 32", lambda value: value in (1, 2, 4, 8, 16, 32)),
    "fabric_gpus": ("null, or the GPU count from which an NVSwitch fabric is expected (2 or more)",
                    lambda value: value is None or (_whole(value) and value >= 2)),
    "nvlinks": ("null, or the NVLinks each GPU has (0 or more)", lambda value: value is None or (_whole(value) and value >= 0)),
    "retired_pages_limit": ("the retired-page count that means replace (1 or more)",
                            lambda value: _whole(value) and value >= 1),
}


def _whole(value):
    return isinstance(value, int) and not isinstance(value, bool)


def override_errors(models):
    """(product name, key, value, allowed) for each entry of an audit_gpu_models override that is not valid."""
    found = []
    if not isinstance(models, dict):
        return [(None, None, models, "a mapping of product names (as nvidia-smi prints them) to spec keys")]
    for name, spec in sorted(models.items(), key=lambda item: str(item[0])):
        if not isinstance(spec, dict):
            found.append((name, None, spec, "a mapping of %s" % ", ".join(sorted(OVERRIDE_RULES))))
            continue
        for key, value in sorted(spec.items(), key=lambda item: str(item[0])):
            rule = OVERRIDE_RULES.get(key)
            if rule is None:
                found.append((name, key, value, "keys %s" % ", ".join(sorted(OVERRIDE_RULES))))
            elif not rule[1](value):
                found.append((name, key, value, rule[0]))
    return found


def model_spec(name, overrides=None):
    """The expectations for a product name: GENERIC, then the model's entry, then the operator's override for it
    (audit_gpu_models, set per inventory group); known: whether either names the model."""
    overrides = overrides or {}
    spec = dict(GENERIC)
    spec.update(MODELS.get(name) or {})
    spec.update(overrides.get(name) or {})
    spec["known"] = name in MODELS or name in overrides
    return spec


def fabric_models(overrides=None):
    """{product name: GPU count from which its boards carry NVSwitches} for every model, built in or the operator's
    (audit_gpu_models), whose spec expects a fabric: the one answer the audit and the fabricmanager role share."""
    overrides = overrides or {}
    specs = dict((name, model_spec(name, overrides)) for name in set(MODELS) | set(overrides))
    return dict((name, spec["fabric_gpus"]) for name, spec in specs.items() if spec["fabric_gpus"])
