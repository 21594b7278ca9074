# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Check mode over the whole site.yml changes nothing, on a fresh node and on a converged one.

Two nodes, as inventory/lab.yml defines gpu-mig (A100s with MIG layouts) and
gpu-infer (L40S with MPS): a fresh node's fingerprint (files, live values, GPU
state) stays as it was through `--check --diff`; after a converge, `--check`
reports changed=0 and the fingerprint stays again.
"""

from __future__ import annotations

import os

import pytest
import yaml

from fingerprint import differences, fingerprint
from lab import REPO_ROOT, recap, run_playbook, start_nodes, stop_nodes


def _lab_host(name):
    """A host of inventory/lab.yml with its group's vars, without its connection vars."""
    with open(os.path.join(REPO_ROOT, "inventory", "lab.yml"), encoding="utf-8") as handle:
        groups = yaml.safe_load(handle)["all"]["children"]["gpu_nodes"]["children"]
    for group in groups.values():
        if name in group["hosts"]:
            return dict(group.get("vars") or {}, **group["hosts"][name])
    raise KeyError(name)


def _training(host_vars):
    """The gpu-mig node's hardware and layouts on a training node."""
    return dict(host_vars, gpuops_profile="training")


SPEC = {
    "rel-check-mig": _training(_lab_host("gpu-mig")),
    "rel-check-infer": _lab_host("gpu-infer"),
}


@pytest.fixture(scope="module")
def inventory(tmp_path_factory):
    path = start_nodes(SPEC, tmp_path_factory.mktemp("check_mode"))
    yield path
    stop_nodes(SPEC)


def _fingerprints():
    return dict((node, fingerprint(node)) for node in SPEC)


def _assert_unchanged(before, output):
    changed = dict((node, differences(before[node], fingerprint(node))) for node in SPEC)
    assert changed == dict((node, []) for node in SPEC), output[-6000:]


def test_check_mode_changes_nothing_on_fresh_and_converged_nodes(inventory):
    before = _fingerprints()
    returncode, output = run_playbook(inventory, flags=("--check", "--diff"))
    assert returncode == 0, output[-8000:]
    _assert_unchanged(before, output)

    returncode, output = run_playbook(inventory)
    assert returncode == 0, output[-8000:]

    converged = _fingerprints()
    for node in SPEC:
        assert differences(before[node], converged[node]), "the converge changed nothing on %s" % node
    returncode, output = run_playbook(inventory, flags=("--check",))
    assert returncode == 0, output[-8000:]
    for node in SPEC:
        assert recap(output, node)["changed"] == 0, output[-8000:]
    _assert_unchanged(converged, output)
