# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The facts part of `make bench`: gpu_numa_facts against one bare `nvidia-smi -q -x`, on the node.

What is timed, both inside the node (emulated 8x H100), CALLS times each, alternating:
- the module: its AnsiballZ payload as Ansible ships it to the node (kept with
  ANSIBLE_KEEP_REMOTE_FILES from one ad-hoc call, module arguments included), run
  with the node's python3: Python start, the module's imports, every nvidia-smi call
  it makes and its sysfs reads, the JSON it prints;
- the floor: `nvidia-smi -q -x` alone (the emulated tool), its output discarded.
Neither includes the controller or the connection. The figure is the ratio of the
medians.
"""

from __future__ import annotations

import json
import os
import subprocess

CALLS = 15
REMOTE_TMP = "/tmp/gpuops-bench-ansible"
MODULE = "gpuops.hardening.gpu_numa_facts"
PAYLOAD = "AnsiballZ_gpu_numa_facts.py"
TARGET_RATIO = 1.2
# Runs in the node: median seconds of each argv, the argvs alternating so that load hits both alike.
TIMER = r"""
import json, statistics, subprocess, sys, time
argvs, calls = json.loads(sys.argv[1]), int(sys.argv[2])
seconds = [[] for _ in argvs]
for _ in range(calls):
    for index, argv in enumerate(argvs):
        start = time.monotonic()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        seconds[index].append(time.monotonic() - start)
print(json.dumps([statistics.median(each) for each in seconds]))
"""


def _docker_exec(node, *argv):
    return subprocess.run(["docker", "exec", node] + list(argv), capture_output=True, text=True, check=True).stdout


def _keep_payload(inventory, node, env):
    """Path, on the node, of the module's AnsiballZ payload from one real call."""
    _docker_exec(node, "rm", "-rf", REMOTE_TMP)
    keep = dict(env, ANSIBLE_KEEP_REMOTE_FILES="1", ANSIBLE_PIPELINING="0", ANSIBLE_REMOTE_TMP=REMOTE_TMP)
    subprocess.run(["ansible", "-i", inventory, node, "-m", MODULE, "-a", "require_gpu=true"],
                   env=keep, capture_output=True, text=True, check=True)
    return _docker_exec(node, "sh", "-c", "ls %s/ansible-tmp-*/%s" % (REMOTE_TMP, PAYLOAD)).split()[0]


def measure(inventory, node, env):
    """{module_s, nvidia_smi_s, ratio, calls} per call, medians."""
    payload = _keep_payload(inventory, node, env)
    argvs = [["python3", payload], ["nvidia-smi", "-q", "-x"]]
    module_s, bare_s = json.loads(_docker_exec(node, "python3", "-c", TIMER, json.dumps(argvs), str(CALLS)))
    _docker_exec(node, "rm", "-rf", REMOTE_TMP)
    return {"module_s": module_s, "nvidia_smi_s": bare_s, "ratio": module_s / bare_s, "calls": CALLS}


def describe():
    """The table's text: what the ratio compares."""
    return ("Facts: median of %d calls each, alternating, both timed inside the 8x H100 node (`docker exec`, no "
            "controller or connection): the gpu_numa_facts module as Ansible ships it (its AnsiballZ payload, kept "
            "with ANSIBLE_KEEP_REMOTE_FILES: Python start, imports, every nvidia-smi call it makes, sysfs reads) "
            "against one bare `nvidia-smi -q -x` (the emulated tool). Target %.1fx." % (CALLS, TARGET_RATIO))


if __name__ == "__main__":
    import sys
    print(json.dumps(measure(sys.argv[1], sys.argv[2], dict(os.environ))))
