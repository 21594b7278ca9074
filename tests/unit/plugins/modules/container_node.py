# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node for the container_runtime tests: an emulated GPU profile, the emulator's nvidia-ctk (Container Toolkit
v1.19.1 behaviour), container engines laid down as unit files and binaries, a stand-in for systemctl that knows
which units run, and a stand-in for the docker CLI that lists the running containers."""

from __future__ import annotations

import contextlib
import os
import shlex
import stat
from unittest import mock

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import container_runtime as engine
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import ctk_units
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import state as emulator_state

# The unit each engine's package ships, and the binary (Debian's paths).
ENGINE_FILES = {"docker": ("docker.service", "dockerd"), "containerd": ("containerd.service", "containerd"),
                "crio": ("crio.service", "crio"), "podman": (None, "podman")}


def executable(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def emulator_tool(path, tool, state):
    """An executable at path that runs the emulator's tool on the GPUs of the state file."""
    environment = api.environment(state)
    executable(path, "#!/bin/sh\nexport %s=%s PYTHONPATH=%s\nexec %s \"$@\"\n" % (
        emulator_state.ENV_VAR, shlex.quote(state), shlex.quote(environment["PYTHONPATH"]),
        " ".join(shlex.quote(part) for part in api.command(tool))))
    return str(path)


class ContainerNode:
    """The node's tree below root, its GPUs (the emulator's state) and what its systemd and docker hold."""

    def __init__(self, tmp_path, profile="a100_8x_mig"):
        self.root = tmp_path / "root"
        (self.root / "run" / "systemd" / "system").mkdir(parents=True)
        self.tools = tmp_path / "tools"
        self.state = str(tmp_path / "state.json")
        api.write_state(api.new_state(profile), self.state)
        emulator_tool(self.tools / "nvidia-ctk", "nvidia-ctk", self.state)
        self.containers = []
        self.active = set()
        self.reloadable = {"docker.service"}
        self.enabled = set()
        self.calls = []

    def path(self, absolute):
        return self.root / absolute.lstrip("/")

    def install(self, *engines, running=True):
        for name in engines:
            unit, binary = ENGINE_FILES[name]
            executable(self.path("/usr/bin/" + binary), "#!/bin/sh\n")
            if unit:
                self.path("/lib/systemd/system/" + unit).parent.mkdir(parents=True, exist_ok=True)
                self.path("/lib/systemd/system/" + unit).write_text("[Service]\nExecStart=/usr/bin/%s\n" % binary)
                if running:
                    self.active.add(unit)

    def mask(self, unit):
        self.path("/etc/systemd/system").mkdir(parents=True, exist_ok=True)
        self.path("/etc/systemd/system/" + unit).symlink_to("/dev/null")

    def refresh_units(self):
        """The toolkit's CDI refresh units, as its Debian package places them."""
        for path, text in ctk_units.files().items():
            self.path(path).parent.mkdir(parents=True, exist_ok=True)
            self.path(path).write_text(text)

    def write(self, absolute, text):
        self.path(absolute).parent.mkdir(parents=True, exist_ok=True)
        self.path(absolute).write_text(text)

    def read(self, absolute):
        return self.path(absolute).read_text()

    def args(self, **args):
        return dict({"root": str(self.root), "nvidia_ctk_path": str(self.tools / "nvidia-ctk")}, **args)

    def books(self):
        return sorted(self.enabled), list(self.calls), sorted(self.active)

    @contextlib.contextmanager
    def systemd_and_docker(self, monkeypatch):
        """The engine's systemctl answered by this node; `docker ps` lists self.containers."""
        node = self
        executable(self.tools / "docker", "#!/bin/sh\ncat %s 2>/dev/null\n" % shlex.quote(str(self.tools / "running")))
        monkeypatch.setenv("PATH", "%s:%s" % (self.tools, os.environ["PATH"]))

        class NodeSystemctl:
            def __init__(self, module, timeout=60):
                self.module = module

            def show(self, units, properties):
                return [{"Id": unit, "ActiveState": "active" if unit in node.active else "inactive",
                         "CanReload": "yes" if unit in node.reloadable else "no"} for unit in units]

            def enable(self, unit):
                if unit in node.enabled:
                    return False
                if not self.module.check_mode:
                    node.enabled.add(unit)
                    node.calls.append("enable " + unit)
                return True

            def try_verb(self, verb, unit):
                if not self.module.check_mode:
                    node.calls.append("%s %s" % (verb, unit))
                    if verb in ("start", "restart"):
                        node.active.add(unit)
                return None

        with mock.patch.object(engine, "Systemctl", NodeSystemctl):
            yield self

    def run_containers(self, *names):
        self.containers = list(names)
        (self.tools / "running").write_text("".join(name + "\n" for name in names))
