# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-persistenced: which packaged unit a host has, the drop-in that turns
persistence mode on, the legacy boot unit, and nvidia-smi's persistence query."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import shlex

from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import managed_header
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import read_text
from ansible_collections.gpuops.hardening.plugins.module_utils.nvidia_smi import cell_int, cell_text, parse_query_csv
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import (
    UNIT_DIRS,
    config_files,
    last_setting,
    parse_ini_sections,
)

UNIT = "nvidia-persistenced.service"
DROPIN_PATH = "/etc/systemd/system/nvidia-persistenced.service.d/90-gpuops-persistenced.conf"
WANTS_PATH = "/etc/systemd/system/multi-user.target.wants/nvidia-persistenced.service"
LEGACY_UNIT_PATH = "/etc/systemd/system/gpuops-persistence-mode.service"
GPU_DEVICE = "/dev/nvidiactl"
QUERY_ARGS = ["--query-gpu=index,uuid,persistence_mode", "--format=csv"]

PERSISTENCE_ON = "--persistence-mode"
PERSISTENCE_OFF = "--no-persistence-mode"
# systemd's ExecStart prefixes (-, @, :, +, !) belong to the command, not to its arguments.
_EXEC_PREFIX = re.compile(r"^[-@:+!]*")
_NEEDS_QUOTES = re.compile(r"[\s\"'\\;$%]")


def overriding_dropins(root="/", unit_dirs=UNIT_DIRS, unit=UNIT):
    """Drop-ins systemd applies after this module's own that set ExecStart again: their
    host paths (below root). Theirs, not ours, is the command the daemon runs."""
    ours = os.path.basename(DROPIN_PATH)
    directories = [os.path.join(root, directory.lstrip("/"), unit + ".d") for directory in unit_dirs]
    return [path for name, path in config_files(directories)
            if name > ours and last_setting(read_text(path) or "", "Service", "ExecStart") is not None]


def is_static(text):
    """A unit without [Install] WantedBy=/RequiredBy= cannot be enabled."""
    return not any(name == "Install" and (settings.get("WantedBy") or settings.get("RequiredBy"))
                   for name, settings in parse_ini_sections(text))


def exec_start(text):
    """The packaged ExecStart as an argv list (its last assignment), or []."""
    value = last_setting(text, "Service", "ExecStart")
    return shlex.split(value) if value else []


def daemon_user(argv):
    """The --user (-u, --user=) the daemon drops to, or None."""
    for position, word in enumerate(argv):
        if word.startswith("--user="):
            return word.split("=", 1)[1]
        if word in ("--user", "-u") and position + 1 < len(argv):
            return argv[position + 1]
    return None


def flavour(text):
    """Which packaging the unit comes from: upstream, debian, ubuntu, nvidia-ubuntu or custom."""
    user = daemon_user(exec_start(text))
    if is_static(text):
        return "nvidia-ubuntu" if user == "root" else "ubuntu"
    if user == "nvpd":
        return "debian"
    if user is not None:
        return "upstream"
    return "custom"


def _quoted(word):
    if word and not _NEEDS_QUOTES.search(word):
        return word
    return '"%s"' % word.replace("\\", "\\\\").replace('"', '\\"')


def persistence_argv(text):
    """The packaged command with its arguments (--user, --group, ...), persistence mode on."""
    argv = exec_start(text)
    if not argv:
        return []
    kept = [word for word in argv[1:] if word not in (PERSISTENCE_ON, PERSISTENCE_OFF)]
    return [argv[0]] + kept + [PERSISTENCE_ON]


def render_dropin(unit_text, unit_path):
    argv = persistence_argv(unit_text)
    return "\n".join([
        managed_header("persistenced"),
        "# Persistence mode on every GPU. The packaged %s stays as shipped, so package" % unit_path,
        "# updates keep this: ExecStart is reset and replaced with its own arguments plus",
        "# %s, and the unit does nothing on a host without a GPU." % PERSISTENCE_ON,
        "[Unit]",
        "ConditionPathExists=%s" % GPU_DEVICE,
        "",
        "[Service]",
        "ExecStart=",
        "ExecStart=%s" % " ".join(_quoted(word) for word in argv),
        "",
    ])


def render_legacy_unit(nvidia_smi):
    return "\n".join([
        managed_header("persistenced"),
        "# No nvidia-persistenced on this host: legacy persistence mode, which the driver",
        "# forgets at every reboot, set again at boot.",
        "[Unit]",
        "Description=GPU persistence mode, legacy (nvidia-smi -pm 1)",
        "ConditionPathExists=%s" % GPU_DEVICE,
        "After=systemd-modules-load.service",
        "",
        "[Service]",
        "Type=oneshot",
        "RemainAfterExit=yes",
        "ExecStart=%s -pm 1" % _quoted(nvidia_smi),
        "",
        "[Install]",
        "WantedBy=multi-user.target",
        "",
    ])


def parse_persistence(text):
    """QUERY_ARGS output -> list of {index, uuid, persistence_mode}; a row without a numeric index is no GPU."""
    return [{"index": cell_int(row, "index"), "uuid": cell_text(row, "uuid"),
             "persistence_mode": cell_text(row, "persistence_mode")}
            for row in parse_query_csv(text) if cell_int(row, "index") is not None]


def not_persistent(gpus):
    """The GPUs whose persistence mode does not read Enabled, as 'INDEX (UUID): MODE'."""
    return ["%d (%s): %s" % (gpu["index"], gpu["uuid"], gpu["persistence_mode"])
            for gpu in gpus if gpu["persistence_mode"] != "Enabled"]
