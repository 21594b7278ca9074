# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-cuda-mps-control: the control daemon (-d in the background, -f in the
foreground) and the client that sends it commands read from stdin.

The daemon listens on the unix socket $CUDA_MPS_PIPE_DIRECTORY/control (default
/tmp/nvidia-mps) and logs to $CUDA_MPS_LOG_DIRECTORY/control.log (default
/var/log/nvidia-mps), as the real one does.
"""

import datetime
import os
import socket
import sys

from . import daemon, runtime, state as state_file, texts

DEFAULT_PIPE_DIRECTORY = "/tmp/nvidia-mps"
DEFAULT_LOG_DIRECTORY = "/var/log/nvidia-mps"
USAGE = "Usage: nvidia-cuda-mps-control [-d | -f]\n"


def directories(environ):
    pipe_dir = environ.get("CUDA_MPS_PIPE_DIRECTORY") or DEFAULT_PIPE_DIRECTORY
    log_dir = environ.get("CUDA_MPS_LOG_DIRECTORY") or DEFAULT_LOG_DIRECTORY
    return pipe_dir, log_dir


def _ask(pipe_dir, command):
    """The daemon's answer to one command, or None when no daemon listens."""
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.connect(os.path.join(pipe_dir, "control"))
    except OSError:
        client.close()
        return None
    with client:
        client.sendall(command.encode("utf-8") + b"\n")
        client.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            chunk = client.recv(4096)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks).decode("utf-8")


class Controller(object):
    """The daemon's settings and its answers to control commands."""

    def __init__(self, pipe_dir, log_dir, echo=None):
        self.pipe_dir = pipe_dir
        self.log_path = os.path.join(log_dir, "control.log")
        self.echo = echo
        self.active_thread_percentage = "100.0"
        self.pinned_mem_limits = {}
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
        if command == "quit":
            self.log("Exit")
            return "", False
        if command == "get_server_list":
            return "".join("%d\n" % s["pid"] for s in self.servers), True
        if command == "start_server" and args[:1] == ["-uid"] and len(args) == 2:
            pid = os.getpid() + 1 + len(self.servers)
            self.servers.append({"pid": pid, "uid": int(args[1])})
            self.log("Starting new server %d for user %s" % (pid, args[1]))
            return "", True
        if command == "shutdown_server" and args:
            self.servers = [s for s in self.servers if str(s["pid"]) != args[0]]
            return "", True
        if command == "set_default_active_thread_percentage" and len(args) == 1:
            try:
                value = float(args[0])
            except ValueError:
                value = -1.0
            if not 0 <= value <= 100:
                return "Invalid percentage value\n", True
            self.active_thread_percentage = "%.1f" % value
            return self.active_thread_percentage + "\n", True
        if command == "get_default_active_thread_percentage":
            return self.active_thread_percentage + "\n", True
        if command == "set_default_device_pinned_mem_limit" and len(args) == 2:
            self.pinned_mem_limits[args[0]] = args[1]
            return "", True
        if command == "get_default_device_pinned_mem_limit" and len(args) == 1:
            return self.pinned_mem_limits.get(args[0], "0") + "\n", True
        return "", True


def _record(state_path, entry, add):
    """Note the daemon in the state file (best effort: MPS runs without GPU state too)."""
    try:
        with state_file.editing(state_path) as state:
            others = [d for d in state["daemons"]["mps"] if d["pid"] != entry["pid"]]
            state["daemons"]["mps"] = others + ([entry] if add else [])
    except (OSError, ValueError):
        pass


def _serve(report, state_path, pipe_dir, log_dir, echo):
    runtime.set_process_name("nvidia-cuda-mps")
    runtime.mkdirs(pipe_dir)
    runtime.mkdirs(log_dir)
    socket_path = os.path.join(pipe_dir, "control")
    if os.path.exists(socket_path):
        os.unlink(socket_path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(16)
    controller = Controller(pipe_dir, log_dir, echo)
    controller.log("Starting control daemon using socket %s" % socket_path)
    controller.log("To connect CUDA applications to this daemon, set env CUDA_MPS_PIPE_DIRECTORY=%s" % pipe_dir)
    entry = {"pid": os.getpid(), "pipe_dir": pipe_dir, "log_dir": log_dir}
    _record(state_path, entry, True)

    def stop():
        _record(state_path, entry, False)
        if os.path.exists(socket_path):
            os.unlink(socket_path)
        sys.exit(0)

    daemon.on_stop(stop)
    report(None)
    running = True
    while running:
        connection = listener.accept()[0]
        with connection:
            controller.log("Accepting connection...")
            request = b""
            while True:
                chunk = connection.recv(4096)
                if not chunk:
                    break
                request += chunk
            reply, running = controller.answer(request.decode("utf-8", "replace"))
            connection.sendall(reply.encode("utf-8"))
    listener.close()
    stop()


def main(argv, state_path, environ, stdin, stdout, stderr):
    pipe_dir, log_dir = directories(environ)
    # The real tool spells its long foreground option "--forground".
    argv = [{"--daemon": "-d", "--forground": "-f", "--foreground": "-f"}.get(a, a) for a in argv]
    if argv in (["-h"], ["--help"]):
        stdout.write(USAGE)
        return 0
    if argv in (["-d"], ["-f"]):
        if _ask(pipe_dir, "") is not None:
            stderr.write(texts.MPS_ALREADY_RUNNING)
            return 1
        if argv == ["-f"]:
            try:
                _serve(lambda error: None, state_path, pipe_dir, log_dir, stdout)
            except SystemExit:
                pass
            return 0
        ok, message = daemon.detach(lambda report: _serve(report, state_path, pipe_dir, log_dir, None))
        if not ok:
            stderr.write(message)
            return 1
        return 0
    if argv:
        stderr.write(USAGE)
        return 1
    for line in stdin:
        if not line.strip():
            continue
        reply = _ask(pipe_dir, line.strip())
        if reply is None:
            stderr.write(texts.MPS_NO_DAEMON)
            return 1
        stdout.write(reply)
    return 0
