# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Starts and removes the bench lab: N containers of the Molecule lab node.

Usage: python scripts/bench_lab.py up NODES INVENTORY
       python scripts/bench_lab.py down NODES

Each container is started with the `docker run` options of the first platform
in molecule/default/molecule.yml, so the bench measures the very node the
Molecule scenario tests. `up` writes an inventory of the nodes, alternating the
training and inference profiles, and waits until systemd in each has booted.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time

import yaml

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MOLECULE_YML = os.path.join(REPO_ROOT, "molecule", "default", "molecule.yml")
PREFIX = "gpuops-bench"
BOOT_TIMEOUT_S = 60

# Platform keys that do not become a `docker run` option.
IGNORED_KEYS = {"name", "image", "command", "pre_build_image", "groups"}
LIST_OPTIONS = {"capabilities": "--cap-add", "security_opts": "--security-opt", "tmpfs": "--tmpfs", "volumes": "--volume"}
VALUE_OPTIONS = {"network_mode": "--network", "cgroupns_mode": "--cgroupns"}


def lab_platform(path=MOLECULE_YML):
    """The first platform of the Molecule scenario, with ${VAR}s expanded as Molecule does."""
    with open(path, encoding="utf-8") as handle:
        config = yaml.safe_load(handle)
    os.environ["MOLECULE_PROJECT_DIRECTORY"] = REPO_ROOT
    platform = config["platforms"][0]

    def expand(value):
        if isinstance(value, list):
            return [expand(item) for item in value]
        return os.path.expandvars(value) if isinstance(value, str) else value

    return {key: expand(value) for key, value in platform.items()}


def docker_run_argv(platform, name):
    """`docker run` for one node; fails on a platform key it cannot translate."""
    unknown = sorted(set(platform) - IGNORED_KEYS - set(LIST_OPTIONS) - set(VALUE_OPTIONS) - {"privileged"})
    if unknown:
        raise SystemExit("%s: platform keys the bench cannot translate to docker run: %s" % (MOLECULE_YML, ", ".join(unknown)))
    argv = ["docker", "run", "--detach", "--name", name, "--hostname", name]
    for key, flag in sorted(VALUE_OPTIONS.items()):
        if key in platform:
            argv += ["%s=%s" % (flag, platform[key])]
    for key, flag in sorted(LIST_OPTIONS.items()):
        for item in platform.get(key, []):
            argv += [flag, item]
    if platform.get("privileged"):
        argv.append("--privileged")
    argv.append(platform["image"])
    if platform.get("command"):
        argv += shlex.split(platform["command"])
    return argv


def node_names(nodes):
    return ["%s-%d" % (PREFIX, number) for number in range(1, nodes + 1)]


def down(nodes):
    for name in node_names(nodes):
        subprocess.run(["docker", "rm", "--force", name], capture_output=True, check=False)


def wait_booted(name):
    deadline = time.monotonic() + BOOT_TIMEOUT_S
    while time.monotonic() < deadline:
        state = subprocess.run(["docker", "exec", name, "systemctl", "is-system-running"],
                               capture_output=True, text=True, check=False).stdout.strip()
        if state in ("running", "degraded"):
            return
        time.sleep(1)
    raise SystemExit("%s: systemd did not finish booting in %ds" % (name, BOOT_TIMEOUT_S))


def up(nodes, inventory):
    platform = lab_platform()
    down(nodes)
    hosts = {}
    for number, name in enumerate(node_names(nodes), start=1):
        subprocess.run(docker_run_argv(platform, name), capture_output=True, check=True)
        hosts[name] = {"gpuops_profile": "training" if number % 2 else "inference"}
    for name in hosts:
        wait_booted(name)
    os.makedirs(os.path.dirname(inventory), exist_ok=True)
    with open(inventory, "w", encoding="utf-8") as handle:
        yaml.safe_dump({"gpu_nodes": {
            "vars": {"ansible_connection": "community.docker.docker", "ansible_python_interpreter": "/usr/bin/python3"},
            "hosts": hosts,
        }}, handle, default_flow_style=False)


def main(argv):
    if len(argv) == 4 and argv[1] == "up":
        up(int(argv[2]), argv[3])
    elif len(argv) == 3 and argv[1] == "down":
        down(int(argv[2]))
    else:
        raise SystemExit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
