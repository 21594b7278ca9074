# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-cuda-mps-control: the control daemon (-d in the background, -f in the
foreground, optionally -multiuser-server) and the client that sends it commands read
from stdin (mps_commands.py answers them).

The daemon listens on the unix socket $CUDA_MPS_PIPE_DIRECTORY/control (default
/tmp/nvidia-mps), writes its pid to nvidia-cuda-mps-control.pid there and logs to
$CUDA_MPS_LOG_DIRECTORY/control.log (default /var/log/nvidia-mps), as the real one
does (MPS guide, environment variables and logging appendices).
"""

import os
import socket
import struct

from . import catalog, daemon, runtime, state as state_file, texts
from .mps_commands import CLIENT_MARKER, Controller

DEFAULT_PIPE_DIRECTORY = "/tmp/nvidia-mps"
DEFAULT_LOG_DIRECTORY = "/var/log/nvidia-mps"
USAGE = "Usage: nvidia-cuda-mps-control [-d | -f] [-multiuser-server]\n"
PID_FILE = "nvidia-cuda-mps-control.pid"
MULTIUSER = "-multiuser-server"
# First compute capability of Volta, the architecture the multi-user server needs.
VOLTA = (7, 0)
SOCKET_MODE = 0o777
# How often an idle daemon looks for clients that ended and for a stop signal, and
# how long it waits for one request.
IDLE_CHECK_SECONDS = 0.5
REQUEST_TIMEOUT = 5.0


def directories(environ):
    pipe_dir = environ.get("CUDA_MPS_PIPE_DIRECTORY") or DEFAULT_PIPE_DIRECTORY
    log_dir = environ.get("CUDA_MPS_LOG_DIRECTORY") or DEFAULT_LOG_DIRECTORY
    return pipe_dir, log_dir


def request(pipe_dir, text):
    """(reply, None) from the daemon of pipe_dir, or (None, OSError) when it cannot be
    reached: no daemon, or no permission on the pipe directory or the socket."""
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.connect(os.path.join(pipe_dir, "control"))
    except OSError as error:
        client.close()
        return None, error
    with client:
        client.sendall(text.encode("utf-8") + b"\n")
        client.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            chunk = client.recv(4096)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks).decode("utf-8"), None


def _ask(pipe_dir, command):
    """The daemon's answer to one control command, or None when no daemon listens.
    A command never carries the marker of a CUDA client's request."""
    return request(pipe_dir, command.replace(CLIENT_MARKER, ""))[0]


def _peer(connection):
    """(pid, uid) of the process at the other end of a unix socket (SO_PEERCRED)."""
    creds = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _gid = struct.unpack("3i", creds)
    return pid, uid


def _handle(controller, connection):
    """Read one request and answer it; (keep running)."""
    connection.settimeout(REQUEST_TIMEOUT)
    request_bytes = b""
    while True:
        chunk = connection.recv(4096)
        if not chunk:
            break
        request_bytes += chunk
    text = request_bytes.decode("utf-8", "replace")
    if text.startswith(CLIENT_MARKER):
        reply, running = controller.client_request(text[len(CLIENT_MARKER):], *_peer(connection)), True
    else:
        controller.log("Accepting connection...")
        reply, running = controller.answer(text)
    connection.sendall(reply.encode("utf-8"))
    return running


def _record(state_path, entry, add):
    """Note the daemon in the state file (best effort: MPS runs without GPU state too)."""
    try:
        with state_file.editing(state_path) as state:
            others = [d for d in state["daemons"]["mps"] if d["pid"] != entry["pid"]]
            state["daemons"]["mps"] = others + ([entry] if add else [])
    except (OSError, ValueError):
        pass


def _serve(report, state_path, environ, echo, multiuser):
    """Serve until quit or a stop signal. The real daemon ends on quit (MPS guide,
    "Starting and Stopping MPS on Linux": echo quit | nvidia-cuda-mps-control), and
    systemd sends SIGTERM to what is left after ExecStop (systemd.kill(5)); that the
    real daemon exits on SIGTERM too is an assumption, no NVIDIA source says it."""
    # Noted from the start: a signal during the setup skips the loop, not the cleanup.
    stop_request = daemon.StopRequest()
    pipe_dir, log_dir = directories(environ)
    runtime.set_process_name("nvidia-cuda-mps")
    runtime.mkdirs(pipe_dir)
    runtime.mkdirs(log_dir)
    socket_path = os.path.join(pipe_dir, "control")
    if os.path.exists(socket_path):
        os.unlink(socket_path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    # Connecting to a unix socket needs write permission on it (unix(7)), so the
    # socket is open to every uid and the pipe directory's mode decides who may reach
    # the daemon. Assumption: no source shows the real socket's exact mode.
    os.chmod(socket_path, SOCKET_MODE)
    listener.listen(16)
    listener.settimeout(IDLE_CHECK_SECONDS)
    pid_path = os.path.join(pipe_dir, PID_FILE)
    with open(pid_path, "w", encoding="utf-8") as handle:
        handle.write("%d\n" % os.getpid())
    controller = Controller(pipe_dir, log_dir, environ, state_path, echo, multiuser)
    controller.log("Starting control daemon using socket %s" % socket_path)
    controller.log("To connect CUDA applications to this daemon, set env CUDA_MPS_PIPE_DIRECTORY=%s" % pipe_dir)
    entry = {"pid": os.getpid(), "pipe_dir": pipe_dir, "log_dir": log_dir, "multiuser": multiuser}
    _record(state_path, entry, True)
    report(None)
    running = True
    # The daemon stops after this loop, once: a stop signal is only noted, as it may
    # interrupt the loop while the loop holds the state file's lock.
    while running and not stop_request.requested:
        try:
            connection = listener.accept()[0]
        except socket.timeout:
            # Clients that ended without saying so leave the process table.
            controller.forget_ended_clients()
            continue
        with connection:
            try:
                running = _handle(controller, connection)
            except OSError:
                pass
    listener.close()
    controller.shutdown()
    _record(state_path, entry, False)
    for path in (socket_path, pid_path):
        if os.path.exists(path):
            os.unlink(path)


def _multiuser_refusal(state_path):
    """-multiuser-server needs root (MPS guide: "start the control daemon under
    superuser") and Volta or newer GPUs. Assumption: no source shows the real
    refusal texts; these are the emulator's."""
    if runtime.effective_uid() != 0:
        return texts.MPS_MULTIUSER_NEEDS_ROOT
    try:
        state = state_file.load(state_path)
    except (OSError, ValueError):
        return None
    for gpu in state["gpus"]:
        major, _dot, minor = catalog.model(gpu["model"])["compute_cap"].partition(".")
        if (int(major), int(minor or 0)) < VOLTA:
            return texts.MPS_MULTIUSER_NOT_SUPPORTED
    return None


def main(argv, state_path, environ, stdin, stdout, stderr):
    pipe_dir = directories(environ)[0]
    # The real tool spells its long foreground option "--forground".
    argv = [{"--daemon": "-d", "--forground": "-f", "--foreground": "-f"}.get(a, a) for a in argv]
    if argv in (["-h"], ["--help"]):
        stdout.write(USAGE)
        return 0
    multiuser = MULTIUSER in argv
    mode = [a for a in argv if a != MULTIUSER]
    if mode in (["-d"], ["-f"]) and argv.count(MULTIUSER) <= 1:
        return _start(mode[0], multiuser, state_path, environ, stdout, stderr)
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


def _start(mode, multiuser, state_path, environ, stdout, stderr):
    if _ask(directories(environ)[0], "") is not None:
        stderr.write(texts.MPS_ALREADY_RUNNING)
        return 1
    refusal = _multiuser_refusal(state_path) if multiuser else None
    if refusal:
        stderr.write(refusal)
        return 1
    if mode == "-f":
        _serve(lambda error: None, state_path, environ, stdout, multiuser)
        return 0
    ok, message = daemon.detach(lambda report: _serve(report, state_path, environ, None, multiuser))
    if not ok:
        stderr.write(message)
        return 1
    return 0
