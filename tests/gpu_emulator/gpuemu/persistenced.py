# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-persistenced: a real background process. While it runs, nvidia-smi reports
persistence mode Enabled on the GPUs it keeps persistent (all of them by default,
none with --no-persistence-mode); `nvidia-smi -pm` then talks to it."""

import os
import socket

from . import daemon, runtime, state as state_file, texts

PID_FILE = "nvidia-persistenced.pid"
SOCKET = "socket"

VERSION = """
nvidia-persistenced:  version %s

  The NVIDIA Persistence Daemon.

  A tool for maintaining persistent driver state, specifically for use by the NVIDIA Linux driver.

"""
OPTIONS = """nvidia-persistenced [options]

  -v, --version        Print the utility version and exit.
  -h, --help           Print usage information for the command line options and exit.
  -V, --verbose        Controls how much information is printed.
  -u USERNAME, --user=USERNAME
  -g GROUPNAME, --group=GROUPNAME
  --persistence-mode, --no-persistence-mode
  --nvidia-cfg-path=PATH

"""


def parse(argv):
    """({'mode': bool, ...}, None) or (None, message)."""
    options = {"mode": True}
    tokens = list(argv)
    while tokens:
        token = tokens.pop(0)
        name, equals = token.partition("=")[:2]
        if name in ("-v", "--version"):
            options["version"] = True
        elif name in ("-h", "--help"):
            options["help"] = True
        elif name in ("-V", "--verbose"):
            options["verbose"] = True
        elif name == "--persistence-mode":
            options["mode"] = True
        elif name == "--no-persistence-mode":
            options["mode"] = False
        elif name in ("-u", "--user", "-g", "--group", "--nvidia-cfg-path"):
            if not equals:
                if not tokens:
                    return None, "nvidia-persistenced: option %s requires an argument.\n" % name
                tokens.pop(0)
        else:
            return None, texts.PERSISTENCED_BAD_OPTION % token
    return options, None


def _running_pid(run_dir):
    try:
        with open(os.path.join(run_dir, PID_FILE), encoding="utf-8") as handle:
            pid = int(handle.read().strip())
    except (OSError, ValueError):
        return None
    return pid if runtime.process_alive(pid, "nvidia-persistenced") else None


def main(argv, state_path, stdout, stderr):
    options, error = parse(argv)
    if error:
        # The real daemon exits 0 after complaining about its command line.
        stderr.write(error)
        return 0
    state = state_file.load(state_path)
    if options.get("help") or options.get("version"):
        stdout.write(VERSION % state["driver_version"] + (OPTIONS if options.get("help") else ""))
        return 0
    run_dir = state["settings"]["persistenced_run_dir"]
    if _running_pid(run_dir) or runtime.persistenced(state):
        # The real daemon cannot take the PID file lock and says only this.
        stderr.write(texts.PERSISTENCED_FAILED)
        return 1
    ok, message = daemon.detach(lambda report: _serve(report, state_path, run_dir, options["mode"]))
    if not ok:
        stderr.write(message or texts.PERSISTENCED_FAILED)
        return 1
    return 0


def _serve(report, state_path, run_dir, mode):
    runtime.set_process_name("nvidia-persiste")
    runtime.mkdirs(run_dir)
    pid_path = os.path.join(run_dir, PID_FILE)
    socket_path = os.path.join(run_dir, SOCKET)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if os.path.exists(socket_path):
        os.unlink(socket_path)
    listener.bind(socket_path)
    listener.listen(4)
    with open(pid_path, "w", encoding="utf-8") as handle:
        handle.write("%d\n" % os.getpid())
    with state_file.editing(state_path) as state:
        state["daemons"]["persistenced"] = {
            "pid": os.getpid(),
            "persistence_mode": mode,
            "gpus": [mode] * len(state["gpus"]),
            "run_dir": run_dir,
        }

    daemon.serve_until_stopped(report, state_path, "persistenced", [pid_path, socket_path])
