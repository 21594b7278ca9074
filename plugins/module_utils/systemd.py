# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Small systemd helpers for modules that converge unit files themselves.

Unit existence is read from the unit directories instead of asking systemctl,
which keeps a no-op run free of extra processes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpuops.hardening.plugins.module_utils.commands import CommandTimeout, run, run_outcome, run_together

UNIT_DIRS = (
    "/etc/systemd/system",
    "/run/systemd/system",
    "/usr/local/lib/systemd/system",
    "/usr/lib/systemd/system",
    "/lib/systemd/system",
)

# Jobs that wait for a unit's own processes: when one times out, the unit is the first
# suspect, not systemd, so its failure tells what systemd and the journal know of it.
UNIT_JOB_VERBS = ("start", "stop", "restart", "try-restart", "reload", "reload-or-restart")
UNIT_STATE_PROPERTIES = ("ActiveState", "SubState", "MainPID")
JOURNAL_LINES = 10
# The reads that explain a timed-out job get a short limit of their own: the job's is spent.
DIAGNOSIS_TIMEOUT = 10


def is_booted(root="/"):
    """True when systemd is the running init (as sd_booted() decides)."""
    return os.path.isdir(os.path.join(root, "run/systemd/system"))


def unit_file_exists(unit, unit_dirs=UNIT_DIRS):
    """True when a unit file (or a mask) named unit exists in any unit directory."""
    return any(os.path.lexists(os.path.join(directory, unit)) for directory in unit_dirs)


def is_masked(path):
    """A link to /dev/null (or /dev/null itself) disables a name, as systemd does."""
    return os.path.realpath(path) == "/dev/null"


def find_unit(unit, root="/", unit_dirs=UNIT_DIRS):
    """(mask_path, unit_path) of the unit systemd would load, host paths below root.

    A mask (a link to /dev/null) in a directory earlier in the search path hides
    the packaged file; unit_path is the file systemd would use once the mask goes.
    Either is None when there is none.
    """
    mask_path = None
    for directory in unit_dirs:
        path = os.path.join(root, directory.lstrip("/"), unit)
        if not os.path.lexists(path):
            continue
        if is_masked(path):
            mask_path = mask_path or directory.rstrip("/") + "/" + unit
            continue
        return mask_path, directory.rstrip("/") + "/" + unit
    return mask_path, None


def config_files(directories, suffix=".conf"):
    """Files of a systemd-style ``.d`` configuration, in the order they apply:
    a list of (name, path), sorted by name.

    ``directories`` come highest priority first (``/etc`` before ``/run`` before
    ``/usr/lib``): a name in an earlier directory hides the same name in later ones.
    Hidden names, other suffixes and directories are skipped, and a name masked
    with a link to /dev/null drops out.
    """
    chosen = {}
    for directory in directories:
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in names:
            if name in chosen or name.startswith(".") or not name.endswith(suffix):
                continue
            path = os.path.join(directory, name)
            if not os.path.isdir(path):
                chosen[name] = path
    return [(name, chosen[name]) for name in sorted(chosen) if not is_masked(chosen[name])]


def dropin_files(directories, suffix=".conf"):
    """Drop-in paths in the order systemd applies them (see config_files)."""
    return [path for dummy, path in config_files(directories, suffix)]


def parse_ini_sections(text):
    """Sections of a systemd-style INI file: list of (section, {key: value}), in file order.

    Comments (``#``, ``;``) and blank lines are skipped; a repeated key keeps its last value.
    """
    sections = []
    current = None
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = (line[1:-1].strip(), {})
            sections.append(current)
        elif current is not None and "=" in line:
            key, dummy, value = line.partition("=")
            current[1][key.strip()] = value.strip()
    return sections


def last_setting(text, section, key):
    """The last value of key in [section] of a unit-style file, or None.

    An empty assignment (``Key=``) resets to the built-in default and is returned as "".
    """
    value = None
    for name, settings in parse_ini_sections(text):
        if name == section and key in settings:
            value = settings[key]
    return value


def parse_show(text):
    """``systemctl show`` output (blank-line separated blocks of Key=Value) -> list of dicts."""
    blocks = []
    current = {}
    for line in text.splitlines():
        if not line.strip():
            if current:
                blocks.append(current)
                current = {}
            continue
        key, dummy, value = line.partition("=")
        current[key] = value
    if current:
        blocks.append(current)
    return blocks


def _read_failure(name, outcome):
    """Why a best-effort read (a run_together() outcome) told nothing, or None when it answered."""
    if isinstance(outcome, CommandTimeout):
        return "%s did not answer within %s seconds" % (name, DIAGNOSIS_TIMEOUT)
    rc, out, err = outcome
    if rc != 0:
        return "%s failed with exit code %s: %s" % (name, rc, (err or out).strip() or "no output")
    return None


def _unit_state(unit, outcome):
    """'UNIT is deactivating (stop-sigterm), main pid 4242' from the outcome of
    systemctl show --property=ActiveState,SubState,MainPID UNIT."""
    failure = _read_failure("systemctl show", outcome)
    if failure:
        return "the state of %s is unknown (%s)" % (unit, failure)
    shown = (parse_show(outcome[1]) or [{}])[0]
    main_pid = shown.get("MainPID", "0")
    return "%s is %s (%s), main pid %s" % (
        unit, shown.get("ActiveState") or "?", shown.get("SubState") or "?", "none" if main_pid in ("", "0") else main_pid)


def _journal_tail(outcome):
    """The unit's last journal lines from the outcome of journalctl -u UNIT, or why there are none."""
    failure = _read_failure("journalctl", outcome)
    if failure:
        return "its journal could not be read (%s)" % failure
    lines = outcome[1].strip()
    return "its last journal lines:\n%s" % lines if lines else "its journal is empty"


def journal_tail(module, unit):
    """A unit's last journal lines for a failure message, or why there are none (a best-effort read, with the
    diagnosis reads' short limit)."""
    journalctl = module.get_bin_path("journalctl")
    if not journalctl:
        return "no journalctl to read its journal"
    return _journal_tail(run_outcome(module, [journalctl, "-u", unit, "-n", str(JOURNAL_LINES), "--no-pager"],
                                     timeout=DIAGNOSIS_TIMEOUT))


class Systemctl(object):
    """systemctl calls with the module's timeout and check mode."""

    def __init__(self, module, timeout=60):
        self.module = module
        self.timeout = timeout
        self.binary = module.get_bin_path("systemctl")

    def _call(self, *args):
        if not self.binary:
            self.module.fail_json(msg="systemctl not found; this module needs systemd")
        try:
            return run(self.module, [self.binary] + list(args), timeout=self.timeout)
        except CommandTimeout as error:
            # A hung call must end the task with a message, not a traceback.
            self.module.fail_json(msg="%s; %s" % (error, self._what_is_known(args)), cmd=[self.binary] + list(args))

    def _what_is_known(self, args):
        """Of a timed-out call: for a unit job, the unit's state, main pid and last journal
        lines (best effort, each read with its own short limit); for any other call, that
        systemd did not answer it."""
        if len(args) != 2 or args[0] not in UNIT_JOB_VERBS:
            return "systemd or D-Bus is not answering"
        unit = args[1]
        journalctl = self.module.get_bin_path("journalctl")
        reads = [[self.binary, "show", "--property=" + ",".join(UNIT_STATE_PROPERTIES), unit]]
        if journalctl:
            reads.append([journalctl, "-u", unit, "-n", str(JOURNAL_LINES), "--no-pager"])
        outcomes = run_together(self.module, reads, timeout=DIAGNOSIS_TIMEOUT)
        journal = _journal_tail(outcomes[1]) if journalctl else "no journalctl to read its journal"
        return "%s; %s" % (_unit_state(unit, outcomes[0]), journal)

    def is_enabled(self, unit):
        rc, out, dummy = self._call("is-enabled", unit)
        return rc == 0 and out.strip() in ("enabled", "enabled-runtime", "static", "alias")

    def enable(self, unit):
        """Enable unit; returns True when that changed anything."""
        return self._set_enabled(unit, True)

    def disable(self, unit):
        """Disable unit; returns True when that changed anything."""
        return self._set_enabled(unit, False)

    def _set_enabled(self, unit, wanted):
        if self.is_enabled(unit) == wanted:
            return False
        verb = "enable" if wanted else "disable"
        if not self.module.check_mode:
            rc, out, err = self._call(verb, unit)
            if rc != 0:
                self.module.fail_json(msg="systemctl %s %s failed: %s" % (verb, unit, (err or out).strip()))
        return True

    def start(self, unit, restart=False):
        """Start unit, or restart it so that changed unit files take effect (not in check mode)."""
        verb = "restart" if restart else "start"
        if self.module.check_mode:
            return
        rc, out, err = self._call(verb, unit)
        if rc != 0:
            self.module.fail_json(msg="systemctl %s %s failed: %s" % (verb, unit, (err or out).strip()))

    def try_verb(self, verb, unit):
        """systemctl VERB unit (start, stop, ...), returning its error text or None: for callers
        that must go on with other units when one fails. Nothing is run in check mode."""
        if self.module.check_mode:
            return None
        rc, out, err = self._call(verb, unit)
        return None if rc == 0 else ((err or out).strip() or "exit code %s" % rc)

    def stop(self, unit):
        """Stop unit (not in check mode)."""
        if self.module.check_mode:
            return
        rc, out, err = self._call("stop", unit)
        if rc != 0:
            self.module.fail_json(msg="systemctl stop %s failed: %s" % (unit, (err or out).strip()))

    def show(self, units, properties):
        """Properties of units (of the manager itself when units is empty), one dict each.

        Read-only, so it also runs in check mode.
        """
        rc, out, err = self._call("show", "--property=" + ",".join(properties), *units)
        if rc != 0:
            self.module.fail_json(msg="systemctl show failed: %s" % (err or out).strip())
        return parse_show(out)

    def daemon_reload(self):
        if self.module.check_mode or not is_booted():
            return
        rc, out, err = self._call("daemon-reload")
        if rc != 0:
            self.module.fail_json(msg="systemctl daemon-reload failed: %s" % (err or out).strip())
