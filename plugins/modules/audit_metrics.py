#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: audit_metrics
short_description: Write a node's audit results as node_exporter textfile metrics
version_added: "2.0.0"
description:
  - Renders the node's audit document (the C(gpuops_audit) fact M(gpuops.hardening.audit_node) sets) in Prometheus'
    text format and writes it, mode 0644, as C(gpuops_hardening.prom) in O(directory), the folder node_exporter's
    textfile collector reads. The file is written to a temporary file in the same folder and renamed, so the
    collector never reads half of it.
  - "The series: C(gpuops_build_info{version}), C(gpuops_audit_last_run_timestamp_seconds),
    C(gpuops_converge_last_run_timestamp_seconds) (the modification time of C(/var/lib/gpuops-hardening/last-converge),
    which the node call sets after a converge; absent before the first), C(gpuops_audit_info{profile}),
    C(gpuops_audit_error), C(gpuops_audit_checks{verdict}), C(gpuops_check_status{check,area,verdict}) and
    C(gpuops_node_readiness{verdict}) (1 for the current verdict, 0 for the others), and with O(baseline) the
    measured medians C(gpuops_baseline_copy_bytes_per_second{gpu,direction,memory,size_bytes}) and
    C(gpuops_baseline_context_startup_seconds{gpu}). No label carries a reason or other free text."
  - The file changes when a series other than the audit's time changes; the time alone moving is not a change, but
    the file is written again so that it moves.
  - In check mode it writes nothing and says whether the results would change, with the diff.
author:
  - gpuops.hardening developers (@gpuops)
options:
  document:
    description: The node's audit document, the C(gpuops_audit) fact.
    type: dict
    required: true
  baseline:
    description: The node's baseline document (C(nodes/<node>.json) of the baseline role's report), if one was measured.
    type: dict
  version:
    description:
      - The version C(gpuops_build_info) names; the action plugin sets the collection's own (galaxy.yml's, as
        C(MANIFEST.json) holds it once installed) when the task does not.
    type: str
    required: true
  directory:
    description:
      - The textfile collector's folder on the node (node_exporter's C(--collector.textfile.directory)). Where it
        does not exist the module warns and writes nothing (the host stays in the run). The audit role sets it
        from C(audit_metrics_dir), whose default is Debian's C(/var/lib/prometheus/node-exporter).
    type: path
    required: true
  root:
    description: The directory the host's file system is read and written under; tests point it at a prepared tree.
    type: path
    default: /
notes:
  - Supports check mode and diff mode.
"""

EXAMPLES = r"""
- name: Write the audit's metrics for node_exporter
  gpuops.hardening.audit_metrics:
    document: "{{ ansible_facts.gpuops_audit }}"
    directory: /var/lib/prometheus/node-exporter
"""

RETURN = r"""
path:
  description: The metrics file.
  returned: always
  type: str
  sample: /var/lib/prometheus/node-exporter/gpuops_hardening.prom
series:
  description: How many samples the file holds.
  returned: always
  type: int
  sample: 212
"""

import os
import stat
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils import audit_metrics, converge_stamp
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import read_text, under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import ensure_content, file_diff

FILE_NAME = "gpuops_hardening.prom"
MODE = 0o644


def main():
    module = AnsibleModule(
        argument_spec=dict(
            document=dict(type="dict", required=True),
            baseline=dict(type="dict"),
            version=dict(type="str", required=True),
            directory=dict(type="path", required=True),
            root=dict(type="path", default="/"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    directory = under_root(params["root"], params["directory"])
    path = os.path.join(directory, FILE_NAME)
    if not os.path.isdir(directory):
        # A warning, not a failure: a failed host would leave the rest of the run (readiness.yml's gate among it),
        # and Prometheus still says so, since the node's series stop (the rules' "not audited" alert).
        module.warn("directory: %s does not exist, so no metrics were written; install node_exporter (Debian: "
                    "prometheus-node-exporter) or set audit_metrics_dir to its --collector.textfile.directory"
                    % params["directory"])
        module.exit_json(changed=False, path=path, series=0)
    text = audit_metrics.render(params["document"], params["version"], int(time.time()),
                                converged_at=_whole_seconds(converge_stamp.last_converged(params["root"])),
                                baseline=params["baseline"])
    before = read_text(path)
    results_changed = before is None or audit_metrics.without_audit_time(before) != audit_metrics.without_audit_time(text)
    mode_changed = before is not None and stat.S_IMODE(os.stat(path).st_mode) != MODE
    ensure_content(module, path, text, mode=MODE)
    result = dict(changed=results_changed or mode_changed, path=path, series=_samples(text))
    if results_changed:
        result["diff"] = file_diff(path, audit_metrics.without_audit_time(before) if before is not None else None,
                                   audit_metrics.without_audit_time(text))
    module.exit_json(**result)


def _whole_seconds(stamp):
    return None if stamp is None else int(stamp)


def _samples(text):
    return sum(1 for line in text.splitlines() if line and not line.startswith("#"))


if __name__ == "__main__":
    main()
