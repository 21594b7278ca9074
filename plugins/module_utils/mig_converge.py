# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Brings GPUs to declared MIG layouts through nvidia-smi: plan every GPU, then apply.

The engine of the nvidia_mig module and of the boot-time MIG script.

Contract::

    result = converge(smi, layouts, force=False, reset=True, check_mode=False,
                      clients=None, root="/", require_applied=False, gpus=None, where=None)

``smi.call(args, allowed_rc=(0,))`` runs ``nvidia-smi *args`` and returns its
stdout, or raises SmiError with the command's text; ``smi.read`` is the same for a
survey read, which a node call may answer with the same read made since the node
last changed (smi_tool); polls use ``call``. ``layouts`` is ``{gpu index:
{"mig_enabled": bool, "mig_devices": {profile: count}}}`` (profiles as mig-parted
names them, see mig_plan). ``clients`` is None (nothing to stop: at boot, before
any GPU client runs) or has ``stop()``, which returns the units it stopped or
raises ClientError (after starting again those it had stopped), ``running()``,
the units ``stop()`` would stop now (check mode asks it), and ``start(units)``,
which returns the units that failed to start, as text. ``root``
is where ``/sys`` is read from. ``gpus`` is the GPU query a caller made just before
(mig_survey.read_gpus); None reads it here. ``where`` is what the user declared
``layouts`` with (the module's option, a role's variable): messages about a GPU
the host lacks or a layout a GPU cannot take start with it (``mig_layouts.0: ...``).

The result is ``{"changed", "applied", "reboot_required", "layouts", "gpus",
"clients_stopped", "warnings"}``: ``layouts`` as given with string keys, ``gpus``
one entry per declared GPU (see the nvidia_mig module's RETURN), ``warnings`` the
notes for the user. Every GPU is planned before any changes. A refusal or a
failure raises MigError, whose ``result`` says what was done up to then; an
SmiError while reading the GPUs before the plan propagates (nothing was changed).
In check mode the result is the one the run would return (see _predict): where
it would leave each GPU, the clients it would stop, the warnings and the failure
``require_applied`` would give; only what nvidia-smi says as it creates
instances (``created``) and the summary's tense are the real run's alone.

A MIG mode change the driver leaves pending is followed, with ``reset``, by
``nvidia-smi -i N -r`` on that GPU alone, and the instances are created in the
same run once the mode applied. Whether the host can reset the GPU (a sysfs
``reset`` file, no ``nvidia_drm`` users) is decided while planning: with
``require_applied`` the run then fails before anything is destroyed; without it
the mode change is still made, for a reboot to apply, and the GPU reports
``reboot_required``. A failed reset is retried once, after RESET_RETRY_DELAY
seconds, unless the reason is permanent (``Not Supported``, or compute processes).

Standard library only. Inside Ansible the relative imports resolve in the
collection's module_utils package. A script outside Ansible loads this file by
path as a package of its own: a module object whose ``__path__`` is this folder,
put in ``sys.modules`` under a name of its choosing, then
``importlib.import_module(name + ".mig_converge")``; the relative imports then
find mig_survey.py, mig_plan.py, nvidia_smi.py, cpulist.py, pci_bus_id.py and
host_options.py beside this file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import signal
import time

from . import nvidia_smi
from .mig_plan import LayoutError, plan
from .mig_survey import describe_processes, layout_name, named, plan_gpu, read_gpus, read_instances, read_offers
from .mig_survey import read_profile_tables

IN_USE = "In use by another client"
NOT_SUPPORTED = "Not Supported"
# Seconds before the one retry of a failed reset: a monitor polling the GPU lets go quickly.
RESET_RETRY_DELAY = 2
# With force, seconds a compute process in the way has after SIGTERM, and then after SIGKILL.
END_GRACE_SECONDS = 10
KILL_GRACE_SECONDS = 5
NOT_A_COMPUTE_PROCESS = ("a client that is not a compute process, such as DCGM (nvidia-dcgm, dcgm-exporter), nvsm or "
                         "nvidia_drm; add its service to gpu_clients or stop it")


class SmiError(Exception):
    """An nvidia-smi call failed; the message names the command and its output."""


class ClientError(Exception):
    """The GPU clients could not be stopped; the message says which and why."""


class MigError(Exception):
    """A refusal or a failure; ``result`` is the result up to that point."""

    def __init__(self, message, result):
        super(MigError, self).__init__(message)
        self.result = result


def plan_text(entry):
    """The plan of one GPU, for --diff."""
    mode = entry["mode_change"] and "-> " + entry["mode_change"] or ("Enabled" if entry["mig_enabled"] else "Disabled")
    lines = ["mode: %s" % mode]
    lines.extend("end pid %s (%s), with force" % (p["pid"], p["name"]) for p in entry["end_processes"])
    lines.extend("keep %s (GPU instance %d at %d)" % (i["profile"], i["id"], i["start"]) for i in entry["keep"])
    lines.extend("destroy %s (GPU instance %d at %d)" % (i["profile"], i["id"], i["start"]) for i in entry["destroy"])
    lines.extend("create %s at %d (%s)" % (c["profile"], c["start"], ", ".join(ci["profile"] for ci in c["compute_instances"]))
                 for c in entry["create"])
    if entry["deferred"]:
        lines.append("instances: planned and checked once MIG mode is on (the GPU lists its profiles only then)")
    if entry["reset"]:
        lines.append("reset GPU %d (nvidia-smi -i %d -r) once its mode change is pending" % (entry["index"], entry["index"]))
    elif entry["reboot_reason"]:
        lines.append("no reset: %s; a reboot applies the mode" % entry["reboot_reason"])
    return "\n".join(lines) + "\n"


def apply_gpu(smi, layout, entry, where=None):
    """Destroy, change the mode, reset, create: one GPU, as planned. Raises SmiError."""
    was_enabled = entry["mig_enabled"]
    if entry["end_processes"]:
        _end_processes(smi, entry)
    _destroy(smi, entry)
    if entry["mode_change"]:
        smi.call(["-i", str(entry["index"]), "-mig", "1" if entry["mode_change"] == "Enabled" else "0"])
        _read_mode(smi, entry)
        # Applied at once (bare metal, nothing holding the GPU): no reset needed.
        entry["reset"] = entry["reset"] and entry["pending"]
    if entry["pending"] and entry["reset"]:
        _reset(smi, entry)
        _read_mode(smi, entry)
    if entry["pending"] or not entry["mig_enabled"]:
        return
    if not was_enabled or entry["reset"]:
        _replan(smi, layout, entry, where)
    _create(smi, entry)


def _read_mode(smi, entry):
    gpu = next(g for g in read_gpus(smi) if int(g["index"]) == entry["index"])
    entry["mig_enabled"] = gpu["mig.mode.current"] == "Enabled"
    entry["pending"] = gpu["mig.mode.current"] != gpu["mig.mode.pending"]


def _replan(smi, layout, entry, where):
    """Once MIG mode applied in this run (at once or by the reset), the instances follow."""
    gpu = next(g for g in read_gpus(smi) if int(g["index"]) == entry["index"])
    tables = read_profile_tables(smi, [gpu])
    instances = read_instances(smi, [gpu])
    try:
        steps = plan(tables[entry["index"]], instances.get(entry["index"], []), layout["mig_devices"],
                     read_offers(smi, instances, {entry["index"]: layout}).get(entry["index"]))
    except LayoutError as error:
        raise SmiError(named(layout_name(where, entry["index"]), "GPU %d: MIG mode is on, but %s" % (entry["index"], error)))
    entry.update(keep=steps["keep"], create=steps["create"])
    entry["destroy"] = steps["destroy"]
    _destroy(smi, entry)


def _end_processes(smi, entry, kill=os.kill):
    """force: SIGTERM the compute processes in the way, SIGKILL those still listed after
    END_GRACE_SECONDS; SmiError naming any that outlives both."""
    left = set(p["pid"] for p in entry["end_processes"])
    for sig, grace in ((signal.SIGTERM, END_GRACE_SECONDS), (signal.SIGKILL, KILL_GRACE_SECONDS)):
        for pid in sorted(left):
            try:
                kill(int(pid), sig)
            except OSError:
                pass  # already gone, or not ours to signal: the listing below decides
        deadline = time.time() + grace
        while left and time.time() < deadline:
            time.sleep(0.2)
            left &= set(p["pid"] for p in _processes_on(smi, entry["index"]))
        if not left:
            return
    raise SmiError("GPU %d: force could not end %s; nothing was changed on it" % (
        entry["index"], ", ".join("pid %s" % pid for pid in sorted(left))))


def _processes_on(smi, index, gpu_instance=None):
    processes = nvidia_smi.parse_query_xml(smi.call(["-q", "-x"]))["gpus"][index]["processes"]
    return [p for p in processes if gpu_instance is None or p["gpu_instance_id"] == gpu_instance]


def _destroy(smi, entry):
    """Destroy the planned instances; where one is held, recreate what this run destroyed."""
    index = str(entry["index"])
    done = []
    for instance in entry["destroy"]:
        cis_gone = False
        try:
            # A GPU instance goes with its compute instances; -dci on one without any answers 6.
            smi.call(["mig", "-i", index, "-gi", str(instance["id"]), "-dci"], allowed_rc=(0, 6))
            cis_gone = True
            smi.call(["mig", "-i", index, "-gi", str(instance["id"]), "-dgi"])
        except SmiError as error:
            cause = _held_cause(smi, entry["index"], instance["id"], str(error)) if IN_USE in str(error) else str(error)
            raise SmiError(cause + _undo(smi, entry, done, instance if cis_gone else None))
        done.append(instance)


def _held_cause(smi, index, gpu_instance, refusal):
    """Who holds a GPU instance whose destroy was refused. A failed read of its processes is
    said with the refusal rather than raised: the undo that follows must run all the same."""
    try:
        busy = _processes_on(smi, index, gpu_instance)
    except SmiError as error:
        return "%s; the compute processes on GPU %d GPU instance %d could not be read: %s" % (
            refusal, index, gpu_instance, error)
    if busy:
        return "compute processes run on GPU %d GPU instance %d: %s" % (index, gpu_instance, describe_processes(busy))
    return "GPU %d GPU instance %d is held by %s" % (index, gpu_instance, NOT_A_COMPUTE_PROCESS)


def _undo(smi, entry, destroyed, emptied):
    """Recreate, at their placements and profiles, the instances this run destroyed on the GPU
    (and the compute instances of one whose GPU instance stayed); the text for the message."""
    index = str(entry["index"])
    entry["create"], entry["recreated"], failures = [], [], []
    for instance in destroyed:
        try:
            made = _created(smi.call(["mig", "-i", index, "-cgi", "%d:%d" % (instance["profile_id"], instance["start"])]), 1)
            _create_cis(smi, index, made[0]["id"], [ci["profile_id"] for ci in instance["compute_instances"]])
            entry["recreated"].append({"profile": instance["profile"], "start": instance["start"], "id": made[0]["id"]})
        except SmiError as error:
            failures.append("%s at %d (%s)" % (instance["profile"], instance["start"], error))
    if emptied is not None and emptied["compute_instances"]:
        try:
            _create_cis(smi, index, emptied["id"], [ci["profile_id"] for ci in emptied["compute_instances"]])
        except SmiError as error:
            failures.append("the compute instances of GPU instance %d (%s)" % (emptied["id"], error))
    text = "; nothing new was created on GPU %s" % index
    if entry["recreated"] or emptied is not None:
        recreated = ["%s at %d (GPU instance %d)" % (r["profile"], r["start"], r["id"]) for r in entry["recreated"]]
        if emptied and emptied["compute_instances"]:
            recreated.append("the compute instances of GPU instance %d" % emptied["id"])
        text += "; recreated at their placements, with new UUIDs: %s" % ", ".join(recreated)
    if failures:
        text += "; could not recreate: " + ", ".join(failures)
    return text


def _created(output, expected):
    """The GPU instances nvidia-smi says it created; SmiError unless all of them were."""
    created = nvidia_smi.parse_mig_command_output(output)
    if created["errors"] or len(created["gpu_instances"]) != expected:
        raise SmiError("; ".join(created["errors"]) or output.strip())
    return created["gpu_instances"]


def _create_cis(smi, index, gpu_instance, profile_ids):
    """Compute instances by profile id on one GPU instance (``-cci``, not ``-C``)."""
    if not profile_ids:
        return []
    output = smi.call(["mig", "-i", index, "-cci", ",".join(str(i) for i in profile_ids), "-gi", str(gpu_instance)])
    created = nvidia_smi.parse_mig_command_output(output)
    if created["errors"] or len(created["compute_instances"]) != len(profile_ids):
        raise SmiError("GPU %s GPU instance %d: creating compute instances %s failed: %s" % (
            index, gpu_instance, profile_ids, "; ".join(created["errors"]) or output.strip()))
    return created["compute_instances"]


def _create(smi, entry):
    """GPU instances at their planned starts; default compute instances with -C, others with -cci."""
    if not entry["create"]:
        return
    index = str(entry["index"])
    spec = ",".join("%d:%d" % (c["profile_id"], c["start"]) for c in entry["create"])
    default_only = all([ci["profile"] for ci in c["compute_instances"]] == [c["profile"]] for c in entry["create"])
    output = smi.call(["mig", "-i", index, "-cgi", spec] + (["-C"] if default_only else []))
    try:
        made = _created(output, len(entry["create"]))
    except SmiError as error:
        raise SmiError("GPU %s: creating %s failed: %s" % (index, spec, error))
    entry["created"] = made
    if default_only:
        return
    unmatched = list(made)
    try:
        for planned in entry["create"]:
            instance = next(m for m in unmatched if m["profile_id"] == planned["profile_id"])
            unmatched.remove(instance)
            instance["compute_instances"] = _create_cis(smi, index, instance["id"],
                                                        [ci["profile_id"] for ci in planned["compute_instances"]])
    except SmiError as error:
        # A GPU instance without its compute instances serves nobody: the new ones go again.
        for instance in made:
            smi.call(["mig", "-i", index, "-gi", str(instance["id"]), "-dci"], allowed_rc=(0, 6))
            smi.call(["mig", "-i", index, "-gi", str(instance["id"]), "-dgi"], allowed_rc=(0, 6))
        entry["created"] = []
        raise SmiError("%s; the GPU instances just created for them were destroyed again" % error)


def _reset(smi, entry):
    """nvidia-smi -r on this GPU alone, retried once unless the cause is permanent."""
    index = entry["index"]
    for attempt in (1, 2):
        try:
            smi.call(["-i", str(index), "-r"])
            return
        except SmiError as error:
            cause, permanent = _reset_cause(smi, index, str(error))
        if permanent or attempt == 2:
            entry["reboot_reason"] = "the reset failed: " + cause
            raise SmiError("GPU %d: the reset failed: %s; its MIG mode change stays pending until a reboot" % (index, cause))
        time.sleep(RESET_RETRY_DELAY)


def _reset_cause(smi, index, text):
    """(why a reset failed, whether trying again cannot help)."""
    busy = _processes_on(smi, index)
    if busy:
        return "compute processes run on it: %s" % describe_processes(busy), True
    if NOT_SUPPORTED in text:
        return "Not Supported: the host or hypervisor does not expose the GPU reset (a GPU passed through to a VM)", True
    if IN_USE in text:
        return ("In use by another client, and no compute process runs on it: a client that is not a CUDA process "
                "holds it (nvidia_drm, DCGM, dcgm-exporter, nvsm or another NVML monitor); add its service to "
                "gpu_clients or stop it"), False
    return text, False


def converge(smi, layouts, force=False, reset=True, check_mode=False, clients=None, root="/", require_applied=False,
             gpus=None, where=None):
    """Plan every declared GPU, then apply; see the module docstring for the contract."""
    result = {"changed": False, "applied": False, "reboot_required": False, "gpus": [], "clients_stopped": [],
              "warnings": [], "layouts": dict((str(index), {"mig_enabled": layout["mig_enabled"],
                                                            "mig_devices": dict(layout["mig_devices"])})
                                              for index, layout in sorted(layouts.items()))}
    gpus = read_gpus(smi) if gpus is None else gpus
    unknown = sorted(set(layouts) - set(int(g["index"]) for g in gpus))
    if unknown:
        raise MigError(named(where, "GPU %s is not on this host (GPUs: %s); nothing was changed" % (
            ", ".join(str(i) for i in unknown), ", ".join(g["index"] for g in gpus))), result)
    errors = _plan_all(smi, gpus, layouts, result, force, reset, root, where)
    blocked = [e for e in result["gpus"] if e["reboot_reason"]]
    if require_applied:
        errors.extend("GPU %d: its MIG mode change needs a reboot: %s" % (e["index"], e["reboot_reason"]) for e in blocked)
    if errors:
        # Last, so that a message about a bad layout starts with the variable's name.
        raise MigError("; ".join(errors) + "; nothing was changed", result)
    result["changed"] = any(entry["changed"] for entry in result["gpus"])
    if check_mode:
        # What the run would do, and where it would leave each GPU, as its result would say it.
        if _disruptive(clients, result):
            result["clients_stopped"] = list(clients.running())
        for entry in result["gpus"]:
            _predict(entry, layouts[entry["index"]]["mig_enabled"])
        _finish(result, applied=True, check_mode=True)
    elif result["changed"]:
        _apply_all(smi, layouts, result, clients, where)
    else:
        _finish(result, applied=True)
    if require_applied and not result["applied"]:
        raise MigError("the declared MIG layout was not reached: " + "; ".join(result["warnings"]), result)
    return result


def _apply_all(smi, layouts, result, clients, where):
    """Each changed GPU in turn, with the GPU clients stopped where anything disruptive happens."""
    stopped = _stop_clients(clients, result)
    try:
        for entry in result["gpus"]:
            if entry["changed"]:
                apply_gpu(smi, layouts[entry["index"]], entry, where)
    except (SmiError, MigError) as error:
        again = _start_clients(clients, stopped)
        _finish(result, applied=False)
        raise MigError("%s%s" % (error, again and "; could not start again: " + again), result)
    again = _start_clients(clients, stopped)
    _finish(result, applied=True)
    if again:
        raise MigError("the MIG changes are made, but these GPU clients did not start again: " + again, result)


def _plan_all(smi, gpus, layouts, result, force, reset, root, where):
    tables = read_profile_tables(smi, gpus)
    instances = read_instances(smi, gpus)
    offers = read_offers(smi, instances, layouts)
    processes = nvidia_smi.parse_query_xml(smi.call(["-q", "-x"]))["gpus"]
    errors = []
    for gpu in gpus:
        index = int(gpu["index"])
        if index in layouts:
            entry, gpu_errors = plan_gpu(gpu, layouts[index], tables, instances, offers,
                                         processes[index]["processes"], force, reset, root, where)
            result["gpus"].append(entry)
            errors.extend(gpu_errors)
    return errors


def _predict(entry, mig_enabled):
    """Check mode: the GPU's mode as apply_gpu would leave it. Check mode once kept the mode the GPU had and
    called nothing pending, so it said no reboot was needed where the run then said one was, and called a
    layout not applied that the run then found in place. The driver holds a mode change pending until the
    GPU is reset (as a GPU that something holds does): a planned reset applies it, and the instances follow
    in the same run; without one it stays pending. A driver that applies the change at once leaves nothing
    pending, which only the real run finds out."""
    if entry["mig_enabled"] == mig_enabled:
        return
    if entry["reset"]:
        entry.update(pending=False, mig_enabled=mig_enabled)
    else:
        entry["pending"] = True


def _finish(result, applied, check_mode=False):
    """Per-GPU and top-level flags; never applied while anything is pending. In check mode, of the GPUs as
    _predict left them."""
    for entry in result["gpus"]:
        if not entry["pending"]:
            entry.update(reset_required=False, reboot_required=False, reboot_reason=None)
        else:
            entry["reboot_required"] = bool(entry["reboot_reason"])
            entry["reset_required"] = not entry["reboot_required"]
            how = entry["reboot_reason"] and "needs a reboot: " + entry["reboot_reason"] or "waits for a GPU reset or a reboot"
            note = "GPU %d: the MIG mode change %s; its instances follow once it applies" % (entry["index"], how)
            if note not in result["warnings"]:
                result["warnings"].append(note)
    result["reboot_required"] = any(e["reboot_required"] for e in result["gpus"])
    result["applied"] = applied and not any(e["pending"] or e["reboot_required"] for e in result["gpus"])
    for entry in result["gpus"]:
        entry["summary"] = _summary(entry, result["layouts"][str(entry["index"])], check_mode, result["applied"])


def _summary(entry, layout, check_mode, applied):
    """One line for people: the declared layout, and where the GPU stands."""
    devices = ", ".join("%s x%d" % (name, count) for name, count in sorted(layout["mig_devices"].items()) if count)
    declared = "MIG on, %s" % (devices or "no instances") if layout["mig_enabled"] else "MIG off"
    if entry["pending"] or entry["reboot_required"]:
        status = "waits for a reboot: %s" % entry["reboot_reason"] if entry["reboot_required"] else "waits for a reset"
    elif check_mode:
        status = "would change" if entry["changed"] else "in place"
    else:
        status = "in place" if applied or not entry["changed"] else "not reached"
    return "%s; %s" % (declared, status)


def _disruptive(clients, result):
    """Whether the GPU clients are stopped around the changes: a mode change, a destroy or a reset."""
    return clients is not None and any(e["mode_change"] or e["destroy"] or e["reset"] for e in result["gpus"])


def _stop_clients(clients, result):
    if not _disruptive(clients, result):
        return []
    try:
        stopped = clients.stop()
    except ClientError as error:
        raise MigError("nothing was changed: %s" % error, result)
    result["clients_stopped"] = list(stopped)
    return stopped


def _start_clients(clients, stopped):
    """Start again exactly the stopped clients; their failures as text, or ''."""
    return ", ".join(clients.start(stopped)) if clients is not None and stopped else ""
