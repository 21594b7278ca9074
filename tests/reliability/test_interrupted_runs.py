# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A site.yml run killed part-way, then run again, leaves the node as an uninterrupted run does.

Two fresh a100_8x_mig nodes with the same vars: rel-int-ref converges in one uninterrupted
run; rel-int-cut has its first converge killed four times, each time further on (in sysctl,
in persistenced, between a MIG mode change and the GPU reset that applies it, and while
creating GPU instances with the GPU clients stopped), then runs once to the end. Both must
end with the same managed files and MIG layout, the stopped GPU client running again, and a
further run changing nothing.

How a run is killed: as a cancelled AWX job ends it. AWX (ansible-runner) signals
ansible-playbook, and with it goes the connection to the node; the module's processes on the
node die with their session. Here ansible-playbook gets SIGKILL (the worst case: no cleanup at
all) and so does every process of the module's session on the node.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from lab import REPO_ROOT, Node, docker_exec, playbook_argv, playbook_env, recap, run_playbook, start_nodes, stop_nodes
from lab_playbook import NODE_TASK
from lab_gpus import mig_devices, mig_modes, profile_counts, set_faults

REFERENCE, INTERRUPTED = "rel-int-ref", "rel-int-cut"
LAYOUTS = {
    "1": {"mig_enabled": True, "mig_devices": {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}},
    "2": {"mig_enabled": True, "mig_devices": {"1g.10gb": 7}},
    "3": {"mig_enabled": True, "mig_devices": {"2g.20gb": 3}},
}
NODE_VARS = {"gpuops_gpu_profile": "a100_8x_mig", "gpuops_lab_persistenced_unit": "debian",
             "mig_state": "present", "mig_layouts": LAYOUTS}
GPU_CLIENT = "nvidia-dcgm.service"
STOPPED_RECORD = "/var/lib/gpuops-hardening/mig-clients-stopped.json"
# Every file a role renders starts with this header; the state folder holds the modules' records.
MANAGED_FILES = ("{ grep -rlsF 'Managed by gpuops.hardening' /etc /usr/local; find /var/lib/gpuops-hardening -type f; } "
                 "| sort | xargs -r sha256sum")


@pytest.fixture(scope="module")
def inventory(tmp_path_factory):
    spec = {REFERENCE: dict(NODE_VARS), INTERRUPTED: dict(NODE_VARS)}
    try:
        path = start_nodes(spec, tmp_path_factory.mktemp("interrupted"))
        for node in spec:
            # A running GPU client holds the GPUs: the MIG mode changes must stop it, and start it again.
            docker_exec(node, "systemctl", "start", GPU_CLIENT)
        yield path
    finally:
        stop_nodes(spec)


def managed_files(node):
    return docker_exec(node, "sh", "-c", MANAGED_FILES)


def session_pids(node, is_target):
    """The processes on node whose command line is_target, each with its ancestors up to the first
    process of its session (the one docker exec or sshd started): what dies with the session."""
    table = {}
    for line in docker_exec(node, "ps", "-eo", "pid=,ppid=,args=").splitlines():
        pid, ppid, args = (line.strip().split(None, 2) + [""])[:3]
        table[int(pid)] = (int(ppid), args)
    chain = []
    for pid in [pid for pid, (_ppid, args) in table.items() if is_target(args)]:
        while pid in table and pid != 1 and pid not in chain:
            chain.append(pid)
            pid = table[pid][0]
    return chain


def module_process(args):
    # With pipelining the module's code comes on stdin: its command line is the bare interpreter.
    return args == "/usr/bin/python3"


def creating_gpu_instances(args):
    return "nvidia-smi" in args and "-cgi" in args.split()


def killed_run(inventory_path, until, is_target, grace=3.0, timeout=300):
    """Run site.yml on the interrupted node and kill it as a cancelled AWX job ends it: once
    until(line) holds for an output line and a process is_target runs on the node (or grace
    seconds passed), or, with until None, once such a process runs. The output up to then."""
    process = subprocess.Popen(playbook_argv(inventory_path, limit=INTERRUPTED), cwd=REPO_ROOT, env=playbook_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    lines = []
    deadline = time.time() + timeout
    try:
        if until is not None:
            for line in process.stdout:
                lines.append(line)
                if until(line):
                    deadline = time.time() + grace
                    break
            else:
                pytest.fail("the run ended without the line it is to be killed at:\n" + "".join(lines))
        while not session_pids(INTERRUPTED, is_target) and time.time() < deadline:
            assert process.poll() is None, "the run ended before it could be killed:\n" + "".join(lines)
            time.sleep(0.2)
        assert until is not None or session_pids(INTERRUPTED, is_target), "the hang was never reached"
    finally:
        # SIGKILL to ansible-playbook's process group: ansible-runner's last word on a cancel.
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    for pid in session_pids(INTERRUPTED, is_target):
        docker_exec(INTERRUPTED, "kill", "-KILL", str(pid), check=False)
    assert session_pids(INTERRUPTED, is_target) == []
    return "".join(lines)


def resetting_a_gpu(args):
    return "nvidia-smi" in args and "-r" in args.split()


def task_line(name):
    return lambda line: line.startswith("TASK [%s]" % name)


def test_an_interrupted_first_converge_run_again_reaches_the_uninterrupted_state(inventory):
    reference = subprocess.Popen(playbook_argv(inventory, limit=REFERENCE), cwd=REPO_ROOT, env=playbook_env(),
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    cut = Node(INTERRUPTED)
    # Twice in the node call: each run again gets further through its features before it is killed.
    killed_run(inventory, task_line(NODE_TASK), module_process)
    killed_run(inventory, task_line(NODE_TASK), module_process)
    # Between a MIG mode change and the GPU reset that applies it: the mode is left pending.
    set_faults(cut, hang=[{"tool": "nvidia-smi", "match": ["-r"]}])
    killed_run(inventory, None, resetting_a_gpu)
    assert ("Disabled", "Enabled") in mig_modes(cut), mig_modes(cut)
    assert docker_exec(INTERRUPTED, "systemctl", "is-active", GPU_CLIENT, check=False).strip() == "inactive"
    # Mid-change: MIG mode applied and the GPU client stopped, creating the first GPU instances hangs.
    set_faults(cut, hang=[{"tool": "nvidia-smi", "match": ["mig", "-cgi"]}])
    killed_run(inventory, None, creating_gpu_instances)
    assert json.loads(docker_exec(INTERRUPTED, "cat", STOPPED_RECORD)) == {"units": [GPU_CLIENT]}
    assert docker_exec(INTERRUPTED, "systemctl", "is-active", GPU_CLIENT, check=False).strip() == "inactive"
    set_faults(cut, hang=[])

    reference_output = reference.communicate(timeout=600)[0]
    assert recap(reference_output, REFERENCE)["failed"] == 0, reference_output
    rc, output = run_playbook(inventory, limit=INTERRUPTED)
    assert rc == 0 and recap(output, INTERRUPTED)["failed"] == 0, output
    assert "an earlier run was interrupted while the GPU clients were stopped" in output, output

    assert docker_exec(INTERRUPTED, "systemctl", "is-active", GPU_CLIENT).strip() == "active"
    assert docker_exec(INTERRUPTED, "test", "!", "-e", STOPPED_RECORD, check=False) == ""
    declared = dict((int(index), layout["mig_devices"]) for index, layout in LAYOUTS.items())
    assert dict((index, profile_counts(found)) for index, found in mig_devices(cut).items() if index in declared) == declared
    assert dict((index, profile_counts(found)) for index, found in mig_devices(Node(REFERENCE)).items()) == \
        dict((index, profile_counts(found)) for index, found in mig_devices(cut).items())
    assert managed_files(INTERRUPTED) == managed_files(REFERENCE)

    # --diff: what a further run would still change, shown if it changes anything.
    rc, output = run_playbook(inventory, limit=INTERRUPTED, flags=("--diff",))
    assert rc == 0 and recap(output, INTERRUPTED)["changed"] == 0, output
