# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu-numa-exec: run a command on a GPU, bound to that GPU's NUMA node.

Installed by the gpuops.hardening.numa_binding role; local edits are overwritten.

    gpu-numa-exec --gpu 5 -- python train.py

sets CUDA_VISIBLE_DEVICES=5 and CUDA_DEVICE_ORDER=PCI_BUS_ID and replaces
itself with

    numactl --cpunodebind=N --membind=N -- python train.py

where N is the GPU's node. An index is nvidia-smi's; CUDA numbers GPUs the same
way only with CUDA_DEVICE_ORDER=PCI_BUS_ID (its default is fastest first), so a
program that resets that variable must be given the GPU's UUID instead, which
names the same GPU in any order. The topology comes from the local fact written by
the gpuops.hardening.numa_binding role; without it, from nvidia-smi and sysfs.
Python 3.6+ standard library only: it runs with the host's system Python.
"""

import argparse
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys

FACTS_FILE = "/etc/ansible/facts.d/gpu_topology.fact"
FACTS_ENV = "GPU_NUMA_EXEC_FACTS"
SYSFS_PCI = "/sys/bus/pci/devices"
PROC_STATUS = "/proc/self/status"

EXIT_USAGE = 2
EXIT_NO_AFFINITY = 3
EXIT_NODE_OFFLINE = 4
EXIT_NO_TOPOLOGY = 5
EXIT_NO_NUMACTL = 127


class LaunchError(Exception):
    """A reason not to run, with the exit status to end with."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def _shared_dir():
    """Where the collection's shared helpers are.

    The role installs them in ../lib/gpuops-hardening beside this script; run
    from a checkout of the collection, they are its plugins/module_utils.
    """
    here = os.path.dirname(os.path.realpath(__file__))
    for candidate in (os.path.join(here, "..", "lib", "gpuops-hardening"),
                      os.path.join(here, "..", "..", "..", "plugins", "module_utils")):
        if all(os.path.isfile(os.path.join(candidate, name + ".py")) for name in SHARED_HELPERS):
            return os.path.normpath(candidate)
    sys.exit("gpu-numa-exec: its helpers (%s) are missing from %s; re-run the numa_binding role"
             % (", ".join(name + ".py" for name in SHARED_HELPERS), os.path.join(here, "..", "lib", "gpuops-hardening")))


def _load_shared(directory, name):
    """One of the collection's module_utils files, loaded by path (they are standard library only)."""
    spec = importlib.util.spec_from_file_location("gpuops_hardening_" + name, os.path.join(directory, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The role installs exactly these module_utils files beside the launcher
# (tasks/launcher.yml); there is no copy of their code in this script.
SHARED_HELPERS = ("cpulist", "host_options", "pci_bus_id")
_cpulist, _host_options, _pci_bus_id = [_load_shared(_shared_dir(), name) for name in SHARED_HELPERS]
parse_cpulist = _cpulist.parse_cpulist
format_cpulist = _cpulist.format_cpulist
read_text = _host_options.read_text
sysfs_bus_id = _pci_bus_id.sysfs_bus_id


# ---------------------------------------------------------------- topology

def load_facts(path):
    """The gpu_topology fact as the role wrote it; None when absent."""
    text = read_text(path, strip=True)
    if text is None:
        return None
    try:
        topology = json.loads(text)
    except ValueError:
        raise LaunchError("%s is not valid JSON; re-run the numa_binding role" % path, EXIT_NO_TOPOLOGY)
    if not isinstance(topology, dict) or not isinstance(topology.get("gpus"), list):
        raise LaunchError("%s holds no GPU list; re-run the numa_binding role" % path, EXIT_NO_TOPOLOGY)
    return topology


def query_topology(sysfs_pci=None):
    """A minimal topology from nvidia-smi and sysfs, when no fact file exists."""
    sysfs_pci = sysfs_pci or SYSFS_PCI
    tool = shutil.which("nvidia-smi")
    if not tool:
        raise LaunchError("no topology: %s is missing and nvidia-smi is not installed" % FACTS_FILE,
                          EXIT_NO_TOPOLOGY)
    try:
        done = subprocess.run([tool, "--query-gpu=index,uuid,pci.bus_id", "--format=csv,noheader"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                              timeout=30, check=False, env=dict(os.environ, LC_ALL="C"))
    except subprocess.TimeoutExpired:
        raise LaunchError("nvidia-smi did not answer within 30 seconds", EXIT_NO_TOPOLOGY)
    if done.returncode != 0:
        raise LaunchError("nvidia-smi failed: %s" % (done.stderr or done.stdout).strip(), EXIT_NO_TOPOLOGY)
    gpus = []
    for line in done.stdout.splitlines():
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) != 3 or not cells[0].isdigit():
            continue
        address = sysfs_bus_id(cells[2])
        device = os.path.join(sysfs_pci, address or "-")
        node = read_text(os.path.join(device, "numa_node"), strip=True)
        node = int(node) if node and node.lstrip("-").isdigit() and int(node) >= 0 else None
        gpus.append({"index": int(cells[0]), "uuid": cells[1], "pci_bus_id": address or cells[2],
                     "numa_affinity": [node] if node is not None else None,
                     "local_cpulist": read_text(os.path.join(device, "local_cpulist"), strip=True),
                     "mig_devices": []})
    return {"gpus": gpus, "recommendations": []}


def select_gpus(topology, wanted):
    """(gpu entries, CUDA_VISIBLE_DEVICES value) for ``--gpu`` (indices, GPU or MIG UUIDs)."""
    chosen = []
    visible = []
    for item in [part.strip() for part in wanted.split(",") if part.strip()]:
        match = None
        for gpu in topology["gpus"]:
            if (item.isdigit() and gpu.get("index") == int(item)) or item == gpu.get("uuid"):
                match = gpu
            elif item in [device.get("uuid") for device in gpu.get("mig_devices") or []]:
                match = gpu
        if match is None:
            known = ", ".join(str(gpu.get("index")) for gpu in topology["gpus"]) or "none"
            raise LaunchError("no GPU %s on this host (GPUs: %s)" % (item, known), EXIT_USAGE)
        chosen.append(match)
        # An index means this GPU only under CUDA_DEVICE_ORDER=PCI_BUS_ID (set with it); UUIDs pass through.
        visible.append(str(match["index"]) if item.isdigit() else item)
    if not chosen:
        raise LaunchError("--gpu names no GPU", EXIT_USAGE)
    return chosen, ",".join(visible)


def binding_nodes(topology, gpus):
    """The NUMA nodes to bind to: every node local to any chosen GPU."""
    plans = dict((plan.get("gpu"), plan) for plan in topology.get("recommendations") or [])
    nodes = set()
    for gpu in gpus:
        local = (plans.get(gpu["index"]) or {}).get("numa_nodes") or gpu.get("numa_affinity")
        if not local:
            raise LaunchError(
                "the NUMA affinity of GPU %s (%s) is unknown (neither sysfs nor nvidia-smi names a node for "
                "it, as in many VMs); run it unbound with --allow-unbound, or without gpu-numa-exec"
                % (gpu["index"], gpu.get("pci_bus_id")), EXIT_NO_AFFINITY)
        nodes.update(local)
    return sorted(nodes)


def allowed_memory_nodes(status_path=None):
    """Memory nodes this process may use, as the running kernel says (not sysfs)."""
    for line in (read_text(status_path or PROC_STATUS) or "").splitlines():
        if line.startswith("Mems_allowed_list:"):
            try:
                return parse_cpulist(line.split(":", 1)[1])
            except ValueError:
                return None
    return None


# ---------------------------------------------------------------- command

def plan_command(args, topology, status_path=None):
    """(argv, environment additions, notes) for the run."""
    gpus, visible = select_gpus(topology, args.gpu)
    env = {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": visible}
    notes = []
    try:
        nodes = binding_nodes(topology, gpus)
    except LaunchError as problem:
        if not args.allow_unbound:
            raise
        notes.append("warning: %s; running unbound" % problem)
        return list(args.command), env, notes

    node_text = format_cpulist(nodes)
    argv = ["numactl", "--cpunodebind=%s" % node_text]
    if not args.cpu_only:
        argv.append("--membind=%s" % node_text)
    argv += ["--"] + list(args.command)
    for gpu in gpus:
        notes.append("GPU %s (%s): NUMA node %s, CPUs %s" % (
            gpu["index"], gpu.get("pci_bus_id"), format_cpulist(gpu.get("numa_affinity") or nodes),
            gpu.get("local_cpulist") or "unknown"))
    if len(set(tuple(gpu.get("numa_affinity") or []) for gpu in gpus)) > 1:
        notes.append("warning: the GPUs sit on different NUMA nodes; binding to all of them (%s)" % node_text)

    allowed = allowed_memory_nodes(status_path)
    offline = [node for node in nodes if allowed is not None and node not in allowed]
    if offline:
        message = ("NUMA node %s of GPU %s is not online on this kernel (memory nodes allowed here: %s); "
                   "the topology fact may come from another machine or an emulated sysfs"
                   % (format_cpulist(offline), visible, format_cpulist(allowed) or "none"))
        if not args.dry_run:
            raise LaunchError(message, EXIT_NODE_OFFLINE)
        notes.append("warning: " + message)
    return argv, env, notes


def render(argv, env):
    """The command as one shell line, environment first."""
    prefix = ["%s=%s" % (key, shlex.quote(env[key])) for key in sorted(env)]
    return " ".join(prefix + [shlex.quote(part) for part in argv])


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="gpu-numa-exec",
        description="Run COMMAND on the given GPU(s), bound to their NUMA node for CPU and memory.",
        epilog="Exit status: 2 usage or unknown GPU, 3 affinity unknown, 4 node not online, "
               "5 no topology, 127 numactl missing; otherwise COMMAND's own.")
    parser.add_argument("--gpu", required=True,
                        help="GPU index as nvidia-smi numbers it (exported with CUDA_DEVICE_ORDER=PCI_BUS_ID, which "
                             "CUDA needs to number GPUs the same way), GPU UUID or MIG UUID; comma-separated for several")
    parser.add_argument("--dry-run", action="store_true", help="print the command instead of running it")
    parser.add_argument("--cpu-only", action="store_true", help="bind CPUs only, leave memory placement alone")
    parser.add_argument("--allow-unbound", action="store_true",
                        help="run without binding when the GPU's NUMA affinity is unknown")
    parser.add_argument("--facts", default=os.environ.get(FACTS_ENV, FACTS_FILE),
                        help="topology fact file (default: $%s or %s)" % (FACTS_ENV, FACTS_FILE))
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARG...]")
    args = parser.parse_args(argv)
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    if not args.command:
        parser.error("no command given; usage: gpu-numa-exec --gpu N -- COMMAND [ARG...]")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        topology = load_facts(args.facts) or query_topology()
        command, env, notes = plan_command(args, topology)
        numactl = shutil.which("numactl")
        if command[0] == "numactl" and not numactl:
            message = ("numactl is not installed; install the numactl package "
                       "(the gpuops.hardening.numa_binding role does)")
            if not args.dry_run:
                raise LaunchError(message, EXIT_NO_NUMACTL)
            notes.append("warning: " + message)
    except LaunchError as problem:
        sys.stderr.write("gpu-numa-exec: %s\n" % problem)
        return problem.status

    for note in notes:
        sys.stderr.write("gpu-numa-exec: %s\n" % note)
    if args.dry_run:
        sys.stdout.write(render(command, env) + "\n")
        return 0
    sys.stdout.flush()
    program = numactl if command[0] == "numactl" else shutil.which(command[0]) or command[0]
    try:
        os.execve(program, command, dict(os.environ, **env))
    except OSError as error:
        sys.stderr.write("gpu-numa-exec: cannot run %s: %s\n" % (command[0], error))
        return EXIT_NO_NUMACTL
    return 0  # not reached: execve replaced this process


if __name__ == "__main__":
    sys.exit(main())
