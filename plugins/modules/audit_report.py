#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: audit_report
short_description: Write the fleet's audit documents, its HTML report and named baselines on the controller
version_added: "0.3.0"
author:
  - gpuops.hardening developers (@gpuops)
description:
  - Runs on the controller, once for the play. It collects each node's C(gpuops_audit) fact (set by
    M(gpuops.hardening.audit_node)) and writes, each file whole or not at all, C(nodes/<node>.json),
    C(fleet.json) and C(fleet.html) under O(report_dir).
  - C(fleet.html) is one self-contained file with no external assets; it works offline. It holds the table of nodes
    by checks (sortable, filterable), a drill-down per node with every check and its reason, and a topology picture
    per node.
  - A node listed in O(nodes) without an audit document (unreachable, or failed before its checks) gets a document
    whose C(error) says so.
  - O(save_baseline) keeps the run as a named baseline under O(baseline_dir); O(compare_baseline) shows, per node and
    per check, what changed since a saved one.
options:
  nodes:
    description: The nodes of the report, usually C(ansible_play_hosts_all).
    type: list
    elements: str
    required: true
  report_dir:
    description: Folder of the report files; a relative path is relative to the folder C(ansible-playbook) runs in.
    type: path
    default: audit-reports
  baseline_dir:
    description: Folder of the baseline files, one C(<name>.json) each; relative as O(report_dir).
    type: path
    default: audit-baselines
  save_baseline:
    description: Save this run as the baseline of this name, replacing one of the same name.
    type: str
  compare_baseline:
    description: Show what changed since the baseline of this name; the task fails when it cannot be read.
    type: str
  title:
    description: The report's title.
    type: str
    default: GPU fleet audit
extends_documentation_fragment:
  - gpuops.hardening.controller
notes:
  - It writes its files on the controller in check mode too; they are the audit's output, not the node's state.
"""

EXAMPLES = r"""
- name: Write the fleet report and save the run as a baseline
  gpuops.hardening.audit_report:
    nodes: "{{ ansible_play_hosts_all }}"
    report_dir: /var/lib/gpu-audit/reports
    save_baseline: before-thp
  run_once: true
"""

RETURN = r"""
report_dir:
  description: The absolute folder of the report.
  returned: success
  type: str
html:
  description: The path of C(fleet.html).
  returned: success
  type: str
  sample: /srv/audit/fleet.html
files:
  description: Every file written.
  returned: success
  type: list
  elements: str
baseline:
  description: The baseline file written, or null.
  returned: success
  type: str
totals:
  description: Checks per verdict across the fleet.
  returned: success
  type: dict
  sample: {PASS: 120, FAIL: 2, WARN: 20, SKIP: 6}
failures:
  description: Node to the ids of its FAIL checks, for every node with a FAIL or without an audit.
  returned: success
  type: dict
  sample: {gpu-infer: [sysctl.boot.vm.swappiness]}
comparison:
  description: With O(compare_baseline), per node its C(status) (changed, unchanged, new, gone) and the checks that changed.
  returned: success
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(
        argument_spec=dict(nodes=dict(type="list", elements="str", required=True), report_dir=dict(type="path", default="audit-reports"),
                           baseline_dir=dict(type="path", default="audit-baselines"), save_baseline=dict(type="str"),
                           compare_baseline=dict(type="str"), title=dict(type="str", default="GPU fleet audit")),
        supports_check_mode=True)
    module.fail_json(msg="gpuops.hardening.audit_report runs on the controller as an action plugin; call it as a task.")


if __name__ == "__main__":
    main()
