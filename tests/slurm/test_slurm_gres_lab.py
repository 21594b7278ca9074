# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The slurm_gres role against Debian's real Slurm 22.05, on a one-node cluster with emulated GPUs.

slurmd -G must parse the rendered gres.conf and list every GPU with its cores, and a job
on GPU k (--gres=gpu:1 --gres-flags=enforce-binding) must see CUDA_VISIBLE_DEVICES=k and
a CPU affinity inside k's NUMA-local CPUs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time

import pytest

import slurm_lab

CONVERGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "converge.yml")
USER_CGROUP = "CgroupPlugin=autodetect\nConstrainDevices=no\n"
# The slurm_2node profile: GPU k sits on NUMA node k, whose only CPU is k.
NODE_CPUS = {0: {0}, 1: {1}}


def _playbook(inventory, *extra, playbook=CONVERGE):
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_PIPELINING="1",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(slurm_lab.REPO_ROOT, "playbooks", "collections"))
    done = subprocess.run(["ansible-playbook", "-i", inventory, playbook] + list(extra), cwd=slurm_lab.REPO_ROOT,
                          env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    return int(re.search(r"%s\s*:.*changed=(\d+)" % slurm_lab.NODE, done.stdout).group(1))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    subprocess.run([os.path.join(slurm_lab.REPO_ROOT, "scripts", "lab", "build-slurm-image.sh")],
                   capture_output=True, check=True)
    inventory = str(tmp_path_factory.mktemp("slurm") / "inventory.yml")
    slurm_lab.up(inventory)
    subprocess.run(["docker", "exec", "-i", slurm_lab.NODE, "sh", "-c", "cat > /etc/slurm/cgroup.conf"],
                   input=USER_CGROUP, text=True, check=True)
    try:
        yield inventory
    finally:
        slurm_lab.down()


@pytest.fixture(scope="module")
def converged(cluster):
    first = _playbook(cluster)
    # The controller reads Cores= when it starts (gres.conf(5)).
    slurm_lab.exec_in(["systemctl", "restart", "slurmctld"])
    slurm_lab.exec_in(["systemctl", "is-active", "slurmd"])
    return cluster, first


def test_converge_is_idempotent_and_check_mode_changes_nothing(converged):
    inventory, first = converged
    assert first > 0
    assert _playbook(inventory) == 0
    assert _playbook(inventory, "--check") == 0


def test_user_keys_of_cgroup_conf_are_kept(converged):
    text = slurm_lab.exec_in(["cat", "/etc/slurm/cgroup.conf"]).stdout
    assert text == "CgroupPlugin=autodetect\nConstrainDevices=yes\nConstrainCores=yes\n"


def test_slurmd_parses_every_gpu_with_its_cores(converged):
    shown = slurm_lab.exec_in(["slurmd", "-G"])
    output = shown.stdout + shown.stderr
    found = dict((int(m.group(1)), m.group(2)) for m in
                 re.finditer(r"Gres Name=gpu Type=l40s .*File=/dev/nvidia(\d+) Cores=(\S+)", output))
    assert found == {0: "0", 1: "1"}, output


def test_slurmd_has_the_memlock_drop_in(converged):
    shown = slurm_lab.exec_in(["systemctl", "show", "-p", "LimitMEMLOCK", "slurmd.service"]).stdout
    assert shown.strip() == "LimitMEMLOCK=infinity"


def parse_cpulist(text):
    """The kernel's 0-1,3 list form as ints."""
    cpus = []
    for group in text.split(","):
        first, _dash, last = group.partition("-")
        cpus.extend(range(int(first), int(last or first) + 1))
    return cpus


def _job_view(text):
    """(CUDA_VISIBLE_DEVICES, the CPUs of Cpus_allowed_list) printed by a job."""
    gpu = re.search(r"CVD=(\S*)", text).group(1)
    cpus = re.search(r"Cpus_allowed_list:\s*(\S+)", text).group(1)
    return gpu, set(parse_cpulist(cpus))


def test_jobs_are_bound_to_their_gpus_numa_local_cores(converged):
    probe = "echo CVD=$CUDA_VISIBLE_DEVICES; grep Cpus_allowed_list /proc/self/status"
    flags = ["--gres=gpu:1", "--gres-flags=enforce-binding", "-n1"]
    # A batch job takes the first GPU and holds it; the next job gets the other one.
    held_job = ["sbatch", "--output=/tmp/held.out"] + flags + ["--wrap", probe + "; sleep 30"]
    slurm_lab.exec_in(held_job)
    deadline = time.monotonic() + 60
    while "CVD=" not in slurm_lab.exec_in(["cat", "/tmp/held.out"], check=False).stdout:
        assert time.monotonic() < deadline, slurm_lab.exec_in(["squeue"]).stdout
        time.sleep(1)
    held = _job_view(slurm_lab.exec_in(["cat", "/tmp/held.out"]).stdout)
    second = _job_view(slurm_lab.exec_in(["timeout", "120", "srun"] + flags + ["sh", "-c", probe]).stdout)
    slurm_lab.exec_in(["scancel", "--user=root"], check=False)
    seen = dict([held, second])
    assert sorted(seen) == ["0", "1"]
    for gpu, cpus in seen.items():
        assert cpus <= NODE_CPUS[int(gpu)], json.dumps({gpu: sorted(cpus)})


def test_the_audit_passes_the_gres_cores_and_fails_cpu_ids(converged, tmp_path):
    inventory, _first = converged
    audit = os.path.join(slurm_lab.REPO_ROOT, "playbooks", "audit.yml")

    def slurm_checks(report):
        _playbook(inventory, "-e", "audit_report_dir=%s" % report, playbook=audit)
        with open(os.path.join(report, "nodes", "%s.json" % slurm_lab.NODE), encoding="utf-8") as handle:
            checks = json.load(handle)["checks"]
        return dict((item["id"], item["verdict"]) for item in checks if item["area"] == "slurm")

    assert slurm_checks(str(tmp_path / "good")) == {
        "slurm.gres.nvidia0": "PASS", "slurm.gres.nvidia1": "PASS", "slurm.cgroup": "PASS"}
    # GPU 1's line with another core, as a hand-written file might have it.
    slurm_lab.exec_in(["sed", "-i", "s|nvidia1 Cores=1|nvidia1 Cores=0|", "/etc/slurm/gres.conf"])
    try:
        assert slurm_checks(str(tmp_path / "bad"))["slurm.gres.nvidia1"] == "FAIL"
    finally:
        _playbook(inventory)
