# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/readiness.yml: the audit judges every GPU node in check mode, then the gate acts on the nodes of the
schedulers' groups, from the verdict that audit set, and on nothing else."""

from __future__ import annotations

import os

from ansible_collections.gpuops.hardening.plugins.plugin_utils.role_inputs import read_yaml_file

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")


def test_the_audit_runs_first_in_check_mode_then_the_gate():
    audit, gate = read_yaml_file(os.path.join(ROOT, "playbooks", "readiness.yml"))
    assert audit["hosts"] == "gpu_nodes" and audit["check_mode"] is True
    assert [task["ansible.builtin.import_role"]["name"] for task in audit["tasks"]] == ["gpuops.hardening.audit"]
    assert gate["hosts"] == "slurm_nodes:kubernetes_nodes" and "check_mode" not in gate
    assert [task["ansible.builtin.import_role"]["name"] for task in gate["tasks"]] == ["gpuops.hardening.readiness_gate"]


def test_each_gate_task_reads_the_audits_verdict_and_runs_for_its_group_only():
    tasks = read_yaml_file(os.path.join(ROOT, "roles", "readiness_gate", "tasks", "gate.yml"))
    refuse, slurm, kubernetes = tasks
    assert refuse["when"] == "audit_readiness is not defined"
    for task, scheduler, group in ((slurm, "slurm", "slurm_nodes"), (kubernetes, "kubernetes", "kubernetes_nodes")):
        args = task["gpuops.hardening.readiness_gate"]
        assert args["scheduler"] == scheduler and task["when"] == "'%s' in group_names" % group
        assert args["verdict"] == "{{ audit_readiness.verdict }}"
        assert args["reasons"] == "{{ audit_readiness.reasons }}"
    assert "delegate_to" in kubernetes and "delegate_to" not in slurm
