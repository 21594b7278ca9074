# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""site.yml and audit.yml inside the execution environment, on the newest supported ansible-core.

The EE image (GPUOPS_EE_IMAGE, built by scripts/ee-build.sh) runs the collection
installed in it (gpuops.hardening.site, gpuops.hardening.audit) with
`docker run IMAGE ansible-playbook ...`, the host's Docker socket mounted for
community.docker's docker connection, no network, against gpu-train started as the
container gpu-ee-train (tests/ee/ee_lab.py). test_ee_awx_runner.py runs the job
templates through ansible-runner, as AWX does.

This is the converge and idempotence run on ansible-core 2.21; the Molecule default
scenario is the one on 2.19 (the host venv). Both versions must give the same
bad-input message and the same audit document. Run it with scripts/ee-test.sh.
"""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from ee_lab import HOST, LAB_INVENTORY, SETTINGS, host_playbook, prepared_node, succeeded

EE_IMAGE = os.environ.get("GPUOPS_EE_IMAGE", "")
NEWEST = "2.21"
CONTAINER = "gpu-ee-train"
DOCKER_SOCKET = "/var/run/docker.sock"
FATAL = re.compile(r"^fatal: \[%s\]: FAILED! => (\{.*\})$" % re.escape(HOST), re.M)


def clean(run):
    """A run of the collection's playbooks: it succeeded, and no deprecation warning is left for a later ansible-core."""
    counts = succeeded(run)
    assert "[DEPRECATION WARNING]" not in run.stdout + run.stderr, run.stdout[-5000:] + run.stderr[-5000:]
    return counts


def failure_message(run):
    assert run.returncode != 0, run.stdout[-3000:]
    fatal = FATAL.findall(run.stdout)
    assert len(fatal) == 1, run.stdout[-3000:]
    return json.loads(fatal[0])["msg"]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The node, and an inventory that points gpu-train at it (besides inventory/lab.yml)."""
    assert EE_IMAGE, "GPUOPS_EE_IMAGE is not set: run scripts/ee-test.sh, which builds the image and sets it"
    work = tmp_path_factory.mktemp("ee-lab")
    with prepared_node(work, CONTAINER) as node_inventory:
        yield {"inventory": node_inventory, "work": work}


def ee_run(lab, *argv, volumes=()):
    """A command in the EE image, as AWX starts a job: the inventory and the Docker socket mounted, no network."""
    command = ["docker", "run", "--rm", "--network", "none",
               "--volume", "%s:%s" % (DOCKER_SOCKET, DOCKER_SOCKET),
               "--group-add", str(os.stat(DOCKER_SOCKET).st_gid),
               "--volume", "%s:/runner/inventory/lab.yml:ro" % LAB_INVENTORY,
               "--volume", "%s:/runner/inventory/ee-node.yml:ro" % lab["inventory"]]
    for volume in volumes:
        command += ["--volume", volume]
    for name, value in sorted(SETTINGS.items()):
        command += ["--env", "%s=%s" % (name, value)]
    return subprocess.run(command + [EE_IMAGE] + list(argv), capture_output=True, text=True, check=False)


def ee_playbook(lab, playbook, *args, volumes=()):
    return ee_run(lab, "ansible-playbook", "-i", "/runner/inventory/lab.yml", "-i", "/runner/inventory/ee-node.yml",
                  "-l", HOST, playbook, *args, volumes=volumes)


@pytest.fixture(scope="module")
def first_converge(lab):
    return ee_playbook(lab, "gpuops.hardening.site")


def test_the_ee_runs_the_newest_ansible_core_and_the_installed_collection(lab):
    version = ee_run(lab, "ansible-playbook", "--version")
    assert version.returncode == 0, version.stderr
    assert re.match(r"ansible-playbook \[core %s\.\d+\]" % re.escape(NEWEST), version.stdout), version.stdout
    listed = ee_run(lab, "ansible-galaxy", "collection", "list", "gpuops.hardening", "--format", "json")
    paths = json.loads(listed.stdout)
    assert list(paths) == ["/usr/share/ansible/collections/ansible_collections"]


def test_converge_in_the_ee(first_converge):
    assert clean(first_converge)["changed"] > 0


def test_second_converge_in_the_ee_changes_nothing(lab, first_converge):
    succeeded(first_converge)
    assert clean(ee_playbook(lab, "gpuops.hardening.site"))["changed"] == 0


def test_audit_in_the_ee_gives_the_same_document_as_on_the_oldest(lab, first_converge):
    succeeded(first_converge)
    ee_reports = lab["work"] / "ee-audit"
    ee_reports.mkdir()
    os.chmod(str(ee_reports), 0o777)  # the EE runs as uid 1000
    audit = ee_playbook(lab, "gpuops.hardening.audit", "-e", "audit_report_dir=/runner/audit",
                        volumes=["%s:/runner/audit" % ee_reports])
    assert clean(audit)["changed"] == 0
    with open(str(ee_reports / "nodes" / ("%s.json" % HOST)), encoding="utf-8") as handle:
        document = json.load(handle)
    verdicts = {check["id"]: check["verdict"] for check in document["checks"]}
    # The lab node's driver (CUDA 12.0) meets CUDA 12.0 and is too old for 13.0 (inventory/lab.yml).
    assert verdicts["driver.cuda.12.0"] == "PASS" and verdicts["driver.cuda.13.0"] == "FAIL"
    assert verdicts["sysctl.boot.vm.swappiness"] == "PASS"
    host_reports = lab["work"] / "host-audit"
    clean(host_playbook(lab["inventory"], "playbooks/audit.yml", "-e", "audit_report_dir=%s" % host_reports))
    with open(str(host_reports / "nodes" / ("%s.json" % HOST)), encoding="utf-8") as handle:
        assert json.load(handle) == document


def test_a_bad_input_gives_the_same_message_on_the_oldest_and_the_newest(lab):
    newest = failure_message(ee_playbook(lab, "gpuops.hardening.site", "-e", "gpuops_profile=gaming"))
    oldest = failure_message(host_playbook(lab["inventory"], "playbooks/site.yml", "-e", "gpuops_profile=gaming"))
    assert newest == oldest
    assert "gpuops_profile" in newest and "gaming" in newest and "training, inference" in newest
