# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AWX job templates' playbooks run as AWX runs a job: ansible-runner, the EE as a container.

Each job gets a private data directory laid out as AWX 24.6.1 lays one out
(tests/ee/awx_job.py): the project's checkout, the inventory as AWX's script, the
template's extra vars with the survey answered with its defaults (typed as AWX
sends them, the answers `!unsafe`), the command line, the environment, and
ansible-runner's settings with the image AWX is configured with
(playbooks/awx/configure.yml) in container isolation. `ansible-runner run` starts
it with docker against gpu-train, started as the container gpu-awx-train
(tests/ee/ee_lab.py). Every job's per-host counts from its runner_on_* events
must equal its playbook_on_stats event and the PLAY RECAP of its output
(tests/ee/runner_events.py). After the second converge, `ansible-navigator run`
with the same image runs site.yml, as a person would locally.

Run it with scripts/ee-test.sh, which builds and tags the image.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

import awx_job
import node_state
import runner_events
from ee_lab import BIN, HOST, LAB_INVENTORY, REPO_ROOT, prepared_node

sys.path.insert(0, os.path.join(REPO_ROOT, "playbooks", "collections"))
# pylint: disable-next=wrong-import-position
from ansible_collections.gpuops.hardening.plugins.filter.awx_survey_spec import awx_survey_spec  # noqa: E402
# pylint: disable-next=wrong-import-position
from ansible_collections.gpuops.hardening.plugins.plugin_utils.awx_survey import launch_extra_vars  # noqa: E402

CONTAINER = "gpu-awx-train"
# The image's ansible-core (execution-environment.yml); the host venv runs 2.19.
EE_CORE = "2.21"
with open(os.path.join(REPO_ROOT, "playbooks", "awx", "configure.yml"), encoding="utf-8") as _handle:
    AWX_VARS = yaml.safe_load(_handle)[0]["vars"]
with open(os.path.join(REPO_ROOT, "playbooks", "awx", "job_templates.yml"), encoding="utf-8") as _handle:
    TEMPLATES = dict((template["name"], template) for template in yaml.safe_load(_handle)["gpuops_awx_job_templates"])
# The jobs in the order they run on the one node: a fresh node converged, then every template with its
# defaults; ansible-navigator's run of site.yml comes after "again".
JOBS = [
    ("converge", "gpuops harden (training)"),
    ("again", "gpuops harden (training)"),
    ("mig", "gpuops MIG reconfigure"),
    ("audit", "gpuops audit"),
    ("mps", "gpuops MPS on/off"),
    ("inference", "gpuops harden (inference)"),
]


def lab_inventory(node_inventory):
    """The lab's inventory as AWX holds it once imported: groups with their variables, as JSON."""
    listed = subprocess.run([os.path.join(BIN, "ansible-inventory"), "-i", LAB_INVENTORY, "-i", node_inventory,
                             "--list", "--export"], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    return json.loads(listed.stdout)


def launch(work, ident, name, inventory):
    """One job of template NAME with its survey defaults: {template, dir, rc, output, events}."""
    template = TEMPLATES[name]
    private_data_dir = os.path.join(str(work), "job-%d" % ident)
    awx_job.write_private_data_dir(private_data_dir, {
        "id": ident, "template": template, "answers": launch_extra_vars(template, awx_survey_spec(template)),
        "inventory": inventory, "limit": HOST, "image": AWX_VARS["gpuops_awx_ee_image"],
        "pull": AWX_VARS["gpuops_awx_ee_pull"], "checkout": REPO_ROOT})
    rc, output, artifacts = awx_job.run_job(private_data_dir, template["playbook"], ident)
    return {"template": name, "dir": private_data_dir, "artifacts": artifacts, "rc": rc, "output": output,
            "events": runner_events.load_events(artifacts)}


def navigator_site(work, node_inventory):
    """`ansible-navigator run` of site.yml in the EE, from a copy of the checkout, as the README shows it."""
    project = os.path.join(str(work), "navigator")
    awx_job.copy_project(REPO_ROOT, project)
    with open(node_inventory, encoding="utf-8") as source, \
            open(os.path.join(project, "ee-node.yml"), "w", encoding="utf-8") as target:
        target.write(source.read())
    # -vv: ansible-playbook names its ansible-core first, the image's (2.21) and not the venv's.
    command = [os.path.join(BIN, "ansible-navigator"), "run", "playbooks/site.yml",
               "-i", "inventory/lab.yml", "-i", "ee-node.yml", "-l", HOST, "-vv",
               "--mode", "stdout", "--ee", "true", "--eei", AWX_VARS["gpuops_awx_ee_image"], "--pp", "never",
               "--ce", "docker", "--co=--network=none",
               "--eev", "%s:%s" % (awx_job.DOCKER_SOCKET, awx_job.DOCKER_SOCKET),
               "--pae", "false", "--lf", os.path.join(str(work), "navigator.log")]
    done = subprocess.run(command, cwd=project, capture_output=True, text=True, check=False, timeout=900)
    return {"rc": done.returncode, "output": done.stdout + done.stderr}


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    """step -> its job, each run in turn on one node; "navigator" after "again"."""
    work = tmp_path_factory.mktemp("awx-runner")
    with prepared_node(work, CONTAINER) as node_inventory:
        inventory = lab_inventory(node_inventory)
        done = {}
        for ident, (step, name) in enumerate(JOBS, start=1):
            done[step] = launch(work, ident, name, inventory)
            if step == "again":
                done["navigator"] = navigator_site(work, node_inventory)
            if step == "mps":
                # Read before the inference job runs on the same node.
                done["mps"]["node"] = node_state.mps_state(CONTAINER)
        yield done


def summary(job):
    """gpu-train's line of the job's PLAY RECAP, from its events' stdout."""
    recap = runner_events.recap_from_stdout(runner_events.job_stdout(job["events"]))
    assert HOST in recap, job["output"][-3000:]
    return recap[HOST]


def test_every_template_runs_as_a_job():
    assert sorted(set(name for _step, name in JOBS)) == sorted(TEMPLATES)


def test_the_private_data_dir_is_laid_out_as_awx_lays_it(jobs):
    job = jobs["converge"]
    assert os.access(os.path.join(job["dir"], "inventory", "hosts"), os.X_OK)
    assert os.path.isfile(os.path.join(job["dir"], "project", "playbooks", "site.yml"))
    with open(os.path.join(job["dir"], "env", "extravars"), encoding="utf-8") as handle:
        extravars = handle.read()
    # The template's own extra var is trusted; a survey answer is not.
    assert "gpuops_profile: training\n" in extravars
    assert "!unsafe 'sysctl_disable_swap': !unsafe 'true'" in extravars
    with open(os.path.join(job["dir"], "env", "cmdline"), encoding="utf-8") as handle:
        assert handle.read() == "-u root --become -l %s" % HOST


def test_ansible_runner_started_the_playbook_in_the_ee_container(jobs):
    with open(os.path.join(jobs["converge"]["artifacts"], "command"), encoding="utf-8") as handle:
        command = json.load(handle)["command"]
    image = command.index(AWX_VARS["gpuops_awx_ee_image"])
    assert command[:2] == ["docker", "run"] and "--network=none" in command[:image]
    assert command[image + 1] == "ansible-playbook" and "playbooks/site.yml" in command[image:]


@pytest.mark.parametrize("step", [step for step, _name in JOBS])
def test_the_host_events_agree_with_the_play_recap(jobs, step):
    job = jobs[step]
    assert job["events"], job["output"][-3000:]
    assert runner_events.disagreements(job["events"]) == []
    assert HOST in runner_events.counts_from_host_events(job["events"])


def test_the_training_template_converges_a_fresh_node_and_then_changes_nothing(jobs):
    assert jobs["converge"]["rc"] == 0 and summary(jobs["converge"])["changed"] > 0, jobs["converge"]["output"][-3000:]
    again = summary(jobs["again"])
    assert jobs["again"]["rc"] == 0 and again["changed"] == 0 and again["failed"] == 0


def test_the_mig_template_fails_before_any_change_on_a_node_without_layouts(jobs):
    job = jobs["mig"]
    counts = summary(job)
    assert job["rc"] != 0 and counts["failed"] == 1 and counts["changed"] == 0, job["output"][-3000:]
    assert "mig_layouts" in runner_events.job_stdout(job["events"])


def test_the_mps_template_starts_one_daemon_for_every_gpu_of_a_node_without_sets(jobs):
    job = jobs["mps"]
    counts = summary(job)
    assert job["rc"] == 0 and counts["changed"] > 0 and counts["failed"] == 0, job["output"][-3000:]
    # gpu-train sets no mps_gpu_sets: one daemon, "all", serving each of its GPUs.
    node = job["node"]
    assert len(node["gpus"]) == 8, node
    assert node["daemons"] == {"gpuops-mps-all.service": node["gpus"]}, node


def test_the_audit_job_fails_the_node_with_a_fail(jobs):
    job = jobs["audit"]
    assert job["rc"] != 0 and summary(job)["failed"] == 1
    with open(os.path.join(job["artifacts"], "status"), encoding="utf-8") as handle:
        assert handle.read().strip() == "failed"
    output = runner_events.job_stdout(job["events"])
    assert "gpu-train fails the audit: " in output and "driver.cuda.13.0" in output, output[-3000:]


def test_the_inference_template_changes_the_profile(jobs):
    job = jobs["inference"]
    assert job["rc"] == 0 and summary(job)["changed"] > 0, job["output"][-3000:]


def test_ansible_navigator_runs_site_in_the_ee(jobs):
    run = jobs["navigator"]
    recap = runner_events.recap_from_stdout(run["output"])[HOST]
    assert run["rc"] == 0 and recap["changed"] == 0 and recap["failed"] == 0, run["output"][-3000:]
    assert "ansible-playbook [core %s." % EE_CORE in run["output"], run["output"][:3000]
