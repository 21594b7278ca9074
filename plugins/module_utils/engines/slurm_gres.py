# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The slurm_gres engine: Slurm's gres.conf block of GPUs with their NUMA-local cores, and cgroup.conf's
constraints.

converge(spec, host, check_mode) -> result, for the gpuops.hardening.slurm_gres module and the node call.
Without gpus it reads the topology itself, or, in the node call, takes the gpu_topology fact of the feature named
by topology_feature when that ran earlier in the same call (after partitioning, as this feature does).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpuops.hardening.plugins.module_utils import slurm_gres, sysfs_topology
from ansible_collections.gpuops.hardening.plugins.module_utils.engines.gpu_numa_facts import read_topology
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec, read_text, under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import check_writable, ensure_content
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import Systemctl, is_booted

CGROUP_SETTINGS = {"ConstrainDevices": "yes", "ConstrainCores": "yes"}


def node_gpus(feature, host):
    """The GPUs the lines describe: the gpus option, else the topology of a feature of this call, else the node's."""
    params = feature.params
    if params["gpus"] is not None:
        return params["gpus"]
    facts = host.facts.get(params["topology_feature"]) if params["topology_feature"] else None
    if facts and "gpu_topology" in facts:
        return facts["gpu_topology"]["gpus"]
    return read_topology(feature, None, True)["gpus"]


def wanted_lines(feature, host, warnings):
    """The block's lines, or a failure that names the GPU and what is missing."""
    params = feature.params
    if params["autodetect"] == "nvml":
        return ["AutoDetect=nvml"]
    gpus = node_gpus(feature, host)
    cpu_cores = sysfs_topology.read_cpu_cores(under_root(params["root"], "/sys"))
    if not cpu_cores:
        cpu_dir = under_root(params["root"], "/sys/devices/system/cpu")
        feature.fail_json(msg="no CPU topology under %s: Cores= cannot be computed" % cpu_dir)
    try:
        return slurm_gres.gres_lines(gpus, slurm_gres.core_index_map(cpu_cores), params["gpu_type"],
                                     mig_minors=read_mig_minors(feature, gpus), warnings=warnings)
    except slurm_gres.GresError as error:
        feature.fail_json(msg="gres.conf not changed: %s" % error)
    return []  # pragma: no cover


def read_mig_minors(feature, gpus):
    """The node's mig-minors table, read only when a GPU has MIG devices; fails when it is missing."""
    if not any(gpu.get("mig_mode") == "Enabled" and gpu.get("mig_devices") for gpu in gpus):
        return {}
    path = under_root(feature.params["root"], slurm_gres.MIG_MINORS_PATH)
    text = read_text(path)
    if text is None:
        feature.fail_json(msg="gres.conf not changed: MIG devices exist but %s cannot be read, so their "
                          "/dev/nvidia-caps files are unknown; is the NVIDIA driver loaded?" % path)
    return slurm_gres.parse_mig_minors(text)


def converge_file(feature, path, content, diffs):
    result, diff = ensure_content(feature, path, content, mode=None, backup=feature.params["backup"])
    if diff:
        diffs.append(diff)
    return result


NAME = 'slurm_gres'
ARGUMENT_SPEC = host_argument_spec()
ARGUMENT_SPEC.update(
    gpus=dict(type="list", elements="dict"),
    topology_feature=dict(type="str"),
    autodetect=dict(type="str", choices=["off", "nvml"], default="off"),
    gpu_type=dict(type="str"),
    config_dir=dict(type="path", default="/etc/slurm"),
    cgroup=dict(type="bool", default=True),
    backup=dict(type="bool", default=True),
    slurmd_action=dict(type="str", choices=["restart", "reconfigure", "none"], default="none"),
    slurmd_unit=dict(type="str", default="slurmd.service"),
)
SPEC_RULES = {}


def handlers(spec, result):
    """What the play does after a change: slurmd restarted where its unit is installed, or the cluster reconfigured."""
    if not result.get("changed") or spec["slurmd_action"] == "none":
        return []
    if spec["slurmd_action"] == "reconfigure":
        return [{"action": "command", "argv": ["scontrol", "reconfigure"]}]
    return [{"action": "restart", "unit": spec["slurmd_unit"]}] if result.get("slurmd_installed") else []


def slurmd_installed(feature):
    """Whether systemd runs here and knows slurmd's unit (a node may get gres.conf before Slurm is installed)."""
    if not is_booted() or not feature.get_bin_path("systemctl"):
        return False
    shown = Systemctl(feature, timeout=feature.params["timeout"]).show([feature.params["slurmd_unit"]], ["LoadState"])
    return bool(shown) and shown[0].get("LoadState") == "loaded"


def converge(spec, host, check_mode):
    """Converge this feature on the node as spec says (check_mode: only say what would change); returns the result."""
    feature = host.feature(NAME, spec, check_mode)
    config_dir = under_root(feature.params["root"], feature.params["config_dir"])
    gres_path = os.path.join(config_dir, "gres.conf")
    cgroup_path = os.path.join(config_dir, "cgroup.conf")

    warnings = []
    lines = wanted_lines(feature, host, warnings)
    for warning in warnings:
        feature.warn(warning)
    gres_before = read_text(gres_path) or ""
    clashing = slurm_gres.unmanaged_gpu_lines(gres_before)
    if clashing:
        feature.fail_json(msg="gres.conf not changed: %s defines GPUs outside the block this module manages (%s); "
                          "remove them, or move them into it" % (gres_path, "; ".join(clashing)))
    try:
        gres_after = slurm_gres.merge_block(gres_before, lines)
    except slurm_gres.GresError as error:
        feature.fail_json(msg="%s not changed: %s" % (gres_path, error))
    cgroup_after = None
    if feature.params["cgroup"]:
        cgroup_after = slurm_gres.merge_key_values(read_text(cgroup_path) or "", CGROUP_SETTINGS)

    # Both files or neither: check the folder takes files before the first write.
    check_writable(feature, gres_path, gres_after)
    diffs = []
    result = dict(changed=False, lines=lines, cgroup_conf=None,
                  wanted=slurm_gres.parse_gres_gpus("\n".join(lines)),
                  current=slurm_gres.parse_gres_gpus(gres_before),
                  autodetect_current=slurm_gres.has_autodetect_nvml(gres_before))
    result["gres_conf"] = converge_file(feature, gres_path, gres_after, diffs)
    if cgroup_after is not None:
        result["cgroup_conf"] = converge_file(feature, cgroup_path, cgroup_after, diffs)
    result["changed"] = any(item and item["changed"] for item in (result["gres_conf"], result["cgroup_conf"]))
    result["diff"] = diffs
    if result["changed"] and feature.params["slurmd_action"] == "restart":
        result["slurmd_installed"] = slurmd_installed(feature)
    return result
