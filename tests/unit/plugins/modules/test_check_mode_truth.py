# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Check mode tells the truth, for every engine.

On a node that needs changes, check mode changes nothing and predicts exactly what the real run then
does: its whole result (``changed``, the items, ``reboot_required``, the diff, the warnings, a
failure), less only what the run learns by making its change (UNKNOWN_BEFORE_THE_CHANGE). On the node
the real run left, check mode and the real run return the same result, and neither changes anything.
Every case runs through its feature's own module and through gpuops.hardening.node, on the nodes,
fakes and arguments of the module's own tests.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import json
import os
import pathlib

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import installed_files as installed_files_engine
from ansible_collections.gpuops.hardening.plugins.module_utils.engines import thp as thp_engine
from ansible_collections.gpuops.hardening.plugins.module_utils.persistenced import DROPIN_PATH
from ansible_collections.gpuops.hardening.plugins.modules.container_runtime import main as container_runtime_main
from ansible_collections.gpuops.hardening.plugins.modules.gpu_numa_facts import main as gpu_numa_facts_main
from ansible_collections.gpuops.hardening.plugins.modules.installed_files import main as installed_files_main
from ansible_collections.gpuops.hardening.plugins.modules.kubelet_config import main as kubelet_config_main
from ansible_collections.gpuops.hardening.plugins.modules.memlock import main as memlock_main
from ansible_collections.gpuops.hardening.plugins.modules.mps import main as mps_main
from ansible_collections.gpuops.hardening.plugins.modules.node import main as node_main
from ansible_collections.gpuops.hardening.plugins.modules.nvidia_mig import main as nvidia_mig_main
from ansible_collections.gpuops.hardening.plugins.modules.persistenced import main as persistenced_main
from ansible_collections.gpuops.hardening.plugins.modules.slurm_gres import main as slurm_gres_main
from ansible_collections.gpuops.hardening.plugins.modules.swap_off import main as swap_off_main
from ansible_collections.gpuops.hardening.plugins.modules.sysctl_settings import main as sysctl_settings_main
from ansible_collections.gpuops.hardening.plugins.modules.thp import main as thp_main
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules import test_container_runtime
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules import test_kubelet_config, test_slurm_gres
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.container_node import ContainerNode
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules import test_memlock, test_mps, test_persistenced
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules import test_swap_off, test_sysctl_settings
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.emulated_host import emulated_host
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.mig_node import LAYOUT, mig_layouts
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.recorded_systemctl import recorded_systemctl
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.test_installed_files_units import _install, _remove
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.test_node import THP, tree
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.test_nvidia_mig_resets import GPU2_BUS_ID
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.thp_host import thp_host_tree

# The nodes of the modules' own tests, as fixtures of this module: pytest finds a fixture by its name here.
sysctl_node = test_sysctl_settings.node
swap_node = test_swap_off.node
memlock_node, root = test_memlock.booted, test_memlock.root  # booted builds on root
persistenced_host = test_persistenced.host
make_mps_host = test_mps.make_host
slurm_host = test_slurm_gres.host
kubelet_host = test_kubelet_config.host

MODULES = {
    "sysctl_settings": sysctl_settings_main, "swap_off": swap_off_main, "thp": thp_main, "memlock": memlock_main,
    "persistenced": persistenced_main, "nvidia_mig": nvidia_mig_main, "installed_files": installed_files_main,
    "mps": mps_main, "gpu_numa_facts": gpu_numa_facts_main, "slurm_gres": slurm_gres_main,
    "kubelet_config": kubelet_config_main, "container_runtime": container_runtime_main,
}


class Node:
    """What a case runs on: its root, the options only this node knows, and where else its state lies."""

    def __init__(self, root, fake=None, options=None, gpu_state=None, books=None, daemon_logs=None):
        self.root = str(root)
        self.fake = fake  # the module's own tests' fake host, for a case to change the node with
        self.options = options or {}
        self.gpu_state = gpu_state  # the emulator's state file: the GPUs, their daemons and processes
        self.books = books  # () -> what the fake systemctl (or swapoff) holds and was told to do
        self.daemon_logs = daemon_logs  # a folder whose files a running daemon appends to as it answers

    def snapshot(self):
        files = tree(self.root)
        if self.daemon_logs:
            files = dict((path, entry) for path, entry in files.items()
                         if not (path.startswith(self.daemon_logs + "/") and entry[1] is not None))
        return {"files": files, "gpus": api.read_state(self.gpu_state) if self.gpu_state else None,
                "books": self.books() if self.books else None}


def within(request, context):
    """Enter a context manager for the rest of the test; returns what it gives."""
    stack = contextlib.ExitStack()
    request.addfinalizer(stack.close)
    return stack.enter_context(context)


def without_root(args):
    """A module's arguments from its own tests, as a plan's feature takes them: root is the call's."""
    return dict((key, value) for key, value in args.items() if key != "root")


def call(engine, node, args, check_mode=False, via="module"):
    """The engine's module, or gpuops.hardening.node with the engine as its one feature, on the node."""
    args = dict(args, **node.options)
    if via == "module":
        return run_module(MODULES[engine], dict(args, root=node.root), check_mode=check_mode, diff=True)
    features = [{"name": engine, "engine": engine, "args": args}]
    return run_module(node_main, {"root": node.root, "features": features}, check_mode=check_mode, diff=True)


# --- the nodes ---------------------------------------------------------------------------------

def stock_kernel(request):
    """test_sysctl_settings' node: a kernel at stock values and empty sysctl.d folders."""
    return Node(request.getfixturevalue("sysctl_node"))


def swap_in_use(request):
    """test_swap_off's node: swap in fstab, two swap areas in use, zram configured; its swapoff records the calls."""
    node = request.getfixturevalue("swap_node")
    fake_run = within(request, test_swap_off.swapoff_tools(node))
    return Node(node, books=lambda: list(fake_run.calls))


def recorded_units(request, engine):
    """The engine's systemctl recorded for the test; returns what reads its books."""
    recorded = within(request, recorded_systemctl(engine))
    return lambda: (sorted(recorded.enabled), list(recorded.calls))


def thp_defaults(request):
    """THP sysfs at kernel defaults, a kernel command line, no boot unit."""
    tmp_path = request.getfixturevalue("tmp_path")
    thp_host_tree(tmp_path)
    return Node(tmp_path, books=recorded_units(request, thp_engine))


def memlock_booted(request):
    """test_memlock's booted host: docker with a daemon.json, PAM with pam_limits, a running systemd (a fake)."""
    return Node(request.getfixturevalue("memlock_node"))


def persistenced_unit(flavour):
    """An L40S node with the packaged nvidia-persistenced.service of flavour (None: none)."""
    def build(request):
        host = request.getfixturevalue("persistenced_host")
        if flavour:
            host.install_unit(flavour)
        return Node(host.root, host, gpu_state=host.state, books=lambda: (sorted(host.enabled), list(host.calls)))
    return build


def mig_gpus(reset_file=True, **node_args):
    """The emulated 8x A100 node (mig_node(**node_args)); without GPU 2's sysfs reset file when reset_file is false."""
    def build(request):
        node = request.getfixturevalue("mig_node")(**node_args)
        if not reset_file:
            os.remove(os.path.join(node.root, "sys/bus/pci/devices", GPU2_BUS_ID, "reset"))
        return Node(node.root, node, gpu_state=node.path, books=lambda: (dict(node.units), list(node.unit_calls)))
    return build


def empty_tree(request):
    """An empty host tree, its systemctl recorded."""
    return Node(request.getfixturevalue("tmp_path"), books=recorded_units(request, installed_files_engine))


def l40s_mps_host(request):
    """test_mps's 4x L40S host: the emulator's nvidia-smi and MPS control daemon, a systemctl that runs the unit."""
    host = request.getfixturevalue("make_mps_host")()
    # The daemon logs every question check mode asks it through its pipe.
    return Node(host.root, host, gpu_state=host.state, books=lambda: (sorted(host.enabled), list(host.calls)),
                daemon_logs="var/log/nvidia-mps")


def emulated_topology(request):
    """An emulated 8x A100 node's nvidia-smi, sysfs and procfs (emulated_host)."""
    tmp_path = request.getfixturevalue("tmp_path")
    args, dummy, state_path = emulated_host(tmp_path, "a100_8x_mig")
    return Node(tmp_path, options={"nvidia_smi_path": args["nvidia_smi_path"]}, gpu_state=state_path)


def slurm_config(request):
    """test_slurm_gres's host: a 1-socket sysfs CPU topology and user lines in gres.conf and cgroup.conf."""
    return Node(request.getfixturevalue("slurm_host"))


def kubelet_node(request):
    """test_kubelet_config's host: a 2-node sysfs, the kubelet's file and both state files, a running kubelet."""
    root, dummy, systemctl = request.getfixturevalue("kubelet_host")
    return Node(root, books=lambda: (systemctl.active, list(systemctl.calls)))


def container_engines(request):
    """test_container_runtime's node: Docker, containerd and Podman running, the toolkit's CDI refresh units, the
    emulator's nvidia-ctk on an 8x A100 node, a daemon.json and a config.toml of the administrator's."""
    node = ContainerNode(request.getfixturevalue("tmp_path"))
    within(request, node.systemd_and_docker(request.getfixturevalue("monkeypatch")))
    node.install("docker", "containerd", "podman")
    node.refresh_units()
    node.write("/etc/docker/daemon.json", test_container_runtime.DAEMON_JSON)
    node.write("/etc/containerd/config.toml", test_container_runtime.CONTAINERD_CONFIG)
    return Node(node.root, node, options={"nvidia_ctk_path": node.args()["nvidia_ctk_path"]}, gpu_state=node.state,
                books=node.books)


def a_driver_upgrade(node):
    state = api.read_state(node.gpu_state)
    state["driver_version"] = "580.65.06"
    api.write_state(state, node.gpu_state)


def after_a_run(build, engine, args, then=None):
    """The node build makes, converged by a real run of engine with args, then changed by then(node)."""
    def build_after(request):
        node = build(request)
        result = call(engine, node, args)
        assert not result["failed"] and result["changed"], result
        if then:
            then(node)
        return node
    return build_after


def an_old_persistenced_dropin(node):
    with open(node.root + DROPIN_PATH, "w", encoding="utf-8") as handle:
        handle.write("[Service]\nExecStart=\nExecStart=/usr/bin/nvidia-persistenced\n")


def gpu_1_back_to_default(node):
    rc, dummy, err = node.fake.smi(["-i", "1", "-c", "DEFAULT"])
    assert rc == 0, err


# --- the table ---------------------------------------------------------------------------------

# name: what the node has that needs changing; engine; node: request -> Node; args: the engine's arguments but root;
# fails: the real run fails (after its changes), and check mode must fail alike; holds: what the real run's result
# says, which makes the case the one its name says.
Case = collections.namedtuple("Case", "name engine node args fails holds", defaults=(False, None))
MPS = {"group": "root", "active_thread_percentage": 50, "pinned_mem_limit": "2G"}
INSTALL = without_root(_install("/"))

CASES = [
    Case("a stock kernel", "sysctl_settings", stock_kernel, without_root(test_sysctl_settings._args("/"))),
    Case("swap in use, in fstab and zram", "swap_off", swap_in_use, {}),
    Case("THP at kernel defaults, no boot unit", "thp", thp_defaults, THP),
    Case("a THP boot unit to remove", "thp", after_a_run(thp_defaults, "thp", THP), dict(THP, persist=False)),
    Case("a booted host with docker", "memlock", memlock_booted, without_root(test_memlock._args("/"))),
    Case("a Debian unit, not running", "persistenced", persistenced_unit("debian"), {}),
    Case("an Ubuntu unit (static), not running", "persistenced", persistenced_unit("ubuntu"), {}),
    Case("a drop-in changed under the running daemon", "persistenced",
         after_a_run(persistenced_unit("debian"), "persistenced", {}, then=an_old_persistenced_dropin), {}),
    Case("no daemon: legacy persistence mode", "persistenced", persistenced_unit(None), {}),
    Case("the legacy boot unit to remove, the daemon installed since", "persistenced",
         after_a_run(persistenced_unit(None), "persistenced", {}, then=lambda node: node.fake.install_unit("upstream")), {}),
    Case("a masked unit to unmask", "persistenced", persistenced_unit("masked"), {"unmask": True}),
    Case("instances to create on a MIG GPU", "nvidia_mig", mig_gpus(), {"layouts": mig_layouts(g0=LAYOUT)},
         holds={"applied": True, "clients_stopped": []}),
    Case("a mode change a reset applies", "nvidia_mig", mig_gpus(mig_gpus=(0,)), {"layouts": mig_layouts(g2=LAYOUT)},
         holds={"applied": True, "reboot_required": False, "clients_stopped": ["nvidia-dcgm.service"]}),
    Case("a mode change that waits for a reboot", "nvidia_mig", mig_gpus(reset_file=False, mig_gpus=(0,)),
         {"layouts": mig_layouts(g2=LAYOUT)}, holds={"applied": False, "reboot_required": True}),
    Case("a mode change left to a reset", "nvidia_mig", mig_gpus(mig_gpus=(0,)), {"layouts": mig_layouts(g2=LAYOUT), "reset": False},
         holds={"applied": False, "reboot_required": False}),
    Case("a mode change left to a reset, require_applied", "nvidia_mig", mig_gpus(mig_gpus=(0,)),
         {"layouts": mig_layouts(g2=LAYOUT), "reset": False, "require_applied": True}, fails=True, holds={"applied": False}),
    Case("files, a folder and a unit to install", "installed_files", empty_tree, INSTALL),
    Case("files, a folder and a unit to remove", "installed_files", after_a_run(empty_tree, "installed_files", INSTALL),
         without_root(_remove("/"))),
    Case("an L40S host without MPS", "mps", l40s_mps_host, MPS),
    Case("a group to create, with a client", "mps", l40s_mps_host, {"group": "gpu-mps", "client_users": ["alice"]}),
    Case("a compute mode reset under the running daemon", "mps",
         after_a_run(l40s_mps_host, "mps", MPS, then=gpu_1_back_to_default), MPS),
    Case("an MPS daemon to remove", "mps", after_a_run(l40s_mps_host, "mps", MPS), dict(MPS, state="absent")),
    Case("a GPU set left out", "mps", after_a_run(l40s_mps_host, "mps", dict(MPS, gpu_sets={"left": [0, 1], "right": [2, 3]})),
         dict(MPS, gpu_sets={"right": [2, 3]})),
    Case("a pipe folder moved", "mps", after_a_run(l40s_mps_host, "mps", MPS), dict(MPS, pipe_directory="/run/mps")),
    Case("a topology fact file to write", "gpu_numa_facts", emulated_topology, {"fact_path": "/etc/ansible/facts.d/gpu_topology.fact"}),
    Case("GPU lines and cgroup constraints to merge", "slurm_gres", slurm_config, {"gpus": test_slurm_gres._gpus()}),
    Case("AutoDetect=nvml in place of explicit lines", "slurm_gres",
         after_a_run(slurm_config, "slurm_gres", {"gpus": test_slurm_gres._gpus()}), {"autodetect": "nvml"}),
    Case("a policy change that resets both state files", "kubelet_config", kubelet_node,
         {"settings": test_kubelet_config.SETTINGS}, holds={"service_action": "stopped_and_started"}),
    Case("a topology policy change alone: a restart", "kubelet_config",
         after_a_run(kubelet_node, "kubelet_config", {"settings": test_kubelet_config.SETTINGS}),
         {"settings": dict(test_kubelet_config.SETTINGS, topologyManagerPolicy="restricted")},
         holds={"service_action": "restarted", "state_files_removed": []}),
    Case("container engines without the NVIDIA runtime", "container_runtime", container_engines, {"shm_size": "16g"},
         holds={"services": {"docker.service": "reloaded", "containerd.service": "restarted"}}),
    Case("a CDI spec stale after a driver upgrade", "container_runtime",
         after_a_run(container_engines, "container_runtime", {"shm_size": "16g"}, then=a_driver_upgrade),
         {"shm_size": "16g"}, holds={"services": {}}),
]

# What the real run learns only by making its change, so that check mode cannot say it: per engine, the paths in
# the result left out of the comparison on the node that needs changes (a.b: key b of dict a; a[].b: key b of each
# element of list a), each with why. On the converged node nothing is left out.
UNKNOWN_BEFORE_THE_CHANGE = {
    "swap_off": {"fstab.backup_file": "the copy of fstab the write makes, named by its pid and time"},
    "memlock": {"files[].backup_file": "the copy of daemon.json the write makes, named by its pid and time"},
    "persistenced": {
        "verification": "the run reads persistence mode back after its change; check mode, which changed nothing, "
                        "has nothing to read back and says so",
        "gpus": "what the GPUs read back after the change (the verification's reading)",
    },
    "nvidia_mig": {
        "gpus[].created": "the GPU instances nvidia-smi made, with the ids it gave them",
        "gpus[].summary": "one line for people in the tense of the call: 'would change' in check mode, 'in place' "
                          "once done; the flags it is made of are compared",
    },
    "mps": {"daemons[].verified": "what the daemon says through its pipe once (re)started or sent its settings again"},
    "slurm_gres": {"gres_conf.backup_file": "the copy of gres.conf the write makes, named by its pid and time",
                   "cgroup_conf.backup_file": "the copy of cgroup.conf the write makes, named by its pid and time"},
    "kubelet_config": {"backup_file": "the copy of the kubelet's file the write makes, named by its pid and time"},
}
# What check mode must always predict, whatever the engine.
ALWAYS_COMPARED = ("changed", "reboot_required", "pending", "reset_required", "applied", "diff", "warnings", "msg")


def left_out(result, path):
    """Remove from result, in place, what path names."""
    head, dummy, rest = path.partition(".")
    if head.endswith("[]"):
        for item in result.get(head[:-2]) or []:
            left_out(item, rest)
    elif rest:
        if isinstance(result.get(head), dict):
            left_out(result[head], rest)
    else:
        result.pop(head, None)


def comparable(result, engine, via):
    """A copy of result without what the real run learns by its change (UNKNOWN_BEFORE_THE_CHANGE)."""
    result = copy.deepcopy(result)
    for path in UNKNOWN_BEFORE_THE_CHANGE.get(engine, {}):
        left_out(result if via == "module" else result["features"][engine], path)
    return result


def differences(predicted, done, path="result"):
    """Where two results differ, as lines 'path: predicted != done'."""
    if isinstance(predicted, dict) and isinstance(done, dict):
        return [line for key in sorted(set(predicted) | set(done), key=str)
                for line in differences(predicted.get(key, "<absent>"), done.get(key, "<absent>"), "%s.%s" % (path, key))]
    if isinstance(predicted, list) and isinstance(done, list) and len(predicted) == len(done):
        return [line for index, pair in enumerate(zip(predicted, done)) for line in differences(pair[0], pair[1], "%s[%d]" % (path, index))]
    return [] if predicted == done else ["%s: %r != %r" % (path, predicted, done)]


def assert_same(predicted, done):
    assert predicted == done, "\n".join(["check mode != real run"] + differences(predicted, done))


def assert_unchanged(node, before, what):
    after = node.snapshot()
    assert after == before, "\n".join(["%s changed the node" % what] + differences(before, after, "node"))


@pytest.mark.parametrize("via", ["module", "node call"])
@pytest.mark.parametrize("case", CASES, ids=["%s: %s" % (case.engine, case.name) for case in CASES])
def test_check_mode_predicts_the_real_run_and_agrees_with_it_once_converged(request, case, via):
    node = case.node(request)
    before = node.snapshot()
    predicted = call(case.engine, node, case.args, check_mode=True, via=via)
    assert predicted["failed"] is case.fails, predicted
    assert_unchanged(node, before, "check mode")
    done = call(case.engine, node, case.args, via=via)
    assert done["failed"] is case.fails, done
    assert done["changed"], "the case's node needed no change"
    feature = done if via == "module" else done["features"][case.engine]
    assert dict((key, feature[key]) for key in case.holds or {}) == (case.holds or {})
    assert_same(comparable(predicted, case.engine, via), comparable(done, case.engine, via))

    converged = node.snapshot()
    predicted = call(case.engine, node, case.args, check_mode=True, via=via)
    assert_unchanged(node, converged, "check mode on the converged node")
    done = call(case.engine, node, case.args, via=via)
    assert_unchanged(node, converged, "the real run on the converged node")
    assert not done["changed"], done
    assert_same(predicted, done)


def test_nothing_check_mode_must_predict_is_left_out():
    for engine, paths in UNKNOWN_BEFORE_THE_CHANGE.items():
        for path in paths:
            assert not set(path.replace("[]", "").split(".")) & set(ALWAYS_COMPARED), (engine, path)


# The MIG boot service has no module: it runs in a node call after the nvidia_mig feature whose layout it records.
BOOT = {"script_file": {"content": "print('boot')\n", "interpreters": ["/usr/libexec/platform-python", "/usr/bin/python3"]},
        "engine_files": [{"path": "mig_plan.py", "content": "# the engine\n"}], "reset": True, "mig_timeout": 30}


def boot_call(node, check_mode=False):
    features = [{"name": "mig_layout", "engine": "nvidia_mig", "args": {"layouts": mig_layouts(g0=LAYOUT)}},
                {"name": "mig_boot", "engine": "mig_boot", "args": BOOT}]
    result = run_module(node_main, {"root": node.root, "features": features}, check_mode=check_mode, diff=True)
    for path in UNKNOWN_BEFORE_THE_CHANGE["nvidia_mig"]:
        left_out(result["features"]["mig_layout"], path)
    return result


def test_the_mig_boot_service_records_the_layout_and_check_mode_predicts_it(request):
    node = mig_gpus()(request)
    os.makedirs(os.path.join(node.root, "usr", "bin"))
    with open(os.path.join(node.root, "usr", "bin", "python3"), "w", encoding="utf-8") as handle:
        handle.write("#!/bin/sh\n")
    os.chmod(os.path.join(node.root, "usr", "bin", "python3"), 0o755)
    units = recorded_units(request, installed_files_engine)
    before = node.snapshot()
    predicted = boot_call(node, check_mode=True)
    assert_unchanged(node, before, "check mode")
    assert units() == ([], [])
    done = boot_call(node)
    assert not done["failed"] and done["features"]["mig_boot"]["changed"], done
    assert_same(predicted, done)
    with open(os.path.join(node.root, "etc/gpuops-hardening/mig/layout.json"), encoding="utf-8") as handle:
        assert json.load(handle) == {"layouts": done["features"]["mig_layout"]["layouts"], "force": False,
                                     "reset": True, "timeout": 30}
    with open(os.path.join(node.root, "usr/local/libexec/gpuops-mig-boot"), encoding="utf-8") as handle:
        assert handle.read() == "#!/usr/bin/python3\nprint('boot')\n"
    with open(os.path.join(node.root, "etc/systemd/system/gpuops-mig.service"), encoding="utf-8") as handle:
        unit = handle.read()
    assert "Before=%s\n" % " ".join(done["features"]["mig_layout"]["gpu_clients"]) in unit
    assert units()[0] == ["gpuops-mig.service"]

    converged = node.snapshot()
    predicted = boot_call(node, check_mode=True)
    assert_unchanged(node, converged, "check mode on the converged node")
    done = boot_call(node)
    assert_unchanged(node, converged, "the real run on the converged node")
    assert not done["changed"], done
    assert_same(predicted, done)


def test_the_mig_boot_service_needs_the_layout_feature_before_it(request):
    node = mig_gpus()(request)
    result = run_module(node_main, {"root": node.root, "features": [
        {"name": "mig_boot", "engine": "mig_boot", "args": BOOT}]}, diff=True)
    assert result["failed"] and result["failed_feature"] == "mig_boot"
    assert "records the layout of the feature mig_layout, which did not run before it" in result["msg"]


def test_a_layout_the_gpus_cannot_take_fails_the_call_before_any_feature_changes_the_node(request):
    """The node call checks its MIG and MPS features in check mode before its first change, as a validation play
    would: THP, first in the plan and due for a change, stays as it was."""
    node = mig_gpus()(request)
    thp_host_tree(pathlib.Path(node.root))
    recorded_units(request, thp_engine)
    before = node.snapshot()
    features = [{"name": "thp", "engine": "thp", "args": THP},
                {"name": "mig_layout", "engine": "nvidia_mig",
                 "args": {"layouts": mig_layouts(g9=LAYOUT), "layouts_variable": "mig_layouts"}}]
    result = run_module(node_main, {"root": node.root, "features": features}, diff=True)
    assert result["failed"] and result["failed_feature"] == "mig_layout" and not result["changed"], result
    assert result["msg"].startswith("mig_layout: mig_layouts: GPU 9 is not on this host"), result["msg"]
    assert list(result["features"]) == ["mig_layout"], "a feature ran before the check"
    assert_unchanged(node, before, "a refused call")


def test_kubelet_settings_the_node_cannot_hold_fail_the_call_before_any_feature_changes_the_node(request):
    """Reserved CPUs the node lacks: the kubelet feature, last in a whole node's plan, refuses before THP changes."""
    node = kubelet_node(request)
    thp_host_tree(pathlib.Path(node.root))
    recorded_units(request, thp_engine)
    before = node.snapshot()
    settings = dict(test_kubelet_config.SETTINGS, reservedSystemCPUs="0,200")
    features = [{"name": "thp", "engine": "thp", "args": THP},
                {"name": "kubelet", "engine": "kubelet_config",
                 "args": {"settings": settings, "labels": {"reservedSystemCPUs": "kubelet_topology_reserved_system_cpus"}}}]
    result = run_module(node_main, {"root": node.root, "features": features}, diff=True)
    assert result["failed"] and result["failed_feature"] == "kubelet" and not result["changed"], result
    assert "kubelet_topology_reserved_system_cpus: got '0,200'" in result["msg"], result["msg"]
    assert list(result["features"]) == ["kubelet"], "a feature ran before the check"
    assert_unchanged(node, before, "a refused call")
