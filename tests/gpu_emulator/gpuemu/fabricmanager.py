# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nv-fabricmanager, the Fabric Manager daemon, as its packaged unit runs it
(`nv-fabricmanager -c /usr/share/nvidia/nvswitch/fabricmanager.cfg`, Type=forking).

Its version is the installed package's (the state's fabric_manager.version, set by
install --fabricmanager). At start it checks that version against the loaded driver
and then asks for the NVSwitches; either failure is one log line on stderr (which
journald keeps under systemd) and exit status 1, before it forks. Otherwise it forks
into the background once ready, writes its pid file and starts training the fabric
(fabric.py); SIGTERM stops it. The config file is taken and not read."""

import os

from . import daemon, fabric, runtime, state as state_file, texts

PID_FILE = "nv-fabricmanager.pid"
USAGE = "usage: nv-fabricmanager [-c CONFIG_FILE] [-v|--version] [-h|--help]\n"


def parse(argv):
    """({"config": path or None, "version": bool, "help": bool}, None) or (None, message)."""
    options = {"config": None, "version": False, "help": False}
    tokens = list(argv)
    while tokens:
        token = tokens.pop(0)
        name, equals, inline = token.partition("=")
        if name in ("-c", "--config"):
            if not equals and not tokens:
                return None, USAGE
            options["config"] = inline if equals else tokens.pop(0)
        elif token in ("-v", "--version"):
            options["version"] = True
        elif token in ("-h", "--help"):
            options["help"] = True
        else:
            # An assumption: no source shows how the real daemon answers a bad option.
            return None, "nv-fabricmanager: unknown option %s\n%s" % (token, USAGE)
    return options, None


def installed_version(state):
    """The installed package's version; without one in the state, the driver's."""
    return (state.get("fabric_manager") or {}).get("version") or state["driver_version"]


def refusal(state):
    """The log line that ends a start, or None when the daemon may come up."""
    version = installed_version(state)
    if version != state["driver_version"]:
        return texts.FM_VERSION_MISMATCH % (version, state["driver_version"])
    if not fabric.nvswitch(state):
        return texts.FM_NO_NVSWITCH
    return None


def main(argv, state_path, stdout, stderr):
    options, error = parse(argv)
    if error:
        stderr.write(error)
        return 1
    state = state_file.load(state_path)
    if options["help"]:
        stdout.write(USAGE)
        return 0
    if options["version"]:
        stdout.write(texts.FM_VERSION % installed_version(state))
        return 0
    refused = refusal(state)
    if refused:
        stderr.write(refused)
        return 1
    running = fabric.daemon(state)
    if running:
        # The emulator's own words: no source shows a second instance's failure.
        stderr.write("nv-fabricmanager: an instance already runs (pid %d)\n" % running["pid"])
        return 1
    ok, message = daemon.detach(lambda report: _serve(report, state_path, state["settings"]["fabricmanager_run_dir"]))
    if not ok:
        stderr.write(message or "nv-fabricmanager: failed to start\n")
        return 1
    return 0


def _serve(report, state_path, run_dir):
    runtime.set_process_name("nv-fabricmanage")
    runtime.mkdirs(run_dir)
    pid_path = os.path.join(run_dir, PID_FILE)
    with open(pid_path, "w", encoding="utf-8") as handle:
        handle.write("%d\n" % os.getpid())
    with state_file.editing(state_path) as state:
        state["daemons"][fabric.DAEMON] = {"pid": os.getpid(), "run_dir": run_dir}
        fabric.start_training(state)
        state_file.record(state, "fabricmanager_start", pid=os.getpid())

    daemon.serve_until_stopped(report, state_path, fabric.DAEMON, [pid_path], stop_event="fabricmanager_stop")
