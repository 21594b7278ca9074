# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container lab node, as molecule/default/molecule.yml defines it, for `docker run`.

The bench (scripts/bench_lab.py) and the emulator's container test start nodes
outside Molecule; they take the options of the scenario's first platform from
here, so they run the very node the Molecule scenario tests.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import time

import yaml

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MOLECULE_YML = os.path.join(REPO_ROOT, "molecule", "default", "molecule.yml")
BOOT_TIMEOUT_S = 60

# Platform keys that do not become a `docker run` option.
IGNORED_KEYS = {"name", "image", "command", "pre_build_image", "groups"}
LIST_OPTIONS = {"capabilities": "--cap-add", "security_opts": "--security-opt", "tmpfs": "--tmpfs", "volumes": "--volume"}
VALUE_OPTIONS = {"network_mode": "--network", "cgroupns_mode": "--cgroupns"}
FLAG_OPTIONS = {"privileged": "--privileged"}


def lab_platform(path=MOLECULE_YML, name=None):
    """The platform called name (default: the first) of the scenario, with
    ${MOLECULE_PROJECT_DIRECTORY} expanded as Molecule does."""
    with open(path, encoding="utf-8") as handle:
        config = yaml.safe_load(handle)
    platforms = [p for p in config["platforms"] if name in (None, p["name"])]
    if not platforms:
        raise ValueError("%s has no platform %s" % (path, name))
    os.environ["MOLECULE_PROJECT_DIRECTORY"] = REPO_ROOT

    def expand(value):
        if isinstance(value, list):
            return [expand(item) for item in value]
        return os.path.expandvars(value) if isinstance(value, str) else value

    return {key: expand(value) for key, value in platforms[0].items()}


def docker_run_argv(platform, name):
    """`docker run` for one node named NAME; fails on a platform key it cannot translate."""
    known = IGNORED_KEYS | set(LIST_OPTIONS) | set(VALUE_OPTIONS) | set(FLAG_OPTIONS)
    unknown = sorted(set(platform) - known)
    if unknown:
        raise ValueError("%s: platform keys with no docker run translation here: %s" % (MOLECULE_YML, ", ".join(unknown)))
    argv = ["docker", "run", "--detach", "--name", name, "--hostname", name]
    for key, flag in sorted(VALUE_OPTIONS.items()):
        if key in platform:
            argv.append("%s=%s" % (flag, platform[key]))
    for key, flag in sorted(LIST_OPTIONS.items()):
        for item in platform.get(key, []):
            argv += [flag, item]
    argv += [flag for key, flag in sorted(FLAG_OPTIONS.items()) if platform.get(key)]
    argv.append(platform["image"])
    if platform.get("command"):
        argv += shlex.split(platform["command"])
    return argv


def wait_booted(name, timeout=BOOT_TIMEOUT_S):
    """Wait until systemd in the container has finished booting."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = subprocess.run(["docker", "exec", name, "systemctl", "is-system-running"],
                               capture_output=True, text=True, check=False).stdout.strip()
        if state in ("running", "degraded"):
            return
        time.sleep(0.5)
    raise RuntimeError("%s: systemd did not finish booting in %ds" % (name, timeout))


def require_docker(items, what):
    """A lab suite's pytest_collection_modifyitems: without docker its tests skip, and under CI fail."""
    import shutil  # pylint: disable=import-outside-toplevel
    import pytest  # pylint: disable=import-outside-toplevel
    if shutil.which("docker"):
        return
    if os.environ.get("CI"):
        raise pytest.UsageError("%s needs docker and the lab image; run `make lab` first" % what)
    for item in items:
        item.add_marker(pytest.mark.skip(reason="docker is not installed"))
