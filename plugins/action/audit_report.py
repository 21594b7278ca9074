# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of gpuops.hardening.audit_report: writes the fleet's audit files on the controller."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import os

from ansible.plugins.action import ActionBase

from ansible_collections.gpuops.hardening.plugins.plugin_utils import audit_baseline
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_document import (
    failed_checks,
    summary,
    unaudited_document,
)
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_files import (
    file_name,
    read_json,
    write_atomically,
    write_json,
)
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_html import render_fleet_report
from ansible_collections.gpuops.hardening.plugins.plugin_utils.plain_data import plain

REPORT_SCHEMA_VERSION = 1
UNAUDITED = "not audited: the node was unreachable or failed before its checks"


class ActionModule(ActionBase):
    """Collects every node's gpuops_audit fact and writes the JSON documents, the HTML report and baselines."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _VALID_ARGS = frozenset(("nodes", "report_dir", "baseline_dir", "save_baseline", "compare_baseline", "title"))

    def _documents(self, nodes, hostvars):
        documents = []
        for node in nodes:
            node_vars = hostvars.get(node) or {}
            # The fact under ansible_facts: facts are top-level variables only while inject_facts_as_vars is on,
            # which ansible-core deprecates.
            facts = plain(node_vars.get("ansible_facts")) if "ansible_facts" in node_vars else {}
            document = (facts or {}).get("gpuops_audit")
            if document is None:
                profile = plain(node_vars.get("gpuops_profile")) if "gpuops_profile" in node_vars else None
                document = unaudited_document(node, profile, UNAUDITED)
            documents.append(document)
        return documents

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        task_vars = task_vars or {}
        args = self._task.args
        report_dir = os.path.abspath(args.get("report_dir") or "audit-reports")
        baseline_dir = os.path.abspath(args.get("baseline_dir") or "audit-baselines")
        title = args.get("title") or "GPU fleet audit"
        nodes = sorted(set(plain(args.get("nodes") or [])))
        documents = self._documents(nodes, task_vars.get("hostvars") or {})
        generated_at = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

        # The audit role checks the names first; callers of the module alone get the same rule here.
        for option in ("save_baseline", "compare_baseline"):
            if args.get(option) and audit_baseline.check_name(args[option]):
                result.update(failed=True, msg="%s: got %r; allowed: %s" % (option, args[option], audit_baseline.check_name(args[option])))
                return result

        comparison = None
        if args.get("compare_baseline"):
            path = os.path.join(baseline_dir, args["compare_baseline"] + ".json")
            saved, problem = read_json(path)
            problem = problem or audit_baseline.check_baseline(saved)
            if problem:
                result.update(failed=True, msg="audit_compare_baseline: cannot compare with %s: %s" % (path, problem))
                return result
            comparison = audit_baseline.compare(saved, documents)

        written = []
        for document in documents:
            written.append(write_json(os.path.join(report_dir, "nodes", file_name(document["node"]) + ".json"), document))
        fleet = {
            "schema_version": REPORT_SCHEMA_VERSION, "title": title, "generated_at": generated_at,
            "totals": summary([item for document in documents for item in document["checks"]]),
            "nodes": [{"node": d["node"], "profile": d["profile"], "error": d["error"], "summary": d["summary"],
                       "readiness": (d.get("readiness") or {}).get("verdict"), "failed": failed_checks(d)}
                      for d in documents],
            "comparison": comparison,
        }
        written.append(write_json(os.path.join(report_dir, "fleet.json"), fleet))
        html_path = os.path.join(report_dir, "fleet.html")
        write_atomically(html_path, render_fleet_report(documents, comparison=comparison, generated_at=generated_at, title=title))
        written.append(html_path)

        baseline_path = None
        if args.get("save_baseline"):
            baseline_path = write_json(os.path.join(baseline_dir, args["save_baseline"] + ".json"),
                                       audit_baseline.baseline(args["save_baseline"], generated_at, documents))

        failures = dict((d["node"], failed_checks(d)) for d in documents if failed_checks(d) or d["error"])
        result.update(
            changed=False, report_dir=report_dir, html=html_path, files=written, baseline=baseline_path,
            totals=fleet["totals"], failures=failures, comparison=comparison,
            msg=self._message(fleet, html_path, failures, documents),
        )
        return result

    @staticmethod
    def _message(fleet, html_path, failures, documents):
        totals = fleet["totals"]
        counts = ", ".join("%d %s" % (totals[verdict], verdict) for verdict in ("PASS", "FAIL", "WARN", "SKIP"))
        lines = ["%d node(s): %s. Report: %s" % (len(documents), counts, html_path)]
        errors = dict((d["node"], d["error"]) for d in documents if d["error"])
        for node in sorted(failures):
            lines.append("%s: %s" % (node, errors.get(node) or "FAIL " + ", ".join(failures[node])))
        return "; ".join(lines)
