# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The MPS control daemon's settings and its answers to the control commands of the
MPS guide ("Multi-Process Service", nvidia-cuda-mps-control commands)."""

import datetime
import os

from . import state as state_file

SERVER_NAME = "nvidia-cuda-mps-server"
# What one server's context takes on each GPU (order of magnitude of a real one).
SERVER_MEMORY_MIB = 30


def _percentage(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return "%.1f" % value if 0 <= value <= 100 else None


def _pinned_limits(text):
    """CUDA_MPS_PINNED_DEVICE_MEM_LIMIT: "0=1G,1=512M" (device=limit pairs)."""
    limits = {}
    for pair in (text or "").split(","):
        device, equals, limit = pair.strip().partition("=")
        if equals and device.strip() and limit.strip():
            limits[device.strip()] = limit.strip()
    return limits


def _visible_gpu(gpus, token):
    """The GPU one CUDA_VISIBLE_DEVICES entry names: an index, or a GPU UUID or a
    unique prefix of one that includes "GPU-" (MPS guide, environment variables
    appendix, CUDA_VISIBLE_DEVICES), else None."""
    if token.isdigit():
        return next((gpu for gpu in gpus if gpu["index"] == int(token)), None)
    if not token.startswith("GPU-"):
        return None
    matches = [gpu for gpu in gpus if gpu["uuid"].startswith(token)]
    return matches[0] if len(matches) == 1 else None


def visible_gpus(state, environ):
    """GPU indexes a CUDA process may use, in the order CUDA_VISIBLE_DEVICES lists
    them (MPS guide: "enumerated in the order of the sequence"), or all. Assumption:
    an entry that names no GPU (unknown index, unknown or ambiguous UUID prefix) or
    one named twice is left out."""
    every = [gpu["index"] for gpu in state["gpus"]]
    wanted = environ.get("CUDA_VISIBLE_DEVICES")
    if wanted is None:
        return every
    chosen = []
    for token in wanted.split(","):
        gpu = _visible_gpu(state["gpus"], token.strip())
        if gpu is not None and gpu["index"] not in chosen:
            chosen.append(gpu["index"])
    return chosen


class Controller(object):
    """One control daemon: its defaults, its servers, and its log."""

    def __init__(self, pipe_dir, log_dir, environ, state_path, echo=None, multiuser=False):
        self.pipe_dir = pipe_dir
        self.log_path = os.path.join(log_dir, "control.log")
        self.environ = environ
        self.state_path = state_path
        self.echo = echo
        self.multiuser = multiuser
        # The daemon's environment sets the defaults its servers start with.
        self.active_thread_percentage = _percentage(environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")) or "100.0"
        self.pinned_mem_limits = _pinned_limits(environ.get("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"))
        self.servers = []

    def log(self, message):
        stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        line = "[%s Control %5d] %s\n" % (stamp, os.getpid(), message)
        with open(self.log_path, "a", encoding="utf-8") as handle:
            handle.write(line)
        if self.echo:
            self.echo.write(line)
            self.echo.flush()

    def answer(self, line):
        """(reply text, keep running)."""
        words = line.split()
        if not words:
            return "", True
        self.log("Cmd:%s" % " ".join(words))
        command, args = words[0], words[1:]
        handler = getattr(self, "_cmd_" + command, None)
        if handler is None:
            # Assumption: no source shows the real daemon's reply to an unknown
            # command; the emulator logs it and answers nothing.
            self.log("Unknown command %s" % command)
            return "", True
        return handler(args)

    def shutdown(self):
        """Stop every server (quit, SIGTERM): their processes leave the GPUs."""
        self._drop_servers([server["pid"] for server in self.servers])

    def _cmd_quit(self, args):
        del args
        self.shutdown()
        self.log("Exit")
        return "", False

    def _cmd_get_server_list(self, args):
        del args
        return "".join("%d\n" % s["pid"] for s in self.servers), True

    def _cmd_start_server(self, args):
        if args[:1] != ["-uid"] or len(args) != 2 or not args[1].isdigit():
            return "", True
        # A multi-user daemon runs one root server for every user (MPS guide).
        uid = 0 if self.multiuser else int(args[1])
        pid = os.getpid() + 1 + len(self.servers)
        self.servers.append({"pid": pid, "uid": uid})
        self.log("Starting new server %d for user %d" % (pid, uid))
        self._add_server_processes(pid)
        return "", True

    def _cmd_shutdown_server(self, args):
        if args:
            self._drop_servers([s["pid"] for s in self.servers if str(s["pid"]) == args[0]])
        return "", True

    def _cmd_set_default_active_thread_percentage(self, args):
        value = _percentage(args[0]) if len(args) == 1 else None
        if value is None:
            return "Invalid percentage value\n", True
        self.active_thread_percentage = value
        return value + "\n", True

    def _cmd_get_default_active_thread_percentage(self, args):
        del args
        return self.active_thread_percentage + "\n", True

    def _cmd_set_default_device_pinned_mem_limit(self, args):
        if len(args) == 2:
            self.pinned_mem_limits[args[0]] = args[1]
        return "", True

    def _cmd_get_default_device_pinned_mem_limit(self, args):
        if len(args) != 1:
            return "", True
        return self.pinned_mem_limits.get(args[0], "0") + "\n", True

    def _add_server_processes(self, pid):
        """An MPS server owns the CUDA context, so nvidia-smi lists it as the compute
        process ("C") on each GPU it uses (MPS guide, nvidia-cuda-mps-server)."""
        try:
            with state_file.editing(self.state_path) as state:
                for index in visible_gpus(state, self.environ):
                    state["processes"].append({
                        "gpu": index, "pid": pid, "name": SERVER_NAME, "type": "C",
                        "used_memory_mib": SERVER_MEMORY_MIB, "gpu_instance_id": None, "compute_instance_id": None,
                    })
        except (OSError, ValueError):
            pass

    def _drop_servers(self, pids):
        self.servers = [s for s in self.servers if s["pid"] not in pids]
        if not pids:
            return
        try:
            with state_file.editing(self.state_path) as state:
                state["processes"] = [p for p in state["processes"]
                                      if not (p["pid"] in pids and p["name"] == SERVER_NAME)]
        except (OSError, ValueError):
            pass
