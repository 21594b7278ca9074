# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabricmanager engine: on a node whose GPUs sit behind NVSwitches, Fabric Manager at the driver's
version, its unit started only where the switches are, running, and every GPU's fabric trained.

converge(spec, host, check_mode) -> result. Everything is read and judged before the first change: a node
without NVSwitches is a no-op with its reason; a version other than the driver's, a missing or masked unit,
and a restart under running compute processes (without force) fail with nothing changed. With install, the
checks that do not depend on the package (the mask, the restart's refusal) come before it, in check mode too.

A restart is a start over GPUs an earlier daemon trained (their fabric reads Completed while it does not
run). The GPUs are reset between the daemon's stop and its start (Fabric Manager user guide, "NVSwitch and
NVLink Initialization"; NVIDIA/nccl #1488 shows a restart without the reset breaking NVLink SHARP until a
reboot), so the GPU clients are stopped around it with the MIG change's SystemdClients.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gpuops.hardening.plugins.module_utils import fabricmanager, gpu_health
from ansible_collections.gpuops.hardening.plugins.module_utils.commands import CommandTimeout, run, run_outcome
from ansible_collections.gpuops.hardening.plugins.module_utils.engines.nvidia_mig import (
    GPU_CLIENTS, ClientError, SystemdClients, start_recorded_clients)
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec, under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import ensure_content
from ansible_collections.gpuops.hardening.plugins.module_utils.nvidia_smi import parse_query_root, query_root
from ansible_collections.gpuops.hardening.plugins.module_utils.smi_tool import NvidiaSmi, NvidiaSmiFailed
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import Systemctl, find_unit, journal_tail

POLL_PAUSE = 2.0
PACKAGE_TOOLS = (("dpkg", "dpkg-query"), ("rpm", "rpm"))
# The tool that installs from the node's configured repositories, per package manager.
INSTALLERS = {"dpkg": "apt-get", "rpm": "dnf"}
# A package download and install takes longer than a query: its own bound.
INSTALL_TIMEOUT = 900

NAME = "fabricmanager"
ARGUMENT_SPEC = host_argument_spec()
ARGUMENT_SPEC.update(
    # {product name: GPU count from which its boards carry NVSwitches}: the controller's gpu_models table.
    fabric_gpus=dict(type="dict", default={}),
    wait_seconds=dict(type="int", default=120),
    force=dict(type="bool", default=False),
    # Install the package at the driver's version from the node's repositories where it is missing or another.
    install=dict(type="bool", default=False),
    gpu_clients=dict(type="list", elements="str", default=list(GPU_CLIENTS)),
)
SPEC_RULES = {}


def read_gpus(feature, smi, survey):
    """(driver version, GPUs with their processes and fabric state) from one nvidia-smi -q -x."""
    try:
        text = smi.read(["-q", "-x"]) if survey else smi.call(["-q", "-x"])
        root = query_root(text)
    except (NvidiaSmiFailed, ValueError) as error:
        feature.fail_json(msg="nvidia-smi -q -x: %s" % error, cmd=smi.argv(["-q", "-x"]))
    parsed = parse_query_root(root)
    states = fabricmanager.fabric_states(gpu_health.gpu_health(root, parsed["gpus"]))
    for gpu, state in zip(parsed["gpus"], states):
        gpu["fabric"] = {"state": state["state"], "status": state["status"]}
    return parsed["driver_version"], parsed["gpus"]


def fabric_list(gpus):
    return [{"index": gpu["index"], "uuid": gpu["uuid"], "state": gpu["fabric"]["state"],
             "status": gpu["fabric"]["status"]} for gpu in gpus]


def package_manager(feature):
    """(manager, its query tool's path): dpkg before rpm; ("dpkg", None) where neither is found."""
    for manager, tool in PACKAGE_TOOLS:
        path = feature.get_bin_path(tool)
        if path:
            return manager, path
    return "dpkg", None


def package_version(feature, manager, tool_path, package):
    """The installed package's version; None when not installed, or not known (no dpkg or rpm, a hang)."""
    if not tool_path:
        return None
    try:
        dummy_rc, out, dummy_err = run(feature, fabricmanager.package_query_argv(manager, tool_path, package),
                                       timeout=feature.params["timeout"])
    except CommandTimeout:
        return None
    return fabricmanager.parse_package_version(out)


def install_package(feature, manager, result):
    """The package at the driver's version, installed from the node's configured repositories (install: true):
    apt-get with the exact version apt-cache offers, or dnf with NAME-VERSION. Fails, naming what the
    repositories offer or the installer's error, with nothing else changed."""
    package, driver = result["package"], result["driver_version"]
    installer = feature.get_bin_path(INSTALLERS[manager])
    if not installer:
        missing = "install: %s is needed to install %s at version %s, and is not found; nothing was changed" % (
            INSTALLERS[manager], package, driver)
        feature.fail_json(msg=missing, **result)
    version = driver
    if manager == "dpkg":
        madison = [feature.get_bin_path("apt-cache") or "apt-cache", "madison", package]
        outcome = run_outcome(feature, madison, timeout=feature.params["timeout"])
        offered = [] if isinstance(outcome, CommandTimeout) else fabricmanager.offered_versions(outcome[1], package)
        version = fabricmanager.version_for_driver(offered, driver)
        if not version:
            feature.fail_json(msg="install: the configured repositories offer %s at %s, not at the driver's version %s; "
                              "add NVIDIA's repository for this driver or install it yourself; nothing was changed" % (
                                  package, ", ".join(offered) or "no version", driver), **result)
    argv = fabricmanager.install_argv(manager, installer, package, version)
    result["installed"] = "%s %s" % (package, version)
    try:
        rc, out, err = run(feature, argv, timeout=INSTALL_TIMEOUT, environ={"DEBIAN_FRONTEND": "noninteractive"})
    except CommandTimeout as error:
        feature.fail_json(msg="install: %s" % error, cmd=argv, **result)
    if rc != 0:
        feature.fail_json(msg="install: %s failed with exit code %s: %s" % (" ".join(argv), rc, (err or out).strip()),
                          cmd=argv, **result)


def describe_processes(processes):
    return ", ".join("pid %s (%s)" % (process["pid"], process["name"]) for process in processes)


def daemon_version(feature, result):
    path = feature.get_bin_path(fabricmanager.DAEMON)
    if not path:
        feature.fail_json(msg="%s not found although %s is installed; install %s at version %s; nothing was changed" % (
            fabricmanager.DAEMON, fabricmanager.UNIT, result["package"], result["driver_version"]), **result)
    argv = [path, "--version"]
    try:
        rc, out, err = run(feature, argv, timeout=feature.params["timeout"])
    except CommandTimeout as error:
        feature.fail_json(msg="%s; nothing was changed" % error, cmd=argv, **result)
    version = fabricmanager.parse_daemon_version(out)
    if rc != 0 or not version:
        feature.fail_json(msg="%s --version gave no version (exit code %s: %s); nothing was changed" % (
            path, rc, (err or out).strip() or "no output"), cmd=argv, **result)
    return version


def wait_for_fabric(feature, smi, result):
    """Poll every GPU's fabric until all read Completed/Success or wait_seconds pass; fail naming the rest."""
    deadline = time.time() + feature.params["wait_seconds"]
    while True:
        dummy, gpus = read_gpus(feature, smi, survey=False)
        result["gpus"] = fabric_list(gpus)
        waiting = fabricmanager.untrained(result["gpus"])
        if not waiting:
            break
        if time.time() >= deadline:
            feature.fail_json(msg="the NVSwitch fabric is not trained after %d seconds (wait_seconds): GPU %s; %s %s" % (
                feature.params["wait_seconds"], ", ".join(waiting), fabricmanager.UNIT,
                journal_tail(feature, fabricmanager.UNIT)), **result)
        time.sleep(POLL_PAUSE)
    result["verification"] = verdict(result["gpus"])


def verdict(gpus):
    """What the GPUs' fabric states say once every reported one is trained."""
    return "passed" if fabricmanager.fabric_reported(gpus) else \
        "not reported: these GPUs do not report their fabric state (NVML reports it on Hopper and newer)"


def read_fabric_once(result):
    """Check mode (the audit, a node call's check-first pass): the fabric as the survey read it, judged without
    waiting; a fabric still training is reported, not waited for."""
    waiting = fabricmanager.untrained(result["gpus"])
    result["verification"] = "not trained when read (check mode does not wait): GPU %s" % ", ".join(waiting) \
        if waiting else verdict(result["gpus"])


def where(feature, gpus, result):
    """The reason the node needs no Fabric Manager, or None when its GPUs sit behind NVSwitches."""
    result["nvswitch_devices"] = fabricmanager.nvswitch_devices(feature.params["root"])
    result["fabric_expected"] = fabricmanager.fabric_expected([gpu["name"] for gpu in gpus], feature.params["fabric_gpus"])
    if result["nvswitch_devices"]:
        return None
    if result["fabric_expected"]:
        feature.fail_json(msg="the GPUs (%s) sit on an NVSwitch board, but no /dev/nvidia-nvswitchN exists: the NVSwitch "
                          "driver did not load, and Fabric Manager cannot start; nothing was changed" % ", ".join(
                              "%d x %s" % (count, name) for name, count in sorted(result["fabric_expected"].items())),
                          **result)
    return "no NVSwitch on this node: no /dev/nvidia-nvswitchN, and no GPU model whose boards carry NVSwitches"


def unit_active(systemctl):
    return systemctl.show([fabricmanager.UNIT], ["ActiveState"])[0].get("ActiveState") == "active"


def restart_plan(feature, gpus, active, result):
    """Whether starting the daemon is a restart over trained GPUs, which then need a reset; fails (nothing
    changed) while compute processes run on them unless force."""
    trained = [gpu for gpu in gpus if gpu["fabric"]["state"] == fabricmanager.COMPLETED]
    if active or not trained:
        return False
    busy = [(gpu["index"], gpu["processes"]) for gpu in gpus if gpu["processes"]]
    if busy and not feature.params["force"]:
        feature.fail_json(msg="%s is not running but an earlier run trained the fabric: starting it again needs every GPU "
                          "reset, and compute processes run: %s. Stop them, or set force; nothing was changed" % (
                              fabricmanager.UNIT, "; ".join("GPU %d: %s" % (index, describe_processes(processes))
                                                            for index, processes in busy)), **result)
    return True


def restart(feature, smi, systemctl, clients, result):
    """The GPU clients stopped, every GPU reset, the daemon started, the clients started again (also when
    the reset or the start fails)."""
    try:
        result["clients_stopped"] = clients.stop() if not feature.check_mode else clients.running()
    except ClientError as error:
        feature.fail_json(msg="%s; %s was not started and no GPU was reset" % (error, fabricmanager.UNIT), **result)
    if not feature.check_mode:
        try:
            # One GPU per call, as the MIG change resets: older nvidia-smi documents -r with -i only.
            for gpu in result["gpus"]:
                smi.call(["-i", str(gpu["index"]), "-r"])
        except NvidiaSmiFailed as error:
            failed = clients.start(result["clients_stopped"])
            feature.fail_json(msg="the GPU reset before the restart failed: %s%s" % (
                error, "; these GPU clients did not start again: " + ", ".join(failed) if failed else ""), **result)
    error = systemctl.try_verb("start", fabricmanager.UNIT)
    failed = [] if feature.check_mode else clients.start(result["clients_stopped"])
    if error:
        feature.fail_json(msg="systemctl start %s failed after the GPU reset: %s; %s%s" % (
            fabricmanager.UNIT, error, journal_tail(feature, fabricmanager.UNIT),
            "; these GPU clients did not start again: " + ", ".join(failed) if failed else ""), **result)
    if failed:
        feature.fail_json(msg="%s restarted, but these GPU clients did not start again: %s" % (
            fabricmanager.UNIT, ", ".join(failed)), **result)


def converge(spec, host, check_mode):
    """Converge this feature on the node as spec says (check_mode: only say what would change); returns the result."""
    feature = host.feature(NAME, spec, check_mode)
    params = feature.params
    result = dict(changed=False, nvswitch_devices=[], fabric_expected={}, driver_version=None, daemon_version=None,
                  package=None, package_version=None, installed=None, unit_path=None, dropin=None, enabled_changed=False,
                  service_action="none", clients_stopped=[], gpus=[], verification=None, skipped_reason=None, diff=[])
    smi = NvidiaSmi(feature)
    if not smi.path:
        result["skipped_reason"] = "nvidia-smi not found: no NVIDIA driver on this host"
        return result
    result["driver_version"], gpus = read_gpus(feature, smi, survey=True)
    result["gpus"] = fabric_list(gpus)
    result["skipped_reason"] = where(feature, gpus, result)
    if result["skipped_reason"]:
        return result

    manager, tool_path = package_manager(feature)
    result["package"] = fabricmanager.package_name(manager, result["driver_version"])
    result["package_version"] = package_version(feature, manager, tool_path, result["package"])
    mask_path, unit_path = find_unit(fabricmanager.UNIT, params["root"])
    result["unit_path"] = unit_path
    if mask_path:
        feature.fail_json(msg="%s is masked (%s -> /dev/null); unmask it to let Fabric Manager run; nothing was changed" % (
            fabricmanager.UNIT, mask_path), **result)
    # A restart over trained GPUs under compute processes is refused before anything, the install included.
    systemctl = Systemctl(feature, timeout=params["timeout"])
    active = unit_active(systemctl)
    restarting = restart_plan(feature, gpus, active, result)
    if params["install"] and result["package_version"] != result["driver_version"]:
        if check_mode:
            result.update(changed=True, installed="%s %s" % (result["package"], result["driver_version"]),
                          verification="skipped in check mode: the package would be installed first, and what "
                                       "follows depends on what it installs")
            return result
        install_package(feature, manager, result)
        result["package_version"] = package_version(feature, manager, tool_path, result["package"])
        mask_path, unit_path = find_unit(fabricmanager.UNIT, params["root"])
        result["unit_path"] = unit_path
        # A package may start its daemon as it installs: no restart over a daemon that runs.
        active = unit_active(systemctl)
        restarting = restarting and not active
    if not unit_path:
        feature.fail_json(msg="%s is not installed: install %s at version %s (the driver's), or set install; "
                          "nothing was changed" % (fabricmanager.UNIT, result["package"], result["driver_version"]),
                          **result)
    result["daemon_version"] = daemon_version(feature, result)
    mismatch = fabricmanager.version_mismatch(result["daemon_version"], result["driver_version"], result["package"])
    if mismatch:
        feature.fail_json(msg=mismatch, **result)

    # The clients an interrupted disruptive change (this one's or the MIG change's) left stopped start first.
    clients = SystemdClients(feature, params["gpu_clients"])
    start_recorded_clients(feature, clients)

    content = fabricmanager.render_dropin(unit_path, params["gpu_clients"])
    dropin, diff = ensure_content(feature, under_root(params["root"], fabricmanager.DROPIN_PATH), content)
    result["diff"] = [diff] if diff else []
    result["dropin"] = {"path": fabricmanager.DROPIN_PATH, "changed": dropin["changed"]}
    if dropin["changed"]:
        # A condition is read at start only: a running daemon needs no restart for it.
        systemctl.daemon_reload()
    result["enabled_changed"] = systemctl.enable(fabricmanager.UNIT)
    if restarting:
        result["service_action"] = "restarted"
        restart(feature, smi, systemctl, clients, result)
    elif not active:
        result["service_action"] = "started"
        systemctl.start(fabricmanager.UNIT)
    result["changed"] = bool(result["installed"]) or dropin["changed"] or result["enabled_changed"] or \
        result["service_action"] != "none"
    if check_mode and result["service_action"] != "none":
        result["verification"] = "skipped in check mode: the daemon would be started first"
    elif check_mode:
        read_fabric_once(result)
    else:
        wait_for_fabric(feature, smi, result)
    return result
