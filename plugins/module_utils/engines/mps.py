# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mps engine: CUDA MPS control daemons per GPU set, their group, folders and units, and each GPU's compute
mode.

converge(spec, host, check_mode) -> result, for the gpuops.hardening.mps module and the node call.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import stat

from ansible_collections.gpuops.hardening.plugins.module_utils import accounts, mps
from ansible_collections.gpuops.hardening.plugins.module_utils.commands import CommandTimeout, run
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec, read_text, under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import ensure_content, removal_diff, remove_path, write_error
from ansible_collections.gpuops.hardening.plugins.module_utils.smi_tool import NvidiaSmi, NvidiaSmiFailed
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import Systemctl, find_unit, is_masked
from ansible_collections.gpuops.hardening.plugins.module_utils.unit_record import MPS_RESTART_PENDING, RecordError, UnitRecord


class Converger(object):
    """One call's state: the commands, the diffs and the result."""

    def __init__(self, feature):
        self.feature = feature
        self.params = feature.params
        self.root = feature.params["root"]
        self.diffs = []
        self.changed = False
        self.result = dict(daemons=[], removed=[], compute_modes_restored={}, group_created=False, users_added=[],
                           skipped_reason=None)
        self.smi_tool = NvidiaSmi(feature)
        self.nvidia_smi = self.smi_tool.path
        self.systemctl = Systemctl(feature, timeout=feature.params["timeout"])
        # Read before this call rewrites either record: its own folders are those of earlier runs.
        self.owned = self.owned_folders()
        # Check mode reads the node as the run would have left it: without the paths the run removes, and with
        # the compute modes the daemons it stops set back as they stop ({GPU uuid: mode}). Reading the node as
        # it was, check mode said it would set back modes the units' ExecStopPost sets, and missed the removal
        # of the emptied pipe folder and the new record of the module's folders.
        self.removed = set()
        self.modes_after_stop = {}

    def host(self, path):
        return under_root(self.root, path)

    def fail(self, msg):
        self.feature.fail_json(msg=msg, changed=self.changed, **self.result)

    def command(self, argv, data=None, environ=None):
        try:
            return run(self.feature, argv, timeout=self.params["timeout"], data=data, environ=environ)
        except CommandTimeout as error:
            self.fail("%s; the NVIDIA driver or MPS daemon is not answering" % error)

    def smi(self, args, survey=False):
        """nvidia-smi ARGS run now; survey: the node's first look, which a read since the last change may answer."""
        try:
            return self.smi_tool.read(args) if survey else self.smi_tool.call(args)
        except NvidiaSmiFailed as error:
            return self.fail(str(error))

    # Files and directories ------------------------------------------------

    def write(self, path, content, mode=0o644):
        result, diff = ensure_content(self.feature, self.host(path), content, mode=mode)
        if diff:
            diff["before_header"] = diff["before_header"].replace(self.host(path), path)
            diff["after_header"] = path
            self.diffs.append(diff)
        self.changed |= result["changed"]
        return result["changed"]

    def remove(self, path):
        host_path = self.host(path)
        if not self.exists(host_path):
            return False
        self.diffs.append(removal_diff(host_path, path))
        self.removed.add(host_path)
        if not self.feature.check_mode:
            remove_path(self.feature, host_path)
        self.changed = True
        return True

    def exists(self, host_path):
        """Whether host_path is there after this call's removals so far (in check mode: would be)."""
        return os.path.lexists(host_path) and not any(
            host_path == gone or host_path.startswith(gone + "/") for gone in self.removed)

    def directory(self, path, mode, gid, group="0"):
        """path exists as a directory owned by root:gid with mode; reports the change. The diff names the
        folder's group as group: check mode before the group exists (gid None) knows its name, not its gid,
        and once said 0:0 for a folder the run then gave the new group; the real run says it alike."""
        host_path = self.host(path)
        try:
            info = os.stat(host_path)
        except OSError:
            info = None
        if info is not None and not stat.S_ISDIR(info.st_mode):
            self.fail("%s exists and is not a directory" % path)
        current = (stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid) if info else None
        # gid None: the role creates the group first, so the folder's group is bound to change.
        if gid is not None and current == (mode, 0, gid):
            return False
        self.diffs.append({"before_header": path + "/", "after_header": path + "/",
                           "before": "absent\n" if info is None else "mode %04o owner %d:%d\n" % current,
                           "after": "mode %04o owner 0:%s\n" % (mode, group)})
        self.changed = True
        if not self.feature.check_mode:
            try:
                if info is None:
                    os.makedirs(host_path, 0o755)
                os.chown(host_path, 0, 0 if gid is None else gid)
                os.chmod(host_path, mode)
            except (IOError, OSError) as error:
                self.fail(write_error(path, error, "the folder is as it was or exists with its old mode"))
        return True

    def owned_folders(self):
        """The folders this module created: its record of them, and its tmpfiles.d entry (the only record
        earlier versions kept)."""
        recorded = mps.load_folders_record(read_text(self.host(mps.FOLDERS_RECORD_PATH)))
        listed = mps.tmpfiles_folders(read_text(self.host(mps.TMPFILES_PATH)))
        return set(mps.normal_folder(path) for path in recorded + listed)

    def created(self, path):
        """Whether path is a folder this module created; a system folder never is, whatever a record says."""
        return not mps.is_system_folder(path) and mps.normal_folder(path) in self.owned

    def why_not_ours(self, path):
        """Why this module may not take path as a pipe or log folder, or None."""
        if mps.is_system_folder(path):
            return "is a system folder"
        if os.path.lexists(self.host(path)) and not self.created(path):
            return "exists and this module did not create it"
        return None

    def refuse_foreign_folders(self, names):
        """Before any change: the pipe and log folders, and each daemon's below them, are ones this module
        creates or created, as it sets their mode and owner and its tmpfiles.d entry does so at every boot."""
        problems = []
        for option, kind in (("pipe_directory", "pipe"), ("log_directory", "log")):
            folders = [(self.params[option], "")]
            for name in names:
                below = mps.paths(name, self.params["pipe_directory"], self.params["log_directory"])[option]
                folders.append((below, " (the %s directory of MPS daemon %s)" % (kind, name)))
            for path, what in folders:
                why = self.why_not_ours(path)
                if why:
                    problems.append("%s (mps_%s in the role): %s%s %s" % (option, option, path, what, why))
                    break  # The daemons' folders below a refused one add nothing.
        if problems:
            self.fail("%s; nothing was changed. Allowed: %s" % ("; ".join(problems), mps.FOLDERS_ALLOWED))

    def still_there(self, path):
        return os.path.isdir(self.host(path)) and self.exists(self.host(path))

    def record_folders(self, folders, leaving=()):
        """Record the folders this module created and still has, with folders, before it creates them:
        a run killed after a mkdir leaves no folder of its own unrecorded."""
        kept = [path for path in self.owned if self.created(path) and path not in leaving and self.still_there(path)]
        record = set(kept) | set(mps.normal_folder(path) for path in folders)
        if record:
            self.write(mps.FOLDERS_RECORD_PATH, mps.render_folders_record(record))
        else:
            self.remove(mps.FOLDERS_RECORD_PATH)

    def remove_folder(self, path):
        """Remove a folder this module created; any other stays."""
        if self.created(path):
            self.remove(path)

    def check_traversable(self, path):
        """Non-root clients must get through every existing folder above path."""
        parent = os.path.dirname(path.rstrip("/"))
        while parent and parent != "/":
            try:
                info = os.stat(self.host(parent))
            except OSError:
                parent = os.path.dirname(parent)
                continue
            if not info.st_mode & stat.S_IXOTH:
                self.fail("%s (mode %04o) is not traversable by other users, so MPS clients could not reach %s; "
                          "give it o+x or choose another folder" % (parent, stat.S_IMODE(info.st_mode), path))
            parent = os.path.dirname(parent)

    # Units ----------------------------------------------------------------

    def installed_daemons(self):
        try:
            names = os.listdir(self.host(mps.UNIT_DIR))
        except OSError:
            return []
        # A mask at a daemon's name is an operator's, not an installed daemon.
        return sorted(name for name in (mps.daemon_name(unit) for unit in names)
                      if name and not is_masked(self.host("%s/%s" % (mps.UNIT_DIR, mps.unit_name(name)))))

    def is_active(self, unit):
        return self.systemctl.show([unit], ["ActiveState"])[0].get("ActiveState") in ("active", "activating", "reloading")

    def refuse_masked(self, names):
        """A mask is an operator's word that a unit must not run; writing the unit over it would lift it."""
        masks = [mask for mask in (find_unit(mps.unit_name(name), self.root)[0] for name in names) if mask]
        if masks:
            self.fail("%s masked (%s), nothing was changed. Unmask %s (systemctl unmask), or leave %s out of the GPU "
                      "sets (mps_gpu_sets in the role)" % (
                          "MPS daemon unit is" if len(masks) == 1 else "MPS daemon units are",
                          ", ".join("%s -> /dev/null" % mask for mask in masks),
                          "it" if len(masks) == 1 else "them",
                          ", ".join(mps.daemon_name(os.path.basename(mask)) for mask in masks)))

    def refuse_if_busy(self, name, uuids, verb):
        """A restart or stop ends the clients' server: refuse while clients run, unless forced."""
        if self.params["force"] or not self.nvidia_smi:
            return
        clients = [app for app in mps.parse_apps(self.smi(mps.QUERY_APPS))
                   if app["gpu_uuid"] in uuids and not mps.is_server_process(app["name"])]
        if clients:
            self.fail("MPS daemon %s must %s, but client processes run on its GPUs (%s); nothing was %s. Stop them, "
                      "or set force (mps_force_restart in the role)" % (
                          name, verb, ", ".join("pid %d (%s) on %s" % (c["pid"], c["name"], c["gpu_uuid"]) for c in clients),
                          "restarted" if verb == "restart" else "stopped"))

    def refuse_stopping_busy(self, names):
        """Before the first change: no installed daemon about to stop may have clients."""
        for name in names:
            unit = mps.unit_name(name)
            if self.is_active(unit):
                environment = mps.unit_environment(read_text(self.host("%s/%s" % (mps.UNIT_DIR, unit))))
                self.refuse_if_busy(name, environment.get("CUDA_VISIBLE_DEVICES", "").split(","), "stop")

    def uninstall(self, name):
        """Stop, disable and remove one installed daemon, wherever its unit put its pipe."""
        unit = mps.unit_name(name)
        unit_path = "%s/%s" % (mps.UNIT_DIR, unit)
        unit_text = read_text(self.host(unit_path))
        environment = mps.unit_environment(unit_text)
        if self.is_active(unit):
            self.changed = True
            self.systemctl.stop(unit)
            if self.feature.check_mode:
                self.modes_after_stop.update(mps.modes_set_at_stop(unit_text))
        self.changed |= self.systemctl.disable(unit)
        daemon_paths = mps.paths(name, self.params["pipe_directory"], self.params["log_directory"])
        for path in (unit_path, daemon_paths["commands"], daemon_paths["env"]):
            self.remove(path)
        self.remove_folder(environment.get("CUDA_MPS_PIPE_DIRECTORY", daemon_paths["pipe_directory"]))
        self.result["removed"].append(name)


def restore_modes(converger, record, keep):
    """Set back every recorded GPU not in keep to its recorded mode; returns the record left."""
    left = dict((uuid, mode) for uuid, mode in record.items() if uuid in keep)
    if len(left) == len(record) or not converger.nvidia_smi:
        return left
    current = dict((gpu["uuid"], gpu["compute_mode"]) for gpu in mps.parse_gpus(converger.smi(mps.QUERY_GPUS)))
    current.update((uuid, mode) for uuid, mode in converger.modes_after_stop.items() if uuid in current)
    for uuid, mode in sorted(record.items()):
        if uuid in keep:
            continue
        if uuid in current and current[uuid] != mode:
            converger.result["compute_modes_restored"][uuid] = mode
            converger.changed = True
            if not converger.feature.check_mode:
                converger.smi(["-i", uuid, "-c", mps.COMPUTE_MODE_ARGS.get(mode, "DEFAULT")])
    return left


def save_record(converger, record):
    if record:
        converger.write(mps.MODES_RECORD_PATH, mps.render_modes_record(record))
    else:
        converger.remove(mps.MODES_RECORD_PATH)


def converge_absent(converger):
    installed = converger.installed_daemons()
    converger.refuse_stopping_busy(installed)
    for name in installed:
        converger.uninstall(name)
    for path in (mps.TMPFILES_PATH, mps.PROFILE_PATH):
        converger.remove(path)
    record = mps.load_modes_record(read_text(converger.host(mps.MODES_RECORD_PATH)))
    save_record(converger, restore_modes(converger, record, keep=()))
    pipe_root = converger.params["pipe_directory"]
    host_root = converger.host(pipe_root)
    if os.path.isdir(host_root) and not [name for name in os.listdir(host_root) if converger.exists(os.path.join(host_root, name))]:
        converger.remove_folder(pipe_root)
    # The log folders stay, and stay the module's own for a later state=present.
    converger.record_folders([])
    if converger.changed:
        converger.systemctl.daemon_reload()


def plan(converger):
    """Checks every input against the host before any change: (sets, the GPUs, multiuser by set)."""
    params = converger.params
    gpus = mps.parse_gpus(converger.smi(mps.QUERY_GPUS, survey=True))
    sets, errors = mps.resolve_sets(params["gpu_sets"], gpus)
    if not params["allow_mig"]:
        errors.extend(mps.mig_refusals(sets))
    if errors:
        converger.fail("nothing was changed: " + "; ".join(errors))
    missing = accounts.missing_accounts(params["client_users"])
    if missing:
        converger.fail("client_users (mps_client_users in the role): %s: no such account on this host; nothing was changed. "
                       "Allowed: existing accounts; create them first, or leave them out" % ", ".join(missing))
    for folder in (params["pipe_directory"], params["log_directory"]):
        converger.check_traversable(folder)
    converger.refuse_foreign_folders(sorted(sets))
    multiuser = {}
    for name, members in sets.items():
        multiuser[name] = params["multiuser_server"] and mps.supports_multiuser(members)
        if params["multiuser_server"] and not multiuser[name]:
            converger.feature.warn("MPS daemon %s runs without -multiuser-server: GPU %s is older than Volta" % (
                name, ", ".join(mps.describe(g) for g in members if not mps.supports_multiuser([g]))))
    return sets, gpus, multiuser


def converge_group(converger):
    """The group exists, as a system group, with every client user in it; returns its gid (None in check
    mode before the group exists: the folders' group is then bound to change)."""
    group, users = converger.params["group"], converger.params["client_users"]
    entry = accounts.read_group(group)
    adding = accounts.members_to_add(entry, users)
    if entry is not None and not adding:
        return entry.gr_gid
    members = sorted(entry.gr_mem) if entry is not None else []
    converger.diffs.append({"before_header": "group %s" % group, "after_header": "group %s" % group,
                            "before": "absent\n" if entry is None else "members: %s\n" % ", ".join(members),
                            "after": "members: %s\n" % ", ".join(sorted(members + adding))})
    converger.changed = True
    converger.result["group_created"] = entry is None
    converger.result["users_added"] = adding
    if converger.feature.check_mode:
        return None if entry is None else entry.gr_gid
    changer = accounts.Accounts(converger.feature, converger.params["timeout"])
    error = changer.create_group(group) if entry is None else None
    for user in adding:
        if error:
            break
        error = changer.add_member(user, group)
    if error:
        converger.fail("%s; the daemons and their files were not changed" % error)
    return accounts.group_id(group)


def render_daemon(converger, name, members, multiuser, record):
    """(paths, {path: content}) of one daemon; a change to the unit or the commands needs a restart."""
    params = converger.params
    daemon_paths = mps.paths(name, params["pipe_directory"], params["log_directory"])
    binaries = {"nvidia-smi": converger.nvidia_smi, "sh": converger.feature.get_bin_path("sh") or "/bin/sh",
                "nvidia-cuda-mps-control": converger.feature.get_bin_path("nvidia-cuda-mps-control"),
                "systemd-tmpfiles": converger.feature.get_bin_path("systemd-tmpfiles")}
    exclusive = [(gpu["uuid"], record[gpu["uuid"]]) for gpu in members] if params["exclusive_process"] else []
    return daemon_paths, {
        daemon_paths["unit"]: mps.render_unit(name, members, daemon_paths, binaries, exclusive, multiuser),
        daemon_paths["commands"]: mps.render_commands(params["active_thread_percentage"], params["pinned_mem_limit"],
                                                      len(members)),
        daemon_paths["env"]: mps.render_env(daemon_paths),
    }


def needs_restart(converger, daemon_paths, files):
    unit = daemon_paths["unit"]
    return mps.restart_relevant(read_text(converger.host(unit))) != mps.restart_relevant(files[unit]) or \
        read_text(converger.host(daemon_paths["commands"])) != files[daemon_paths["commands"]]


def start_daemons(converger, sets, pending_restart):
    """Enable and start each daemon; restart those whose unit or settings changed (converge_present
    refused a restart under running clients before the first change)."""
    actions = {}
    for name in sorted(sets):
        unit = mps.unit_name(name)
        converger.changed |= converger.systemctl.enable(unit)
        active = converger.is_active(unit)
        if active and name in pending_restart:
            actions[name] = "restarted"
            converger.systemctl.start(unit, restart=True)
        elif not active:
            actions[name] = "started"
            converger.systemctl.start(unit)
        else:
            actions[name] = "none"
        converger.changed |= actions[name] != "none"
    return actions


def read_daemon(converger, name, members, daemon_paths):
    """(what the daemon says through its pipe, the differences from what it was told)."""
    params = converger.params
    control = converger.feature.get_bin_path("nvidia-cuda-mps-control")
    environ = {"CUDA_MPS_PIPE_DIRECTORY": daemon_paths["pipe_directory"], "CUDA_MPS_LOG_DIRECTORY": daemon_paths["log_directory"]}

    def ask(command):
        rc, out, err = converger.command([control], data=command, environ=environ)
        if rc != 0:
            converger.fail("MPS daemon %s does not answer %s through %s: %s" % (
                name, command, daemon_paths["pipe_directory"], (err or out).strip()))
        return out

    said = {"server_list": mps.parse_server_list(ask("get_server_list")),
            "active_thread_percentage": mps.parse_percentage(ask("get_default_active_thread_percentage")),
            "pinned_mem_limits": {}}
    differences = []
    if said["active_thread_percentage"] != float(params["active_thread_percentage"]):
        differences.append("an active thread percentage of %s, not %s" % (
            said["active_thread_percentage"], params["active_thread_percentage"]))
    for device in range(len(members) if params["pinned_mem_limit"] else 0):
        answer = ask("get_default_device_pinned_mem_limit %d" % device).strip()
        said["pinned_mem_limits"][str(device)] = answer
        if mps.size_mib(answer) != mps.size_mib(params["pinned_mem_limit"]):
            differences.append("a pinned memory limit of %r on device %d, not %s" % (answer, device, params["pinned_mem_limit"]))
    return said, differences


def check_daemon(converger, name, members, daemon_paths, action, modes):
    """Verify a daemon through its pipe and its GPUs' compute modes ({uuid: mode}); put back settings
    someone changed."""
    params = converger.params
    if converger.feature.check_mode and action != "none":
        return None
    said, differences = read_daemon(converger, name, members, daemon_paths)
    if differences and action == "none":
        converger.changed = True
        if converger.feature.check_mode:
            return said
        # Settings sent through the pipe since the start: send ours again.
        rc, out, err = converger.command([converger.feature.get_bin_path("nvidia-cuda-mps-control")],
                                         data=read_text(converger.host(daemon_paths["commands"])),
                                         environ={"CUDA_MPS_PIPE_DIRECTORY": daemon_paths["pipe_directory"]})
        if rc != 0:
            converger.fail("MPS daemon %s did not take its settings again: %s" % (name, (err or out).strip()))
        said, differences = read_daemon(converger, name, members, daemon_paths)
    if differences:
        converger.fail("MPS daemon %s reports %s" % (name, "; ".join(differences)))
    if params["exclusive_process"]:
        for gpu in members:
            if modes.get(gpu["uuid"]) != mps.EXCLUSIVE:
                # Someone set it back while the daemon ran.
                converger.changed = True
                if not converger.feature.check_mode:
                    converger.smi(["-i", gpu["uuid"], "-c", mps.COMPUTE_MODE_ARGS[mps.EXCLUSIVE]])
    return said


def converge_present(converger):
    params = converger.params
    sets, gpus, multiuser = plan(converger)
    by_uuid = dict((gpu["uuid"], gpu) for gpu in gpus)
    record = mps.load_modes_record(read_text(converger.host(mps.MODES_RECORD_PATH)))
    managed = set(gpu["uuid"] for members in sets.values() for gpu in members) if params["exclusive_process"] else set()
    for uuid in sorted(managed - set(record)):
        record[uuid] = by_uuid[uuid]["compute_mode"]
    rendered = dict((name, render_daemon(converger, name, sets[name], multiuser[name], record)) for name in sets)
    pending_restart = set(name for name, (daemon_paths, files) in rendered.items() if needs_restart(converger, daemon_paths, files))
    # Restarts a killed earlier run owed: its files were written, its daemons not restarted on them.
    owed = UnitRecord(converger.feature, MPS_RESTART_PENDING)
    try:
        pending_restart |= set(owed.units()) & set(sets)
    except RecordError as error:
        converger.fail("%s; nothing was changed" % error)

    # Every refusal comes before the first change.
    converger.refuse_masked(sorted(sets))
    stale = [name for name in converger.installed_daemons() if name not in sets]
    for name in sorted(pending_restart):
        if converger.is_active(mps.unit_name(name)):
            converger.refuse_if_busy(name, [gpu["uuid"] for gpu in sets[name]], "restart")
    converger.refuse_stopping_busy(stale)
    gid = converge_group(converger)
    if pending_restart:
        owed.write(sorted(pending_restart))
    for name in stale:
        converger.uninstall(name)

    # A daemon whose pipe moves leaves its old pipe directory once it runs on the new one.
    moved_pipes = []
    for name in sorted(sets):
        installed = mps.unit_environment(read_text(converger.host(rendered[name][0]["unit"]))).get("CUDA_MPS_PIPE_DIRECTORY")
        if installed and installed != rendered[name][0]["pipe_directory"]:
            moved_pipes.append(installed)

    save_record(converger, restore_modes(converger, record, keep=managed))
    folders = [params["pipe_directory"], params["log_directory"]] + [
        rendered[name][0][key] for name in sorted(sets) for key in ("pipe_directory", "log_directory")]
    converger.record_folders(folders, leaving=set(mps.normal_folder(path) for path in moved_pipes))
    mode = int(params["directory_mode"], 8)
    directories = []
    for folder in (params["pipe_directory"], params["log_directory"]):
        converger.directory(folder, 0o755, 0)
        directories.append((folder, 0o755, "root", "root"))
    daemon_paths = {}
    for name in sorted(sets):
        daemon_paths[name], files = rendered[name]
        for path in sorted(files):
            converger.write(path, files[path])
        for key in ("pipe_directory", "log_directory"):
            converger.directory(daemon_paths[name][key], mode, gid, params["group"])
            directories.append((daemon_paths[name][key], mode, "root", params["group"]))
    converger.write(mps.TMPFILES_PATH, mps.render_tmpfiles(directories))
    if len(sets) == 1:
        converger.write(mps.PROFILE_PATH, mps.render_profile(daemon_paths[sorted(sets)[0]]))
    else:
        converger.remove(mps.PROFILE_PATH)
    if converger.changed:
        converger.systemctl.daemon_reload()
    actions = start_daemons(converger, sets, pending_restart)
    owed.remove()
    for path in moved_pipes:
        converger.remove_folder(path)

    # The GPUs' compute modes as the checks find them: read again only when a daemon (re)started.
    if any(action != "none" for action in actions.values()) and not converger.feature.check_mode:
        gpus = mps.parse_gpus(converger.smi(mps.QUERY_GPUS))
    modes = dict((gpu["uuid"], gpu["compute_mode"]) for gpu in gpus)
    for name in sorted(sets):
        entry = {"name": name, "unit": mps.unit_name(name), "gpus": [gpu["uuid"] for gpu in sets[name]],
                 "pipe_directory": daemon_paths[name]["pipe_directory"], "log_directory": daemon_paths[name]["log_directory"],
                 "multiuser_server": multiuser[name], "exclusive_process": params["exclusive_process"],
                 "action": actions[name]}
        entry["verified"] = check_daemon(converger, name, sets[name], daemon_paths[name], actions[name], modes)
        converger.result["daemons"].append(entry)


def check_params(feature):
    """What the module cannot work without; the role checks the ranges and formats on the controller first."""
    try:
        int(feature.params["directory_mode"], 8)
    except ValueError:
        feature.fail_json(msg="directory_mode: got %r; allowed: an octal mode such as 0770" % feature.params["directory_mode"])
    # Names go into paths and the unit's shell lines: the module holds them to the role's rule itself.
    bad_names = [name for name in sorted(feature.params["gpu_sets"], key=str) if not mps.valid_daemon_name(name)]
    if bad_names:
        feature.fail_json(msg="gpu_sets (mps_gpu_sets in the role): got %s; allowed: %s; nothing was changed" % (
            ", ".join(json.dumps(name) for name in bad_names), mps.DAEMON_NAME_RULE))


NAME = 'mps'
ARGUMENT_SPEC = host_argument_spec()
ARGUMENT_SPEC.update(
    state=dict(type="str", choices=["present", "absent"], default="present"),
    gpu_sets=dict(type="dict", default={}),
    active_thread_percentage=dict(type="int", default=100),
    pinned_mem_limit=dict(type="str", default=""),
    exclusive_process=dict(type="bool", default=True),
    multiuser_server=dict(type="bool", default=True),
    group=dict(type="str", default="gpu-mps"),
    client_users=dict(type="list", elements="str", default=[]),
    pipe_directory=dict(type="path", default="/run/nvidia-mps"),
    log_directory=dict(type="path", default="/var/log/nvidia-mps"),
    directory_mode=dict(type="str", default="0770"),
    allow_mig=dict(type="bool", default=False),
    force=dict(type="bool", default=False),
    require_gpu=dict(type="bool", default=True),
)
SPEC_RULES = {}


def converge(spec, host, check_mode):
    """Converge this feature on the node as spec says (check_mode: only say what would change); returns the result."""
    feature = host.feature(NAME, spec, check_mode)
    check_params(feature)
    converger = Converger(feature)
    if feature.params["state"] == "absent":
        converge_absent(converger)
    elif not converger.nvidia_smi or not feature.get_bin_path("nvidia-cuda-mps-control"):
        missing = "nvidia-smi" if not converger.nvidia_smi else "nvidia-cuda-mps-control"
        if feature.params["require_gpu"]:
            converger.fail("%s not found: install the NVIDIA driver and its CUDA MPS tools, or set require_gpu to false "
                           "(mps_require_gpu in the role) to skip such hosts" % missing)
        converger.result["skipped_reason"] = "%s not found" % missing
    else:
        converge_present(converger)
    converger.result["diff"] = converger.diffs
    return dict(converger.result, changed=converger.changed)
