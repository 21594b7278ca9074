# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""mps: ranges and formats. GPU identifiers are checked for form here and against
the host's GPUs by the module, before it changes anything."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import posixpath
import re

from ansible_collections.gpuops.hardening.plugins.module_utils.mps import (
    DAEMON_NAME_RULE, FOLDERS_ALLOWED, is_system_folder, valid_daemon_name)
from ansible_collections.gpuops.hardening.plugins.plugin_utils.input_rules.common import bad, seconds_errors, unchanged

REMOVED = {}
_GPU_UUID = re.compile(r"^GPU-[0-9a-fA-F-]{1,36}$")
# An integer and M or G: the form set_default_device_pinned_mem_limit takes (MPS guide).
_PINNED_LIMIT = re.compile(r"^[1-9][0-9]*[MG]$")
_OCTAL_MODE = re.compile(r"^0?[0-7]{3}$")
_ACCOUNT = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")
_SCRATCH = ("/tmp", "/var/tmp")


def _gpu_identifier_ok(value):
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value >= 0
    return isinstance(value, str) and (value.isdigit() or bool(_GPU_UUID.match(value)))


def _gpu_set_errors(sets):
    if not isinstance(sets, dict):
        return []
    found, seen = [], {}
    for name in sorted(sets, key=str):
        members = sets[name]
        where = "mps_gpu_sets.%s" % name
        if not valid_daemon_name(name):
            found.append(bad("mps_gpu_sets", name, DAEMON_NAME_RULE))
        if not isinstance(members, list) or not members:
            found.append(bad(where, members, "a non-empty list of GPU indexes or UUIDs (GPU-...)"))
            continue
        for member in members:
            if not _gpu_identifier_ok(member):
                found.append(bad(where, member, "a GPU index (0, 1, ...) or UUID (GPU-...)"))
            elif str(member).lower() in seen:
                found.append(bad(where, member, "a GPU in one set only; it is also in set %s" % seen[str(member).lower()]))
            else:
                seen[str(member).lower()] = name
    return found


def _directory_errors(inputs, name):
    path = inputs.get(name)
    if not isinstance(path, str):
        return []
    in_scratch = any(path == scratch or path.startswith(scratch + "/") for scratch in _SCRATCH)
    if not path.startswith("/") or posixpath.normpath(path) != path or path == "/" or re.search(r"\s", path) or in_scratch:
        return [bad(name, path, "an absolute, normalised folder without spaces, outside /tmp and /var/tmp, "
                                "such as /run/nvidia-mps")]
    # The module refuses them too; here the run stops on the controller, before any role changes anything.
    if is_system_folder(path):
        return [bad(name, path, FOLDERS_ALLOWED)]
    return []


def errors(inputs, profile_entry):  # pylint: disable=unused-argument
    found = seconds_errors(inputs, "mps_timeout")
    percentage = inputs.get("mps_active_thread_percentage")
    if isinstance(percentage, int) and not 1 <= percentage <= 100:
        found.append(bad("mps_active_thread_percentage", percentage, "an integer from 1 to 100"))
    limit = inputs.get("mps_pinned_mem_limit")
    if isinstance(limit, str) and limit and not _PINNED_LIMIT.match(limit):
        found.append(bad("mps_pinned_mem_limit", limit, "an integer followed by M or G, such as 8G or 512M; "
                                                        "empty for no limit"))
    found.extend(_gpu_set_errors(inputs.get("mps_gpu_sets")))
    directory_errors = [error for name in ("mps_pipe_directory", "mps_log_directory")
                        for error in _directory_errors(inputs, name)]
    found.extend(directory_errors)
    # Two bad folders that are also the same are reported once each, as bad.
    if inputs.get("mps_pipe_directory") == inputs.get("mps_log_directory") and not directory_errors:
        found.append(bad("mps_log_directory", inputs.get("mps_log_directory"), "a folder other than mps_pipe_directory"))
    mode = inputs.get("mps_directory_mode")
    if isinstance(mode, str) and (not _OCTAL_MODE.match(mode) or int(mode, 8) & 0o007 or int(mode, 8) & 0o710 != 0o710):
        found.append(bad("mps_directory_mode", mode, "an octal mode with rwx for root, at least x for the group and "
                                                     "nothing for others, such as 0770 or 0750"))
    for name, values in (("mps_group", [inputs.get("mps_group")]), ("mps_client_users", inputs.get("mps_client_users") or [])):
        for value in values:
            if isinstance(value, str) and not _ACCOUNT.match(value):
                found.append(bad(name, value, "an account name of lower-case letters, digits, - and _"))
    return found


resolve = unchanged
