# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A lab node's fingerprint: everything the roles may change, read in one `docker exec`.

files: sha256 (or link target), mode and owner of every entry under MANAGED_PATHS;
live: the sysctls the roles manage (/proc/sys), THP, /proc/swaps, and is-enabled /
is-active of the units the roles manage; gpus: the emulator's GPU state
(persistence, compute mode, MIG modes and instances, MPS daemons) and its change
log. Read-only nvidia-smi calls leave the emulator's state file as it was (its log
records changes only), so the whole log is compared.
"""

from __future__ import annotations

import json
import os
import sys

import yaml

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO_ROOT, "playbooks", "collections"))
# pylint: disable=wrong-import-position
from ansible_collections.gpuops.hardening.plugins.module_utils.mps import UNIT_PREFIX  # noqa: E402
from ansible_collections.gpuops.hardening.plugins.plugin_utils.input_rules.sysctl import RANGES  # noqa: E402

from lab import docker_exec  # noqa: E402

# Everything the roles may write lives under these paths.
MANAGED_PATHS = (
    "/etc/fstab",
    # The mps role's client group and its members.
    "/etc/group",
    "/etc/gshadow",
    "/etc/sysctl.d",
    "/etc/sysctl.conf",
    "/etc/security/limits.d",
    "/etc/systemd",
    "/etc/docker",
    "/etc/ansible/facts.d",
    "/usr/local/bin",
    "/usr/local/libexec",
    "/usr/local/lib/gpuops-hardening",
    "/etc/gpuops-hardening",
    "/etc/tmpfiles.d",
    "/etc/profile.d",
    "/var/lib/gpuops-hardening",
)

THP_FILES = ("enabled", "defrag", "khugepaged/defrag")
FIXED_UNITS = ("nvidia-persistenced.service", "nvidia-fabricmanager.service", "gpuops-mig.service", "docker.service")
EMULATOR_STATE = "/var/lib/gpuemu/state.json"


def managed_sysctls():
    """Every key the sysctl role's profiles set, and every key it checks the range of."""
    with open(os.path.join(REPO_ROOT, "roles", "sysctl", "vars", "main.yml"), encoding="utf-8") as handle:
        profiles = yaml.safe_load(handle)["__sysctl_profiles"]
    keys = set(RANGES)
    for entry in profiles.values():
        keys.update(entry["settings"])
    return sorted(keys)


# Runs on the node (its python3), with the parameters as JSON in argv[1].
_NODE_SCRIPT = r'''
import glob, hashlib, json, os, subprocess, sys
p = json.loads(sys.argv[1])

def entry(path):
    st = os.lstat(path)
    kind = "link" if os.path.islink(path) else "dir" if os.path.isdir(path) else "file"
    found = {"kind": kind, "mode": oct(st.st_mode & 0o7777), "owner": "%d:%d" % (st.st_uid, st.st_gid)}
    if kind == "link":
        found["target"] = os.readlink(path)
    elif kind == "file":
        with open(path, "rb") as handle:
            found["sha256"] = hashlib.sha256(handle.read()).hexdigest()
    return found

files = {}
for root in p["paths"]:
    if not os.path.lexists(root):
        continue
    files[root] = entry(root)
    for top, dirs, names in os.walk(root):
        for name in dirs + names:
            files[os.path.join(top, name)] = entry(os.path.join(top, name))

def read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError as error:
        return "unreadable: %s" % error.strerror

units = sorted(set(p["units"]) | set(os.path.basename(u) for u in glob.glob("/etc/systemd/system/%s*" % p["mps_prefix"])))
def systemctl(verb, unit):
    done = subprocess.run(["systemctl", verb, unit], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True)
    return done.stdout.strip()

live = {
    "sysctl": dict((key, read("/proc/sys/" + key.replace(".", "/"))) for key in p["sysctls"]),
    "thp": dict((name, read("/sys/kernel/mm/transparent_hugepage/" + name)) for name in p["thp"]),
    "swaps": read("/proc/swaps"),
    "units": dict((u, [systemctl("is-enabled", u), systemctl("is-active", u)]) for u in units),
}
with open(p["state"]) as handle:
    state = json.load(handle)
gpus = {
    "gpus": [dict((k, g.get(k)) for k in ("index", "compute_mode", "mig", "gpu_instances", "persistence_legacy"))
             for g in state["gpus"]],
    "daemons": state.get("daemons"),
    "log": state.get("log", []),
}
print(json.dumps({"files": files, "live": live, "gpus": gpus}, sort_keys=True))
'''


def fingerprint(node):
    """{files, live, gpus} of a node, in one docker exec."""
    params = {"paths": MANAGED_PATHS, "sysctls": managed_sysctls(), "thp": THP_FILES, "units": FIXED_UNITS,
              "mps_prefix": UNIT_PREFIX, "state": EMULATOR_STATE}
    return json.loads(docker_exec(node, "python3", "-c", _NODE_SCRIPT, json.dumps(params)))


def differences(before, after):
    """Readable lines for every entry that differs between two fingerprints; [] when equal."""
    lines = []
    for section in ("files", "live", "gpus"):
        old, new = before.get(section, {}), after.get(section, {})
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key):
                lines.append("%s %s: %r -> %r" % (section, key, old.get(key), new.get(key)))
    return lines
