# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The slurm_gres role against Debian's real Slurm 22.05, on a one-node cluster with emulated GPUs.

slurmd -G must parse the rendered gres.conf and list every GPU with its cores, and a job
on GPU k (--gres=gpu:1 --gres-flags=enforce-binding) must see CUDA_VISIBLE_DEVICES=k and
a CPU affinity inside k's NUMA-local CPUs. Then GPU 1 turns MIG on with two 3g.40gb devices:
slurmd -G must parse their MultipleFiles= lines, and a job on one must run on GPU 1's cores.
"""

from __future__ import annotations

import json
import os
import re
import time

import slurm_lab

CONVERGE = slurm_lab.CONVERGE
SITE = os.path.join(slurm_lab.REPO_ROOT, "playbooks", "site.yml")
# The slurm_2node profile: GPU k sits on NUMA node k, whose only CPU is k.
NODE_CPUS = {0: {0}, 1: {1}}
# What a job prints of its GPU and CPUs (_job_view reads it).
JOB_PROBE = "echo CVD=$CUDA_VISIBLE_DEVICES; grep Cpus_allowed_list /proc/self/status"


def _playbook(inventory, *extra, playbook=CONVERGE):
    return slurm_lab.playbook_changes(inventory, *extra, playbook=playbook)


def test_converge_is_idempotent_and_check_mode_changes_nothing(converged):
    inventory, first = converged
    assert first > 0
    assert _playbook(inventory) == 0
    assert _playbook(inventory, "--check") == 0
    # site.yml's node call, its slurm_gres and memlock features selected by the tag, finds the role's own work done.
    assert _playbook(inventory, "--tags", "slurm_gres", playbook=SITE) == 0


def test_user_keys_of_cgroup_conf_are_kept(converged):
    text = slurm_lab.exec_in(["cat", "/etc/slurm/cgroup.conf"]).stdout
    # The cluster's own cgroup.conf was conftest.USER_CGROUP.
    assert text == "CgroupPlugin=autodetect\nConstrainDevices=yes\nConstrainCores=yes\n"


def test_slurmd_parses_every_gpu_with_its_cores(converged):
    shown = slurm_lab.exec_in(["slurmd", "-G"])
    output = shown.stdout + shown.stderr
    found = dict((int(m.group(1)), m.group(2)) for m in
                 re.finditer(r"Gres Name=gpu Type=h100 .*File=/dev/nvidia(\d+) Cores=(\S+)", output))
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


def _wait_until(condition, seconds, explain):
    """Poll condition() once a second; fail with explain()'s text after seconds."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, explain()
        time.sleep(1)


def test_jobs_are_bound_to_their_gpus_numa_local_cores(converged):
    flags = ["--gres=gpu:1", "--gres-flags=enforce-binding", "-n1"]
    # A batch job takes the first GPU and holds it; the next job gets the other one.
    held_job = ["sbatch", "--output=/tmp/held.out"] + flags + ["--wrap", JOB_PROBE + "; sleep 30"]
    slurm_lab.exec_in(held_job)
    _wait_until(lambda: "CVD=" in slurm_lab.exec_in(["cat", "/tmp/held.out"], check=False).stdout, 60,
                lambda: slurm_lab.exec_in(["squeue"]).stdout)
    held = _job_view(slurm_lab.exec_in(["cat", "/tmp/held.out"]).stdout)
    second = _job_view(slurm_lab.exec_in(["timeout", "120", "srun"] + flags + ["sh", "-c", JOB_PROBE]).stdout)
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


# GPU 1 as two 3g.40gb MIG devices (GPU instance profile 9 of the H100 PCIe), GPU 0 whole.
MIG_TYPE = "h100_3g.40gb"
MIG_GRES = "gpu:h100:1,gpu:%s:2" % MIG_TYPE
# The emulator's nvidia-caps major (gpuemu installer.CAPS_MAJOR); on a real node nvidia-modprobe
# makes these nodes with the major /proc/devices gives (MIG User Guide, "Device Nodes and Capabilities").
CAPS_MAJOR = 238


def _enable_mig_on_gpu1():
    for argv in (["nvidia-smi", "-i", "1", "-mig", "1"], ["nvidia-smi", "-i", "1", "-r"],
                 ["nvidia-smi", "mig", "-i", "1", "-cgi", "9,9", "-C"]):
        slurm_lab.exec_in(argv)


def _mig_files(gres_conf):
    """The MultipleFiles= of each MIG line, as lists of paths."""
    return [m.group(1).split(",") for m in re.finditer(r"Type=%s MultipleFiles=(\S+)" % MIG_TYPE, gres_conf)]


def test_mig_devices_get_lines_that_slurmd_parses_and_binds(converged):
    inventory, _first = converged
    _enable_mig_on_gpu1()
    assert _playbook(inventory) > 0
    assert _playbook(inventory) == 0
    gres_conf = slurm_lab.exec_in(["cat", "/etc/slurm/gres.conf"]).stdout
    devices = _mig_files(gres_conf)
    assert len(devices) == 2, gres_conf
    assert "File=/dev/nvidia0 Cores=0" in gres_conf and "File=/dev/nvidia1 " not in gres_conf, gres_conf
    for files in devices:
        assert files[0] == "/dev/nvidia1", files
        # The emulator made each new instance's capability nodes, as nvidia-modprobe does.
        for path in files[1:]:
            minor = re.fullmatch(r"/dev/nvidia-caps/nvidia-cap(\d+)", path).group(1)
            numbers = slurm_lab.exec_in(["stat", "-c", "%F %t:%T", path]).stdout.split()
            assert numbers == ["character", "special", "file", "%x:%x" % (CAPS_MAJOR, int(minor))], (path, numbers)
    # As for any GRES count change: slurm.conf's Gres= follows, both daemons restart, and
    # the node, which slurmctld drains while slurmd's count and slurm.conf disagree, resumes.
    slurm_lab.write_slurm_conf(MIG_GRES)
    slurm_lab.exec_in(["systemctl", "restart", "slurmctld", "slurmd"])
    slurm_lab.exec_in(["scontrol", "update", "NodeName=%s" % slurm_lab.NODE, "State=RESUME"], check=False)

    shown = slurm_lab.exec_in(["slurmd", "-G"])
    output = shown.stdout + shown.stderr
    parsed = [(m.group(1).split(","), m.group(2)) for m in
              re.finditer(r"Gres Name=gpu Type=%s .*File=(\S+) Cores=(\S+)" % MIG_TYPE, output)]
    assert sorted(parsed) == sorted((files, "1") for files in devices), output

    flags = ["--gres=gpu:%s:1" % MIG_TYPE, "--gres-flags=enforce-binding", "-n1"]
    # slurmctld takes the node back once slurmd registers with the GRES it found.
    _wait_until(lambda: slurm_lab.exec_in(["sinfo", "-h", "-N", "-o", "%T"], check=False).stdout.strip() == "idle", 90,
                lambda: slurm_lab.exec_in(["sinfo", "-N", "-o", "%N %T %E"], check=False).stdout)
    job = slurm_lab.exec_in(["timeout", "120", "srun"] + flags + ["sh", "-c", JOB_PROBE]).stdout
    # On an idle node the first free core is 0: only the MIG line's Cores= takes the job to GPU 1's core.
    gpu, cpus = _job_view(job)
    assert gpu != "" and cpus <= NODE_CPUS[1], job
