# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The MPS control daemon's settings and its answers to the control commands of the
MPS guide ("Multi-Process Service", nvidia-cuda-mps-control commands)."""

import datetime
import os
import signal
import time

from . import runtime, state as state_file

SERVER_NAME = "nvidia-cuda-mps-server"
# What one server's context takes on each GPU (order of magnitude of a real one).
SERVER_MEMORY_MIB = 30
# The emulated CUDA application (cuda_app.py) and what its context takes on each GPU
# (an assumption, like the server's).
CLIENT_NAME = "gpuemu-cuda-app"
CLIENT_MEMORY_MIB = 64
# Starts a CUDA client's request: the control command path strips it, so users of
# nvidia-cuda-mps-control cannot send one.
CLIENT_MARKER = "\0"
QUEUED = "queued"


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


def _spawn_server(uid):
    """A real process stands for the server, so its pid is unique and ps shows it; it
    ends when stopped or when its control daemon is gone."""
    pid = os.fork()
    if pid:
        return pid
    try:
        # Keep no copy of the daemon's sockets: a client waits for its reply's end.
        os.closerange(3, 1024)
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        runtime.set_process_name(SERVER_NAME)
        if os.geteuid() == 0 and uid:
            # The man page: the server runs with the user id of its clients.
            os.setuid(uid)
        daemon = os.getppid()
        while os.getppid() == daemon:
            time.sleep(1)
    finally:
        os._exit(0)  # pylint: disable=protected-access


def _stop_server(pid):
    try:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
    except OSError:
        pass


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
        self.forget_ended_clients()
        return "".join("%d\n" % s["pid"] for s in self.servers), True

    def _cmd_start_server(self, args):
        if args[:1] != ["-uid"] or len(args) != 2 or not args[1].isdigit():
            return "", True
        self._start_server(int(args[1]))
        return "", True

    def _cmd_get_client_list(self, args):
        """The pids of the clients of one server (MPS guide, get_client_list <PID>).
        Assumption: one pid a line, as get_server_list prints, and nothing for a pid
        that is no server."""
        self.forget_ended_clients()
        server = self._server(args[0]) if len(args) == 1 else None
        return "".join("%d\n" % pid for pid in server["clients"]) if server else "", True

    def _cmd_shutdown_server(self, args):
        server = self._server(args[0]) if args else None
        if server:
            self._drop_servers([server["pid"]])
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

    def client_request(self, text, pid, uid):
        """A CUDA client's request, from the process pid of user uid (the socket's
        peer). "attach [UID]" asks for a server and answers "server PID GPU,GPU" or
        "queued"; "detach" ends the client. A root client may name another uid
        (tests play users with GPUEMU_EUID)."""
        words = text.split()
        self.forget_ended_clients()
        if words[:1] == ["detach"]:
            self._end_clients([pid])
            return ""
        if words[:1] != ["attach"]:
            return ""
        if uid == 0 and len(words) == 2 and words[1].isdigit():
            uid = int(words[1])
        server = self._server_for(uid)
        if server is None:
            return QUEUED + "\n"
        server["clients"].append(pid)
        self.log("New client %d for server %d (user %d)" % (pid, server["pid"], uid))
        self._add_rows(pid, server["gpus"], CLIENT_NAME, "M+C", CLIENT_MEMORY_MIB)
        return "server %d %s\n" % (server["pid"], ",".join(str(gpu) for gpu in server["gpus"]))

    def _server_for(self, uid):
        """The server a client of uid connects to, started when needed; None while the
        client waits. Man page: a server of another uid is asked to shut down as soon
        as its clients are done, then one for the new uid starts. A multi-user daemon
        serves every uid from its one root server (MPS guide)."""
        uid = 0 if self.multiuser else uid
        for server in self.servers:
            if server["uid"] == uid and not server["draining"]:
                return server
        others = [server for server in self.servers if server["uid"] != uid]
        for server in others:
            server["draining"] = True
        self._drop_servers([server["pid"] for server in others if not server["clients"]])
        if any(server["uid"] != uid for server in self.servers):
            return None
        return self._start_server(uid)

    def forget_ended_clients(self):
        """Clients whose process is gone leave their server (and the GPUs); a draining
        server whose clients are all done shuts down."""
        ended = [pid for server in self.servers for pid in server["clients"] if not runtime.process_alive(pid)]
        self._end_clients(ended)

    def _end_clients(self, pids):
        for server in self.servers:
            server["clients"] = [pid for pid in server["clients"] if pid not in pids]
        if pids:
            self._drop_rows(pids)
        self._drop_servers([server["pid"] for server in self.servers if server["draining"] and not server["clients"]])

    def _server(self, pid_text):
        return next((server for server in self.servers if str(server["pid"]) == pid_text), None)

    def _start_server(self, uid):
        # A multi-user daemon runs one root server for every user (MPS guide).
        uid = 0 if self.multiuser else uid
        pid = _spawn_server(uid)
        try:
            gpus = visible_gpus(state_file.load(self.state_path), self.environ)
        except (OSError, ValueError):
            gpus = []
        server = {"pid": pid, "uid": uid, "gpus": gpus, "clients": [], "draining": False}
        self.servers.append(server)
        self.log("Starting new server %d for user %d" % (pid, uid))
        # An MPS server owns the CUDA context, so nvidia-smi lists it as the compute
        # process ("C") on each GPU it uses (MPS guide, nvidia-cuda-mps-server).
        self._add_rows(pid, gpus, SERVER_NAME, "C", SERVER_MEMORY_MIB)
        return server

    def _drop_servers(self, pids):
        """Stop servers: they and their clients leave the GPUs."""
        gone = [server for server in self.servers if server["pid"] in pids]
        self.servers = [server for server in self.servers if server["pid"] not in pids]
        for server in gone:
            _stop_server(server["pid"])
        if gone:
            self._drop_rows([pid for server in gone for pid in [server["pid"]] + server["clients"]])

    def _add_rows(self, pid, gpus, name, process_type, memory_mib):
        """The daemon writes the rows for its servers and clients: a client of another
        user cannot write the root-owned state (best effort: MPS runs without GPU
        state too)."""
        try:
            with state_file.editing(self.state_path) as state:
                for index in gpus:
                    state["processes"].append({
                        "gpu": index, "pid": pid, "name": name, "type": process_type,
                        "used_memory_mib": memory_mib, "gpu_instance_id": None, "compute_instance_id": None,
                    })
        except (OSError, ValueError):
            pass

    def _drop_rows(self, pids):
        try:
            with state_file.editing(self.state_path) as state:
                state["processes"] = [p for p in state["processes"]
                                      if not (p["pid"] in pids and p["name"] in (SERVER_NAME, CLIENT_NAME))]
        except (OSError, ValueError):
            pass
