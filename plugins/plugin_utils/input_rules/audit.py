# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""audit: CUDA versions NVIDIA's minimum-driver table knows, baseline names that are file names, and per-model
overrides whose keys and values the hardware checks know, a metrics folder that is an absolute path on the node,
and container thresholds of 1 or more."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.plugin_utils import driver_compat, gpu_models
from ansible_collections.gpuops.hardening.plugins.plugin_utils.input_rules.common import bad, baseline_name_errors, unchanged

REMOVED = {
    "gpuops_audit_fail_on_drift": "audit_fail_on_fail",
}


def errors(inputs, profile_entry):  # pylint: disable=unused-argument
    found = []
    for version in inputs.get("audit_cuda_versions") or []:
        try:
            driver_compat.cuda_driver_floor(version)
        except ValueError:
            found.append(bad("audit_cuda_versions", version, "CUDA versions such as 12.4 or 13.0, of the majors "
                             "NVIDIA's minimum-driver table lists: %s" % ", ".join("%d.x" % major for major in driver_compat.known_cuda_majors())))
    found.extend(baseline_name_errors(inputs, "audit_save_baseline", "audit_compare_baseline"))
    for name, key, value, allowed in gpu_models.override_errors(inputs.get("audit_gpu_models") or {}):
        where = "audit_gpu_models" + ('["%s"]' % name if name is not None else "") + ("." + key if key else "")
        found.append(bad(where, value, allowed))
    metrics_dir = inputs.get("audit_metrics_dir")
    if not isinstance(metrics_dir, str) or not metrics_dir.startswith("/"):
        found.append(bad("audit_metrics_dir", metrics_dir, "an absolute path on the node, the folder node_exporter's "
                         "textfile collector reads, such as /var/lib/prometheus/node-exporter"))
    for name, unit in (("audit_container_free_space_gib", "GiB"), ("audit_container_writable_layer_mib", "MiB")):
        value = inputs.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value < 1:
            found.append(bad(name, value, "an integer of 1 or more (%s)" % unit))
    return found


resolve = unchanged
