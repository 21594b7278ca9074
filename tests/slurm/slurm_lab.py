# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A one-node Slurm 22.05 cluster in a lab container, with emulated GPUs.

The node is the Molecule lab node (same options, no network) on the Slurm image
that scripts/lab/build-slurm-image.sh builds on top of the lab image, with the
slurm_2node GPU profile's fake sysfs: two NUMA nodes of one CPU each, which are
the lab host's two real CPUs, so slurmd's hwloc and the jobs' real CPU affinity
agree with the emulated GPUs' NUMA nodes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import yaml

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO_ROOT, "scripts"))

import lab_node  # noqa: E402  pylint: disable=wrong-import-position
import lab_nodes  # noqa: E402  pylint: disable=wrong-import-position

IMAGE = "gpuops-lab/debian12:slurm"
# The play that runs the slurm_gres role on the node.
CONVERGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "converge.yml")
PROFILE = "slurm_2node"
NODE = os.environ.get("GPUOPS_SLURM_NODE", "slurm-node")

# The node's GPUs as slurm.conf's Gres= names them before any GPU has MIG on.
WHOLE_GPUS_GRES = "gpu:h100:2"
# slurm.conf for a one-node cluster: cons_tres places GRES with cores; task/affinity
# binds each task to its cores (task/cgroup needs a cgroup tree the container cannot delegate).
# Slurm co-allocates GRES and cores per socket, not per core (gres.conf(5), Cores), so
# the node is declared as the emulated topology has it, two sockets of one core (NUMA
# node k holds CPU k), and config_overrides makes slurmd take that over what hwloc
# finds on the lab host (one socket of two cores, where no binding would show).
SLURM_CONF = """ClusterName=lab
SlurmctldHost={node}(127.0.0.1)
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SlurmdParameters=config_overrides
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
ReturnToService=2
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
NodeName={node} NodeAddr=127.0.0.1 CPUs=2 Boards=1 SocketsPerBoard=2 CoresPerSocket=1 ThreadsPerCore=1 RealMemory=1000 Gres={gres} State=UNKNOWN
PartitionName=lab Nodes={node} Default=YES MaxTime=INFINITE State=UP
"""


def sysfs_tree():
    return os.path.join(REPO_ROOT, ".lab", "sysfs", PROFILE)


def make_sysfs():
    if not os.path.isdir(sysfs_tree()):
        subprocess.run([sys.executable, "-m", "gpuemu", "sysfs", "--profile", PROFILE, "--out", sysfs_tree()],
                       cwd=os.path.join(REPO_ROOT, "tests", "gpu_emulator"), check=True, capture_output=True)


def platform():
    node = lab_node.lab_platform(name="gpu-train")
    node["image"] = IMAGE
    # Still no network: NET_ADMIN only gives lo a second address (up()), since glibc's
    # getaddrinfo(AI_ADDRCONFIG), which Slurm uses, finds no address on a host that has only 127.0.0.1.
    node["capabilities"] = list(node.get("capabilities", [])) + ["NET_ADMIN"]
    node["volumes"] = [
        "/sys/fs/cgroup:/sys/fs/cgroup:rw",
        "%s/bus/pci/devices:/sys/bus/pci/devices:ro" % sysfs_tree(),
        "%s/devices/system/node:/sys/devices/system/node:ro" % sysfs_tree(),
    ]
    return node


def exec_in(argv, check=True, user=None):
    full = ["docker", "exec"] + (["-u", user] if user else []) + [NODE] + list(argv)
    done = subprocess.run(full, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise AssertionError("%s failed (%d):\n%s%s" % (" ".join(argv), done.returncode, done.stdout, done.stderr))
    return done


def up(inventory):
    """Start and prepare the node; write its inventory (in gpu_nodes for prepare.yml, and in slurm_nodes)."""
    make_sysfs()
    lab_nodes.remove([NODE])
    subprocess.run(lab_node.docker_run_argv(platform(), NODE), capture_output=True, check=True)
    lab_node.wait_booted(NODE)
    exec_in(["ip", "addr", "add", "10.99.0.1/32", "dev", "lo"])
    # A container's procfs takes no new files; a tmpfs on /proc/driver lets the emulator
    # install the driver's /proc/driver/nvidia-caps/mig-minors, which MIG lines need.
    exec_in(["mount", "-t", "tmpfs", "-o", "mode=0555", "gpuops-driver", "/proc/driver"])
    host_vars = {"gpuops_gpu_profile": PROFILE}
    with open(inventory, "w", encoding="utf-8") as handle:
        yaml.safe_dump({"all": {"vars": lab_nodes.CONNECTION_VARS, "children": {
            "gpu_nodes": {"hosts": {NODE: host_vars}},
            "slurm_nodes": {"hosts": {NODE: None}}}}}, handle, default_flow_style=False)
    lab_nodes.prepare(inventory)
    exec_in(["mkdir", "-p", "/etc/slurm", "/var/log/slurm"])
    write_slurm_conf(WHOLE_GPUS_GRES)


def write_slurm_conf(gres):
    """slurm.conf with the node's Gres= (gpu:<type>:<count>,...); slurmctld and slurmd read it when they start."""
    subprocess.run(["docker", "exec", "-i", NODE, "sh", "-c", "cat > /etc/slurm/slurm.conf"],
                   input=SLURM_CONF.format(node=NODE, gres=gres), text=True, check=True)


def down():
    lab_nodes.remove([NODE])


def playbook_output(inventory, *extra, playbook=CONVERGE, settings=None):
    """A playbook's output (stdout, then stderr) on the cluster's inventory, with more Ansible settings; it must
    succeed."""
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_PIPELINING="1", **(settings or {}),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO_ROOT, "playbooks", "collections"))
    done = subprocess.run(["ansible-playbook", "-i", inventory, playbook] + list(extra), cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    # The default callback writes warnings to stderr.
    return done.stdout + done.stderr


def playbook_changes(inventory, *extra, playbook=CONVERGE):
    """The node's changed= count of a playbook run."""
    return int(re.search(r"%s\s*:.*changed=(\d+)" % NODE, playbook_output(inventory, *extra, playbook=playbook)).group(1))
