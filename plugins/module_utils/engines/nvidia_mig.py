# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvidia_mig engine: MIG layouts: each declared GPU's mode and instances, with the GPU clients stopped
around a change.

converge(spec, host, check_mode) -> result, for the gpuops.hardening.nvidia_mig module and the node call.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec
from ansible_collections.gpuops.hardening.plugins.module_utils.mig_converge import ClientError, MigError, SmiError
from ansible_collections.gpuops.hardening.plugins.module_utils.mig_converge import converge as converge_layouts
from ansible_collections.gpuops.hardening.plugins.module_utils.mig_converge import plan_text
from ansible_collections.gpuops.hardening.plugins.module_utils.mig_parted import MigPartedError, check_layouts, desired_layouts, load_config
from ansible_collections.gpuops.hardening.plugins.module_utils.mig_survey import read_gpus
from ansible_collections.gpuops.hardening.plugins.module_utils.smi_tool import NvidiaSmi, NvidiaSmiFailed
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import Systemctl
from ansible_collections.gpuops.hardening.plugins.module_utils.unit_record import MIG_CLIENTS_STOPPED, RecordError, UnitRecord

# mig-parted's default GPU clients: they keep GPUs open, so a mode change or reset cannot proceed under them.
GPU_CLIENTS = ("nvsm.service", "nvidia-dcgm.service", "dcgm-exporter.service", "kubelet.service")
KEEP_RUNNING = ("nvidia-persistenced.service", "nvidia-fabricmanager.service")


class Smi(NvidiaSmi):
    """The shared nvidia-smi wrapper (smi_tool), its failures raised as mig_converge's SmiError."""

    def call(self, args, allowed_rc=(0,)):
        try:
            return super(Smi, self).call(args, allowed_rc)
        except NvidiaSmiFailed as error:
            raise SmiError(str(error))

    def read(self, args, allowed_rc=(0,)):
        try:
            return super(Smi, self).read(args, allowed_rc)
        except NvidiaSmiFailed as error:
            raise SmiError(str(error))


# (LoadState, ActiveState) of a GPU client that must be stopped around a disruptive change.
RUNNING_STATES = [("loaded", state) for state in ("active", "activating", "reloading")]


class SystemdClients(object):
    """The GPU client services that run: stopped before the change, exactly those started after.
    nvidia-persistenced and nvidia-fabricmanager stay: nvidia-smi coordinates resets with them."""

    def __init__(self, feature, units):
        self.feature = feature
        self.systemctl = Systemctl(feature, timeout=feature.params["timeout"])
        self.units = [unit for unit in units if unit not in KEEP_RUNNING]
        self.record = UnitRecord(feature, MIG_CLIENTS_STOPPED)
        # Check mode: the recorded units a real run would have started first (start_recorded).
        self.would_start = []

    def running(self):
        """The units that run, which stop() stops; in check mode with those the run would have started."""
        if not self.units:
            return []
        shown_units = zip(self.units, self.systemctl.show(self.units, ["LoadState", "ActiveState"]))
        return [unit for unit, shown in shown_units
                if (shown.get("LoadState"), shown.get("ActiveState")) in RUNNING_STATES or unit in self.would_start]

    def stop(self):
        running = self.running()
        if not running:
            return []
        # Durable before the first stop: if this process dies before start(), the next run starts them.
        self.record.write(running)
        stopped = []
        for unit in running:
            error = self.systemctl.try_verb("stop", unit)
            if error:
                failed = self.start(stopped)
                again = "; could not start again: " + ", ".join(failed) if failed else ""
                raise ClientError("could not stop %s: %s%s" % (unit, error, again))
            stopped.append(unit)
        return stopped

    def start(self, units):
        """Start the units in reverse order; returns those that failed, with their error. Once all
        run, the record of stopped clients goes; otherwise it stays for the next run to try again."""
        failed = []
        for unit in reversed(units):
            error = self.systemctl.try_verb("start", unit)
            if error:
                failed.append("%s (%s)" % (unit, error))
        if not failed:
            self.record.remove()
        return failed

    def start_recorded(self):
        """(units, failures): the clients an interrupted earlier run left stopped, started now
        (in check mode only listed)."""
        units = self.record.units()
        if not units or self.feature.check_mode:
            self.would_start = list(units)
            return units, []
        return units, self.start(units)


def declared_layouts(feature, gpus):
    """{gpu index: {"mig_enabled", "mig_devices"}} from the options; fails on any bad entry."""
    params = feature.params
    if params["mig_parted_config"] is not None:
        try:
            entries = load_config(params["mig_parted_config"], params["mig_parted_name"])
        except MigPartedError as error:
            feature.fail_json(msg="mig_parted_config: %s; nothing was changed" % error)
        return desired_layouts(entries, [{"index": int(g["index"]), "pci_device_id": g["pci.device_id"]} for g in gpus])
    try:
        return check_layouts(params["layouts"] or {}, layouts_name(params))
    except MigPartedError as error:
        feature.fail_json(msg="%s; nothing was changed" % error)


def layouts_name(params):
    """What messages about O(layouts) call it: the role's variable, else the option; None for a mig-parted
    config, whose entries apply by device filter, not by GPU index."""
    if params["layouts"] is None:
        return None
    return params["layouts_variable"] or "layouts"


NAME = 'nvidia_mig'
ARGUMENT_SPEC = host_argument_spec()
ARGUMENT_SPEC.update(
    layouts=dict(type="dict"),
    layouts_variable=dict(type="str"),
    mig_parted_config=dict(type="dict"),
    mig_parted_name=dict(type="str"),
    force=dict(type="bool", default=False),
    reset=dict(type="bool", default=True),
    require_applied=dict(type="bool", default=False),
    gpu_clients=dict(type="list", elements="str", default=list(GPU_CLIENTS)),
)
SPEC_RULES = dict(mutually_exclusive=[("layouts", "mig_parted_config")], required_one_of=[("layouts", "mig_parted_config")],
                  required_together=[("mig_parted_config", "mig_parted_name")])


def converge(spec, host, check_mode):
    """Converge this feature on the node as spec says (check_mode: only say what would change); returns the result."""
    feature = host.feature(NAME, spec, check_mode)
    params = feature.params
    clients = SystemdClients(feature, params["gpu_clients"])
    restarted = start_recorded_clients(feature, clients)
    smi = Smi(feature)
    if not smi.path:
        feature.fail_json(msg="nvidia-smi not found: this host has no NVIDIA driver", changed=bool(restarted), gpus=[],
                          clients_restarted=restarted)
    try:
        gpus = read_gpus(smi)
        layouts = declared_layouts(feature, gpus)
        result = converge_layouts(smi, layouts, force=params["force"], reset=params["reset"], check_mode=feature.check_mode,
                                  clients=clients, root=params["root"], require_applied=params["require_applied"], gpus=gpus,
                                  where=layouts_name(params))
    except SmiError as error:
        feature.fail_json(msg="nothing was changed: %s" % error, changed=bool(restarted), gpus=[], clients_restarted=restarted)
    except MigError as error:
        _report(feature, error.result, clients, restarted)
        feature.fail_json(msg=str(error), **error.result)
    _report(feature, result, clients, restarted)
    return result


def handlers(spec, result):
    """What the play does after the call: stop, asking for a reboot, while a MIG mode change waits for one (the
    boot service, converged after this feature, then creates the instances at boot)."""
    del spec  # every layout is judged the same way
    waiting = [entry for entry in result.get("gpus") or [] if entry.get("reboot_required")]
    if not waiting:
        return []
    return [{"action": "reboot", "msg": "the MIG layout is not reached yet: %s; reboot the node: the MIG mode applies "
             "at boot and gpuops-mig.service then creates the instances" % "; ".join(
                 "GPU %s: %s" % (entry["index"], entry["reboot_reason"]) for entry in waiting)}]


def start_recorded_clients(feature, clients):
    """Every run first starts the GPU clients an interrupted run left stopped; the units it started."""
    try:
        units, failed = clients.start_recorded()
    except RecordError as error:
        feature.fail_json(msg="%s; nothing was changed" % error, changed=False, gpus=[])
    if failed:
        feature.fail_json(msg="the GPU clients that an interrupted earlier run stopped (recorded in %s) did not start "
                          "again: %s; see systemctl status for each, then run again, which retries them" % (
                              MIG_CLIENTS_STOPPED, ", ".join(failed)), changed=True, gpus=[], clients_restarted=units)
    if units:
        feature.warn("an earlier run was interrupted while the GPU clients were stopped; %s %s, recorded in %s" % (
            "would start" if feature.check_mode else "started", ", ".join(units), MIG_CLIENTS_STOPPED))
    return units


def _report(feature, result, clients, restarted):
    """Warnings to Ansible, the clients this call would stop, and each changed GPU's plan as --diff."""
    result["gpu_clients"] = list(clients.units)
    result["clients_restarted"] = list(restarted)
    result["changed"] = result["changed"] or bool(restarted)
    for warning in result.pop("warnings", []):
        feature.warn(warning)
    if feature._diff:
        result["diff"] = [{"before_header": "GPU %d" % e["index"], "after_header": "GPU %d" % e["index"],
                           "before": "", "after": plan_text(e)} for e in result["gpus"] if e["changed"]]
