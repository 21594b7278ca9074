# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Two site.yml runs against one node at once, on a fresh node and on a converged one.

The contract: both runs succeed. The node lock (module_utils/run_lock.py)
serializes every module that changes the node, so each module of the later run
reads what the earlier one wrote and finds nothing left to change. Afterwards the
node is as one run leaves it: the converged pair changes nothing and leaves every
file as the fresh pair left it, no temporary file is left, the lock names no
holder, and the emulated GPUs' persistence agrees with its daemon.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time

import pytest

from lab import REPO_ROOT, SITE, Node, docker_exec, playbook_argv, playbook_env, recap, start_nodes, stop_nodes
from lab_gpus import mig_devices, mig_modes, profile_counts
from lab_playbook import NODE_TASK, node_result

NODE = "rel-lock-train"
SPEC = {NODE: {"gpuops_gpu_profile": "dgx_h100", "gpuops_lab_persistenced_unit": "upstream", "gpuops_profile": "training"}}
LOCK = "/run/gpuops-hardening/node.lock"
# A pair takes about a minute on an idle host; the shared lab host can be ten times slower.
RUN_TIMEOUT = 900
# Where the roles write: the modules' files, the builtin copy/template targets, the local facts.
MANAGED_TREES = ["/etc", "/usr/local", "/opt/gpuops"]
# The one task that holds the node lock: the node call (roles/validate/tasks/node.yml), by its name after "role : ".
FIRST_LOCKING_TASK = NODE_TASK.split(" : ", 1)[1]
# Leftovers of an interrupted write: ours (managed_files.py) and ansible's atomic_move.
TEMPORARY_NAMES = [".gpuops-*", ".ansible_tmp*", "*.ansible_tmp"]


@pytest.fixture(scope="module")
def fresh_checksums():
    """The managed files' checksums after the fresh pair, for the converged pair to compare with."""
    return {}


@pytest.fixture(scope="module")
def inventory(tmp_path_factory):
    try:
        yield start_nodes(SPEC, tmp_path_factory.mktemp("lock"))
    finally:
        stop_nodes(SPEC)


def read_output(path):
    with open(path) as handle:
        return handle.read()


def module_processes(node):
    """How many modules run on node: with pipelining, a module is a bare interpreter reading its code on stdin."""
    return docker_exec(node, "ps", "-eo", "args=").splitlines().count("/usr/bin/python3")


def release_when_both_wait(node, holder_release, output_paths, first_task, deadline):
    """Let the outside holder go once both runs have started first_task (its last header: (name, times)) and both
    its modules run, and so wait for it (the task's header comes well before its module on a loaded host)."""
    # A role's task header reads "TASK [role : name]", a play's own "TASK [name]".
    markers, times = (": %s]" % first_task[0], "[%s]" % first_task[0]), first_task[1]

    def started(path):
        output = read_output(path)
        return sum(output.count(marker) for marker in markers) >= times

    def both_wait():
        return all(started(path) for path in output_paths) and module_processes(node) >= 2
    while time.monotonic() < deadline and not both_wait():
        time.sleep(1)
    time.sleep(3)
    docker_exec(node, "touch", holder_release)


def run_two_at_once(inventory, hold_lock=False, node=NODE, playbook=SITE, extra_vars=(None, None),
                    first_task=(FIRST_LOCKING_TASK, 1)):
    """(returncode, output) of two runs of playbook started together, the second with the second extra_vars;
    with hold_lock, something else holds the lock until both runs wait at first_task."""
    holder = None
    holder_release = "/run/gpuops-test-release-lock"
    if hold_lock:
        # flock(1), as an operator's own tool would take it (it records no holder), held until told to let go. On a
        # fresh node no run has made the lock's folder yet: made as the modules make it, root's alone.
        wait_then_let_go = "until [ -e %s ]; do sleep 0.2; done; rm %s" % (holder_release, holder_release)
        hold = 'mkdir -p -m 0700 "$1" && exec flock "$2" sh -c "$3"'
        holder = subprocess.Popen(["docker", "exec", node, "sh", "-c", hold, "hold", os.path.dirname(LOCK), LOCK,
                                   wait_then_let_go])
    # Output to files, not pipes: an unread pipe would stall the run that fills it.
    with tempfile.TemporaryDirectory() as directory:
        output_paths = [os.path.join(directory, "run%d.log" % number) for number in (1, 2)]
        runs = []
        for path, run_vars in zip(output_paths, extra_vars):
            with open(path, "w") as output:
                # -v: the node call's result, which says what each feature changed.
                runs.append(subprocess.Popen(playbook_argv(inventory, playbook, extra_vars=run_vars, flags=("-v",)), cwd=REPO_ROOT,
                                             env=playbook_env(), stdout=output, stderr=subprocess.STDOUT, text=True))
        deadline = time.monotonic() + RUN_TIMEOUT
        if holder:
            release_when_both_wait(node, holder_release, output_paths, first_task, deadline)
            holder.wait(timeout=60)
        outcomes = []
        for run, path in zip(runs, output_paths):
            try:
                returncode = run.wait(timeout=max(1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                run.kill()
                returncode = run.wait()
            outcomes.append((returncode, read_output(path)))
    return outcomes


def assert_both_succeeded(outcomes, node=NODE):
    for returncode, output in outcomes:
        assert returncode == 0 and recap(output, node)["failed"] == 0, output[-4000:]


def changed_features(output):
    """The names of the node call's features that reported changed on the node."""
    result = node_result(output, NODE) or {}
    return set(name for name, feature in (result.get("features") or {}).items() if feature.get("changed"))


def file_checksums():
    """sha256 of every regular file the roles may write, by path."""
    listing = docker_exec(NODE, "sh", "-c", "find %s -xdev -type f -print0 2>/dev/null | xargs -0 sha256sum"
                          % " ".join(MANAGED_TREES))
    return dict(reversed(line.split("  ", 1)) for line in listing.splitlines())


def assert_node_is_whole():
    names = " -o ".join("-name '%s'" % name for name in TEMPORARY_NAMES)
    leftovers = docker_exec(NODE, "sh", "-c", "find / -xdev \\( %s \\) -print; ls -A /root/.ansible/tmp 2>/dev/null; true"
                            % names)
    assert leftovers == "", "temporary files left: %s" % leftovers
    assert docker_exec(NODE, "cat", LOCK) == "", "the lock still names a holder after both runs ended"
    persistence = docker_exec(NODE, "nvidia-smi", "--query-gpu=persistence_mode", "--format=csv,noheader").split()
    assert persistence == ["Enabled"] * 8
    assert docker_exec(NODE, "systemctl", "is-active", "nvidia-persistenced").strip() == "active"


def test_two_runs_on_a_fresh_node_both_succeed_and_converge_it_once(inventory, fresh_checksums):
    outcomes = run_two_at_once(inventory)
    assert_both_succeeded(outcomes)
    first, second = (changed_features(output) for dummy, output in outcomes)
    # Whichever run took the node lock first changed the node; the other found it done.
    # memlock honestly reports changed in both: systemd's re-exec stays pending until the handler after the call.
    changed_by_both = first & second - {"memlock"}
    assert changed_by_both == set(), changed_by_both
    # Files these write on every fresh node: both runs did meet work to do.
    assert {"sysctl_settings", "persistenced", "memlock"} <= first | second, (first, second)
    assert_node_is_whole()
    fresh_checksums.update(file_checksums())


def test_two_runs_on_a_converged_node_change_nothing_even_after_waiting(inventory, fresh_checksums):
    before = fresh_checksums or file_checksums()
    outcomes = run_two_at_once(inventory, hold_lock=True, first_task=(FIRST_LOCKING_TASK, 1))
    assert_both_succeeded(outcomes)
    for dummy, output in outcomes:
        assert recap(output, NODE)["changed"] == 0, output[-4000:]
        # The first module that locks waits out flock(1), and says so.
        assert "for another gpuops.hardening run to release %s (held by " % LOCK in " ".join(output.split()), output[-4000:]
    assert file_checksums() == before
    assert_node_is_whole()


MIG_NODE = "rel-lock-mig"
MIG_SPEC = {MIG_NODE: {"gpuops_gpu_profile": "a100_8x_mig", "gpuops_lab_persistenced_unit": "debian", "mig_state": "present"}}
MIG_PLAYBOOK = "playbooks/mig.yml"
# Two layouts that differ on every GPU they name: the modes too, so each change stops the GPU client and resets.
MIG_CHANGES = (
    {"0": {"mig_enabled": True, "mig_devices": {"1g.10gb": 7}}, "1": {"mig_enabled": True, "mig_devices": {"3g.40gb": 2}}},
    {"0": {"mig_enabled": True, "mig_devices": {"2g.20gb": 3}}, "1": {"mig_enabled": False}},
)
GPU_CLIENT = "nvidia-dcgm.service"


@pytest.fixture(scope="module")
def mig_inventory(tmp_path_factory):
    try:
        path = start_nodes(MIG_SPEC, tmp_path_factory.mktemp("lock-mig"))
        docker_exec(MIG_NODE, "systemctl", "start", GPU_CLIENT)
        yield path
    finally:
        stop_nodes(MIG_SPEC)


def mig_layout():
    """{GPU index: (MIG mode current, pending, {profile: count})} of the GPUs the changes name."""
    node = Node(MIG_NODE)
    devices, modes = mig_devices(node), mig_modes(node)
    return dict((str(index), modes[index] + (profile_counts(devices[index]),)) for index in (0, 1))


def declared(change):
    return dict((index, ("Enabled", "Enabled", gpu["mig_devices"]) if gpu["mig_enabled"] else ("Disabled", "Disabled", {}))
                for index, gpu in change.items())


def test_two_mig_changes_at_once_leave_one_whole_layout_and_the_client_running(mig_inventory):
    outcomes = run_two_at_once(mig_inventory, hold_lock=True, node=MIG_NODE, playbook=MIG_PLAYBOOK,
                               extra_vars=tuple({"mig_layouts": change} for change in MIG_CHANGES),
                               # The validate play's check of the layout, in check mode, takes no lock.
                               first_task=(FIRST_LOCKING_TASK, 1))
    assert_both_succeeded(outcomes, MIG_NODE)
    for dummy, output in outcomes:
        # Both made their change in turn: neither found the other's layout half done.
        assert recap(output, MIG_NODE)["changed"] >= 1, output[-4000:]
        assert "for another gpuops.hardening run to release %s (held by " % LOCK in " ".join(output.split()), output[-4000:]
    assert mig_layout() in [declared(change) for change in MIG_CHANGES], mig_layout()
    assert docker_exec(MIG_NODE, "systemctl", "is-active", GPU_CLIENT).strip() == "active"
    assert docker_exec(MIG_NODE, "sh", "-c", "ls /var/lib/gpuops-hardening/mig-clients-stopped.json 2>/dev/null || true") == ""
    assert docker_exec(MIG_NODE, "cat", LOCK) == ""
