# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's verdicts on Slurm's view of the GPUs: gres.conf cores against the topology facts.

Takes what the slurm_gres module reported in check mode (``wanted``: the lines the
facts give, ``current``: the Name=gpu lines gres.conf holds) and the role's inputs.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.module_utils.cpulist import format_cpulist
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_checks import (
    FAIL,
    PASS,
    SKIP,
    check,
    failure,
    ran,
)

AREA = "slurm"


def _cores(value):
    return "none" if value is None else (format_cpulist(value) or "none")


def slurm_gres_checks(state, inputs, role_error=None):
    """One check per GPU (its gres.conf Cores= against its NUMA-local cores), or the AutoDetect line, and cgroup.conf.

    A node outside slurm_nodes (the role did not run and did not fail) has no Slurm checks at all.
    """
    why = failure(state, role_error)
    if not ran(state):
        if why:
            return [check("slurm.gres", AREA, "gres.conf GPU lines", FAIL, "readable", "unknown", why)]
        return []
    if inputs.get("slurm_gres_autodetect") == "nvml":
        found = [_autodetect(state)]
    else:
        found = [_gpu_line(wanted, state.get("current") or []) for wanted in state.get("wanted") or []]
    found.append(_cgroup(state, inputs))
    return found


def _autodetect(state):
    title = "gres.conf AutoDetect"
    if state.get("autodetect_current"):
        return check("slurm.gres.autodetect", AREA, title, PASS, "AutoDetect=nvml", "AutoDetect=nvml",
                     "slurmd finds the GPUs and their cores through NVML")
    return check("slurm.gres.autodetect", AREA, title, FAIL, "AutoDetect=nvml", "absent",
                 "slurm_gres_autodetect is nvml but gres.conf does not say so")


def _gpu_line(wanted, current):
    # A MIG device's line lists the parent GPU and its two nvidia-caps nodes: all three name it.
    files = wanted["file"].split(",")
    check_id = "slurm.gres.%s" % "+".join(path.rsplit("/", 1)[-1] for path in files)
    title = "gres.conf cores of %s" % (files[0] if len(files) == 1 else "the MIG device at %s" % wanted["file"])
    expected = "Cores=%s" % _cores(wanted["cores"])
    lines = [line for line in current if line.get("file") == wanted["file"]]
    if not lines:
        return check(check_id, AREA, title, FAIL, expected, "no line",
                     "Slurm does not know this GPU, so no job can ask for it")
    if len(lines) > 1:
        return check(check_id, AREA, title, FAIL, expected, "%d lines" % len(lines),
                     "Slurm counts this GPU more than once")
    actual = "Cores=%s" % _cores(lines[0].get("cores"))
    if lines[0].get("cores") == wanted["cores"]:
        return check(check_id, AREA, title, PASS, expected, actual,
                     "jobs with --gres-flags=enforce-binding run on the GPU's NUMA-local cores")
    return check(check_id, AREA, title, FAIL, expected, actual,
                 "Cores= are Slurm core indexes of the GPU's NUMA-local CPUs (not CPU ids); jobs would be bound "
                 "to other cores")


def _cgroup(state, inputs):
    title = "cgroup.conf device and core constraints"
    wanted = "ConstrainDevices=yes, ConstrainCores=yes"
    if not inputs.get("slurm_gres_cgroup", True) or state.get("cgroup_conf") is None:
        return check("slurm.cgroup", AREA, title, SKIP, wanted, "not managed", "slurm_gres_cgroup is false")
    if state["cgroup_conf"].get("changed"):
        return check("slurm.cgroup", AREA, title, FAIL, wanted, "not both set",
                     "jobs can use GPUs and cores they were not given")
    return check("slurm.cgroup", AREA, title, PASS, wanted, wanted, "jobs see only the GPUs and cores they were given")
