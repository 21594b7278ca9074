# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""CUDA MPS as systemd services: the GPU query, GPU sets, and the files one daemon needs.

Pure functions: the module (plugins/modules/mps.py) runs the commands and writes the files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import posixpath
import re

from ansible_collections.gpuops.hardening.plugins.module_utils.fabricmanager import UNIT as FABRICMANAGER_UNIT
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import managed_header
from ansible_collections.gpuops.hardening.plugins.module_utils.nvidia_smi import cell_int, cell_text, parse_query_csv

UNIT_DIR = "/etc/systemd/system"
UNIT_PREFIX = "gpuops-mps-"
CONFIG_DIR = "/etc/gpuops-hardening/mps"
TMPFILES_PATH = "/etc/tmpfiles.d/gpuops-mps.conf"
PROFILE_PATH = "/etc/profile.d/gpuops-mps.sh"
# Compute modes from before MPS took the GPUs, by UUID: what a stop and state=absent restore.
MODES_RECORD_PATH = "/var/lib/gpuops-hardening/mps/compute-modes.json"
# The pipe and log folders this module created: the only ones it may take (set their mode and owner,
# name in its tmpfiles.d entry) or remove. Kept after state=absent for the log folders it leaves.
FOLDERS_RECORD_PATH = "/var/lib/gpuops-hardening/mps/folders.json"
# Folders no pipe or log option may name, even where an earlier run recorded one: the module sets the
# mode and owner of its folders, and its tmpfiles.d entry sets them again at every boot.
SYSTEM_FOLDERS = frozenset([
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/media", "/mnt", "/opt", "/proc", "/root",
    "/run", "/run/lock", "/run/user", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/usr/bin", "/usr/lib", "/usr/local",
    "/usr/sbin", "/usr/share", "/var", "/var/cache", "/var/lib", "/var/lock", "/var/log", "/var/run", "/var/spool",
    "/var/tmp"])
FOLDERS_ALLOWED = ("a folder that does not exist yet (the module creates it) or one it created on an earlier run; "
                   "never an existing folder it did not create, nor a system folder (%s)" % ", ".join(sorted(SYSTEM_FOLDERS)))
GPU_DEVICE = "/dev/nvidiactl"
PID_FILE = "nvidia-cuda-mps-control.pid"
SERVER_NAME = "nvidia-cuda-mps-server"
ALL_GPUS = "all"

QUERY_GPUS = ["--query-gpu=index,uuid,compute_mode,compute_cap,mig.mode.current", "--format=csv"]
QUERY_APPS = ["--query-compute-apps=gpu_uuid,pid,process_name", "--format=csv"]


def is_server_process(process_name):
    """nvidia-smi lists the MPS server by bare name or full path; every other process is a client."""
    return process_name == SERVER_NAME or process_name.endswith("/" + SERVER_NAME)


# nvidia-smi prints compute modes one way and takes them (-c) another.
COMPUTE_MODE_ARGS = {
    "Default": "DEFAULT",
    "Exclusive_Thread": "EXCLUSIVE_THREAD",
    "Prohibited": "PROHIBITED",
    "Exclusive_Process": "EXCLUSIVE_PROCESS",
}
EXCLUSIVE = "Exclusive_Process"
# MPS guide: the multi-user server needs Volta (compute capability 7.0) or newer.
MULTIUSER_MIN_CAPABILITY = (7, 0)
# The one rule for daemon names (gpu_sets keys), held by the module and the role's input rules alike:
# a name goes into the unit's name, the pipe and log paths and the unit's `sh -c '...'` lines, so it
# may hold nothing a path or a shell reads. \Z, not $: $ lets a trailing newline through.
_DAEMON_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}\Z")
DAEMON_NAME_RULE = ("daemon names of lower-case letters, digits, - and _, starting with a letter or digit "
                    "(at most 32 characters)")
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?)i?B?\s*$", re.IGNORECASE)
_SIZE_FACTORS = {"": 1.0 / (1024 * 1024), "K": 1.0 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0 * 1024}


def _capability(text):
    major, dot, minor = (text or "").partition(".")
    if not (major.isdigit() and (not dot or minor.isdigit())):
        return None
    return int(major), int(minor or 0)


def parse_gpus(text):
    """QUERY_GPUS output -> list of {index, uuid, compute_mode, compute_cap, mig}; compute_cap is a tuple or None.

    A row without a numeric index is no GPU; an unavailable MIG mode counts as disabled.
    """
    return [{"index": cell_int(row, "index"), "uuid": cell_text(row, "uuid"),
             "compute_mode": cell_text(row, "compute_mode"), "compute_cap": _capability(row.get("compute_cap")),
             "mig": row.get("mig.mode.current") == "Enabled"}
            for row in parse_query_csv(text) if cell_int(row, "index") is not None]


def parse_apps(text):
    """QUERY_APPS output -> list of {gpu_uuid, pid, name}; a row without a numeric pid is no process."""
    return [{"gpu_uuid": cell_text(row, "gpu_uuid"), "pid": cell_int(row, "pid"),
             "name": cell_text(row, "process_name")}
            for row in parse_query_csv(text) if cell_int(row, "pid") is not None]


def describe(gpu):
    return "%d (%s)" % (gpu["index"], gpu["uuid"])


def _match(identifier, gpus):
    """The GPUs an index or a UUID (or, as CUDA takes it, a unique UUID prefix with GPU-) names."""
    text = str(identifier).strip()
    if text.isdigit():
        return [gpu for gpu in gpus if gpu["index"] == int(text)]
    return [gpu for gpu in gpus if gpu["uuid"].lower().startswith(text.lower())]


def valid_daemon_name(name):
    return isinstance(name, str) and bool(_DAEMON_NAME.match(name))


def resolve_sets(gpu_sets, gpus):
    """({daemon name: [gpu, ...]}, errors). An empty gpu_sets is one daemon, ALL_GPUS, for every GPU."""
    if not gpu_sets:
        return ({ALL_GPUS: list(gpus)} if gpus else {}), ([] if gpus else ["nvidia-smi lists no GPU"])
    on_host = ", ".join(describe(gpu) for gpu in gpus) or "none"
    resolved, errors, owner = {}, [], {}
    for name in sorted(gpu_sets):
        chosen = []
        for identifier in gpu_sets[name]:
            found = _match(identifier, gpus)
            if len(found) != 1:
                errors.append("mps_gpu_sets.%s: GPU %s %s; GPUs on this host: %s" % (
                    name, identifier, "is not on this host" if not found else "matches more than one GPU", on_host))
                continue
            gpu = found[0]
            if gpu["uuid"] in owner:
                errors.append("mps_gpu_sets.%s: GPU %s is already in set %s; a GPU can serve one MPS daemon" % (
                    name, describe(gpu), owner[gpu["uuid"]]))
                continue
            owner[gpu["uuid"]] = name
            chosen.append(gpu)
        resolved[name] = chosen
    return resolved, errors


def mig_refusals(sets):
    """One message per GPU in MIG mode, with why MPS is refused there."""
    return ["MPS daemon %s: GPU %s is in MIG mode. MIG already partitions it into isolated instances; one MPS "
            "daemon for the whole GPU would put the clients of every instance into one shared memory space again. "
            "Set mps_allow_mig to true to run it anyway (clients must then name a MIG instance in "
            "CUDA_VISIBLE_DEVICES)" % (name, describe(gpu))
            for name in sorted(sets) for gpu in sets[name] if gpu["mig"]]


def supports_multiuser(gpus):
    """True when every GPU is Volta or newer (unknown capability counts as too old)."""
    return all(gpu["compute_cap"] is not None and gpu["compute_cap"] >= MULTIUSER_MIN_CAPABILITY for gpu in gpus)


def unit_name(name):
    return "%s%s.service" % (UNIT_PREFIX, name)


def daemon_name(unit):
    """The daemon name of one of this module's units, or None for another unit."""
    if unit.startswith(UNIT_PREFIX) and unit.endswith(".service"):
        return unit[len(UNIT_PREFIX):-len(".service")] or None
    return None


def unit_environment(text):
    """The Environment= assignments of a unit this module rendered: {name: value}."""
    environment = {}
    for line in (text or "").splitlines():
        if line.startswith("Environment="):
            key, dummy, value = line[len("Environment="):].partition("=")
            environment[key] = value
    return environment


def paths(name, pipe_root, log_root):
    """Every path one daemon uses."""
    return {
        "unit": "%s/%s" % (UNIT_DIR, unit_name(name)),
        "commands": "%s/%s.commands" % (CONFIG_DIR, name),
        "env": "%s/%s.env" % (CONFIG_DIR, name),
        "pipe_directory": "%s/%s" % (pipe_root.rstrip("/"), name),
        "log_directory": "%s/%s" % (log_root.rstrip("/"), name),
    }


def render_commands(active_thread_percentage, pinned_mem_limit, device_count):
    """The control commands sent through the pipe after every start: quit loses these settings."""
    lines = ["set_default_active_thread_percentage %d" % active_thread_percentage]
    if pinned_mem_limit:
        # Device numbers are those the daemon sees: its CUDA_VISIBLE_DEVICES order.
        lines.extend("set_default_device_pinned_mem_limit %d %s" % (device, pinned_mem_limit)
                     for device in range(device_count))
    return "\n".join(lines) + "\n"


def render_env(daemon_paths):
    """KEY=value lines: an EnvironmentFile= for services, and `set -a; . FILE` for shells."""
    return "%s\nCUDA_MPS_PIPE_DIRECTORY=%s\nCUDA_MPS_LOG_DIRECTORY=%s\n" % (
        managed_header("mps"), daemon_paths["pipe_directory"], daemon_paths["log_directory"])


def render_profile(daemon_paths):
    """/etc/profile.d script for login shells (written only when the host has one daemon)."""
    return "%s\nexport CUDA_MPS_PIPE_DIRECTORY=%s\nexport CUDA_MPS_LOG_DIRECTORY=%s\n" % (
        managed_header("mps"), daemon_paths["pipe_directory"], daemon_paths["log_directory"])


def render_tmpfiles(directories):
    """systemd-tmpfiles lines that recreate the directories at boot (/run is empty then):
    directories is a list of (path, mode, user, group)."""
    lines = [managed_header("mps"), "# The MPS pipe and log directories, recreated at every boot."]
    lines.extend("d %s %04o %s %s -" % entry for entry in directories)
    return "\n".join(lines) + "\n"


def normal_folder(path):
    """path as an absolute, normalised folder name (no trailing /, no .. ), for comparing folders."""
    return "/" + posixpath.normpath("/" + path).lstrip("/")


def is_system_folder(path):
    return normal_folder(path) in SYSTEM_FOLDERS


def tmpfiles_folders(text):
    """The folders of this module's tmpfiles.d entry; none where the file is not the module's."""
    lines = (text or "").splitlines()
    if not lines or lines[0] != managed_header("mps"):
        return []
    return [line.split()[1] for line in lines if line.startswith("d ") and len(line.split()) > 1]


def load_folders_record(text):
    """The folders of the record of those this module created; an unreadable record is empty."""
    try:
        record = json.loads(text) if text else {}
    except ValueError:
        return []
    folders = record.get("folders") if isinstance(record, dict) else None
    return [str(folder) for folder in folders] if isinstance(folders, list) else []


def render_folders_record(folders):
    return json.dumps({"folders": sorted(set(folders))}, indent=2) + "\n"


def modes_set_at_stop(text):
    """{GPU uuid: compute mode} that a unit this module rendered sets as it stops (its ExecStopPost lines)."""
    names = dict((argument, mode) for mode, argument in COMPUTE_MODE_ARGS.items())
    modes = {}
    for line in (text or "").splitlines():
        words = line.split()
        if line.startswith("ExecStopPost=") and "-i" in words[:-1] and "-c" in words[:-1]:
            modes[words[words.index("-i") + 1]] = names.get(words[words.index("-c") + 1])
    return dict((uuid, mode) for uuid, mode in modes.items() if mode)


# What systemd reads only to order a start (systemd.unit(5), After=/Before=), and comments: a unit whose changes are
# only these needs a daemon-reload, not a restart of the daemon that runs.
ORDERING_ONLY = ("After=", "Before=", "#")


def restart_relevant(unit_text):
    """The unit's lines a running daemon depends on; None for a unit that does not exist."""
    if unit_text is None:
        return None
    return [line for line in unit_text.splitlines() if not line.startswith(ORDERING_ONLY)]


def render_unit(name, gpus, daemon_paths, binaries, exclusive_modes, multiuser):
    """The unit of one control daemon.

    binaries: nvidia-smi, nvidia-cuda-mps-control, sh and (or None) systemd-tmpfiles.
    exclusive_modes: [(uuid, mode to restore)] when the GPUs go EXCLUSIVE_PROCESS, else [].
    """
    control = binaries["nvidia-cuda-mps-control"]
    uuids = [gpu["uuid"] for gpu in gpus]
    lines = [
        managed_header("mps"),
        "# MPS control daemon %s for GPU %s." % (name, ", ".join(uuids)),
        "[Unit]",
        "Description=NVIDIA MPS control daemon %s (gpuops.hardening)" % name,
        "ConditionPathExists=%s" % GPU_DEVICE,
        # Its GPUs serve no CUDA work before Fabric Manager trained their fabric (an NVSwitch node).
        "After=nvidia-persistenced.service %s systemd-tmpfiles-setup.service" % FABRICMANAGER_UNIT,
        "",
        "[Service]",
        # -d with a PIDFile: systemd sees the start finish once the pipe answers.
        "Type=forking",
        "Environment=CUDA_MPS_PIPE_DIRECTORY=%s" % daemon_paths["pipe_directory"],
        "Environment=CUDA_MPS_LOG_DIRECTORY=%s" % daemon_paths["log_directory"],
        # UUIDs, as the MPS guide advises: indexes are renumbered inside the server.
        "Environment=CUDA_VISIBLE_DEVICES=%s" % ",".join(uuids),
        "PIDFile=%s/%s" % (daemon_paths["pipe_directory"], PID_FILE),
    ]
    if binaries.get("systemd-tmpfiles"):
        lines.append("ExecStartPre=%s --create %s" % (binaries["systemd-tmpfiles"], TMPFILES_PATH))
    lines.extend("ExecStartPre=%s -i %s -c %s" % (binaries["nvidia-smi"], uuid, COMPUTE_MODE_ARGS[EXCLUSIVE])
                 for uuid, dummy in exclusive_modes)
    lines.append("ExecStart=%s -d%s" % (control, " -multiuser-server" if multiuser else ""))
    # The defaults live in the daemon until quit: send them after every start. The loop
    # gives a slow daemon a few seconds to open its pipe.
    lines.append("ExecStartPost=%s -c 'for try in 1 2 3 4 5; do %s < %s && exit 0; sleep 1; done; exit 1'" % (
        binaries["sh"], control, daemon_paths["commands"]))
    # "-": a quit that misses the daemon (its pipe just moved) is no failure; systemd's SIGTERM follows.
    lines.append("ExecStop=-%s -c 'echo quit | %s'" % (binaries["sh"], control))
    lines.extend("ExecStopPost=%s -i %s -c %s" % (binaries["nvidia-smi"], uuid, COMPUTE_MODE_ARGS.get(mode, "DEFAULT"))
                 for uuid, mode in exclusive_modes)
    lines.extend(["Restart=on-failure", "RestartSec=5", "", "[Install]", "WantedBy=multi-user.target", ""])
    return "\n".join(lines)


def load_modes_record(text):
    """The record of pre-MPS compute modes: {uuid: mode}; an unreadable record is empty."""
    try:
        record = json.loads(text) if text else {}
    except ValueError:
        return {}
    return dict((str(k), str(v)) for k, v in record.items()) if isinstance(record, dict) else {}


def render_modes_record(record):
    return json.dumps(dict(sorted(record.items())), indent=2, sort_keys=True) + "\n"


def parse_server_list(text):
    return [int(line) for line in (text or "").split() if line.isdigit()]


def parse_percentage(text):
    try:
        return float((text or "").strip().rstrip("%"))
    except ValueError:
        return None


def size_mib(text):
    """A size such as 2G, 512M or 2048 MiB in MiB, or None."""
    found = _SIZE.match(text or "")
    if not found:
        return None
    return float(found.group(1)) * _SIZE_FACTORS[found.group(2).upper()]
