# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Drift made in the same run, after the validation, is repaired by that run: no call is answered from an earlier
check (docs/design.md: Feature engines)."""

from __future__ import annotations

import json
import re

from lab_playbook import feature_status, node_result, run_playbook

testinfra_hosts = ["gpu-train"]

SYSCTL_FILE = "/etc/sysctl.d/90-gpuops-hardening.conf"


def test_a_file_changed_between_the_validation_and_the_tuning_is_put_back(host):
    rc, output = run_playbook("molecule/default/plays/drift_after_validation.yml", "gpu-train", flags=("-v",))
    assert rc == 0, output[-4000:]
    assert feature_status(output, "sysctl_settings", "gpu-train") == "changed", output[-4000:]
    content = host.file(SYSCTL_FILE).content_string
    assert "vm.swappiness = 0" in content and "vm.swappiness = 60" not in content, content
    again, output = run_playbook("playbooks/site.yml", "gpu-train", flags=("-v",))
    assert again == 0 and feature_status(output, "sysctl_settings", "gpu-train") == "ok", output[-4000:]


def test_facts_kept_out_of_the_variables_change_nothing(host, tmp_path):
    """ansible-core deprecates injecting facts as variables: with inject_facts_as_vars off, site.yml converges the
    converged node to nothing, and the audit still reads the topology fact."""
    facts_apart = {"ANSIBLE_INJECT_FACT_VARS": "False"}
    rc, output = run_playbook("playbooks/site.yml", "gpu-train", flags=("-v",), env=facts_apart)
    assert rc == 0 and node_result(output, "gpu-train")["changed"] is False, output[-4000:]
    assert re.search(r"gpu-train\s*:\s*ok=\d+\s+changed=0\s", output), output[-4000:]
    rc, output = run_playbook("playbooks/audit.yml", "gpu-train", env=facts_apart,
                              extra_vars={"audit_report_dir": str(tmp_path)})
    assert rc == 0, output[-4000:]
    with open(str(tmp_path / "nodes" / "gpu-train.json"), encoding="utf-8") as handle:
        document = json.load(handle)
    assert document["topology"]["gpus"], "the audit found no GPU topology"
