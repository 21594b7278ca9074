# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each AWX job template's playbook on one lab node, launched with its survey defaults as AWX sends them.

The answers come from playbooks/awx/job_templates.yml through the filter AWX's
configure.yml uses, typed as AWX types them (bools as "true" and "false"), in a
JSON extra-vars file as AWX's runner writes one. The node is converged already:
the harden, MIG and MPS templates must change nothing on it (their defaults are
its profile's values), and the audit must fail the node its inventory makes
FAIL (gpu-train: a driver too old for CUDA 13.0). A run that changed anything is
undone with site.yml and the lab's own variables, for the tests after this one.
"""

from __future__ import annotations

import json
import os
import re
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
import yaml

from lab_playbook import REPO_ROOT, run_playbook

sys.path.insert(0, os.path.join(REPO_ROOT, "playbooks", "collections"))
# pylint: disable-next=wrong-import-position
from ansible_collections.gpuops.hardening.plugins.filter.awx_survey_spec import awx_survey_spec  # noqa: E402
# pylint: disable-next=wrong-import-position
from ansible_collections.gpuops.hardening.plugins.plugin_utils.awx_survey import launch_extra_vars  # noqa: E402

with open(os.path.join(REPO_ROOT, "playbooks", "awx", "job_templates.yml"), encoding="utf-8") as _handle:
    TEMPLATES = dict((template["name"], template) for template in yaml.safe_load(_handle)["gpuops_awx_job_templates"])

# template -> the node it runs on: the one whose inventory it matches.
NODES = {
    "gpuops harden (training)": "gpu-train",
    "gpuops harden (inference)": "gpu-infer",
    "gpuops audit": "gpu-train",
    "gpuops MIG reconfigure": "gpu-mig",
    "gpuops MPS on/off": "gpu-infer",
}


def recap(output, node):
    """{ok: n, changed: n, ...} from the node's PLAY RECAP line."""
    line = re.search(r"^%s\s+:(.*)$" % re.escape(node), output, re.M)
    assert line, output[-3000:]
    return dict((key, int(value)) for key, value in re.findall(r"(\w+)=(\d+)", line.group(1)))


def launch(workdir, name):
    """(extra vars sent, return code, output) of one template launched with its survey defaults."""
    template = TEMPLATES[name]
    extra_vars = launch_extra_vars(template, awx_survey_spec(template))
    path = workdir / ("%s.json" % re.sub(r"\W+", "-", name))
    # Where the audit's report goes is the controller's business, not the survey's.
    path.write_text(json.dumps(dict(extra_vars, audit_report_dir=str(workdir / "audit-report"))), encoding="utf-8")
    rc, output = run_playbook(template["playbook"], NODES[name], flags=["-e", "@%s" % path])
    return extra_vars, rc, output


@pytest.fixture(scope="module")
def launches(tmp_path_factory):
    """template -> launch(); nodes a run changed are converged again after. Each node's runs are in turn,
    the nodes side by side."""
    workdir = tmp_path_factory.mktemp("awx")
    by_node = {}
    for name in TEMPLATES:
        by_node.setdefault(NODES[name], []).append(name)
    with ThreadPoolExecutor(max_workers=len(by_node)) as pool:
        done = pool.map(lambda names: [(name, launch(workdir, name)) for name in names], by_node.values())
        runs = dict(run for node_runs in done for run in node_runs)
    yield runs
    changed = sorted(set(NODES[name] for name, (_vars, rc, output) in runs.items()
                         if name != "gpuops audit" and (rc != 0 or recap(output, NODES[name])["changed"])))
    if changed:
        rc, output = run_playbook("playbooks/site.yml", ",".join(changed))
        assert rc == 0, output[-3000:]


def test_every_template_runs_on_a_node():
    assert sorted(NODES) == sorted(TEMPLATES)


def test_the_answers_are_typed_as_awx_sends_them(launches):
    sent = launches["gpuops harden (inference)"][0]
    assert sent["thp_khugepaged_defrag"] == "false" and sent["sysctl_disable_swap"] == "true"
    assert sent["persistenced_timeout"] == 120 and sent["gpuops_profile"] == "inference"
    assert launches["gpuops MPS on/off"][0]["mps_timeout"] == 60
    assert launches["gpuops audit"][0]["audit_fail_on_fail"] == "true"


@pytest.mark.parametrize("name", ["gpuops harden (training)", "gpuops harden (inference)", "gpuops MIG reconfigure",
                                  "gpuops MPS on/off"])
def test_a_template_with_its_defaults_changes_nothing_on_a_converged_node(launches, name):
    _vars, rc, output = launches[name]
    assert rc == 0, output[-3000:]
    counts = recap(output, NODES[name])
    assert counts["changed"] == 0 and counts["failed"] == 0 and counts["ok"] > 0, output[-3000:]


def test_the_scheduled_audit_fails_the_node_with_a_fail(launches):
    _vars, rc, output = launches["gpuops audit"]
    assert rc != 0, output[-3000:]
    assert recap(output, "gpu-train")["failed"] == 1
    assert "gpu-train fails the audit: " in output and "driver.cuda.13.0" in output, output[-3000:]
