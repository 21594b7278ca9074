# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sysctl.d files: parsing, and which value wins at boot.

systemd-sysctl reads ``*.conf`` from SYSCTL_DIRS at boot. A file name found in
an earlier directory masks the same name in later ones (a link to /dev/null
disables it); the surviving files are applied in lexical order of their names,
and a later assignment of a key overrides an earlier one. /etc/sysctl.conf is
read by systemd-sysctl only through a sysctl.d entry (Debian's procps and EL's
systemd ship ``/etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf``); procps'
``sysctl --system`` applies the same files in the same order and then
/etc/sysctl.conf once more, last. Glob keys (``net.ipv4.conf.*.rp_filter``)
never override a key that some file sets explicitly, so they cannot defeat ours.

The kernel keeps only one of vm.dirty_bytes and vm.dirty_ratio (and of
vm.dirty_background_bytes and vm.dirty_background_ratio): writing one zeroes its
partner, so a file applied after ours that sets the partner defeats our key too.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
from collections import namedtuple

from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import read_text
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import managed_header
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import config_files

SYSCTL_DIRS = (
    "/etc/sysctl.d",
    "/run/sysctl.d",
    "/usr/local/lib/sysctl.d",
    "/usr/lib/sysctl.d",
    "/lib/sysctl.d",
)
SYSCTL_CONF = "/etc/sysctl.conf"
GLOB_CHARS = "*?["
SYSTEMD = "systemd-sysctl"
PROCPS = "sysctl --system"

# One ``key = value`` line; key is canonical (dotted), value whitespace-normalized.
Assignment = namedtuple("Assignment", "key value path line")
# A value from another file that beats ours at boot. other_key is the key that
# file sets: key itself, or its partner in PAIRED_KEYS, whose write zeroes key.
Conflict = namedtuple("Conflict", "key wanted value path line applied_by other_key")

# mm/page-writeback.c: writing either key of a pair zeroes the other.
PAIRED_KEYS = {
    "vm.dirty_bytes": "vm.dirty_ratio",
    "vm.dirty_ratio": "vm.dirty_bytes",
    "vm.dirty_background_bytes": "vm.dirty_background_ratio",
    "vm.dirty_background_ratio": "vm.dirty_background_bytes",
}
# dirty_ratio_handler and dirty_bytes_handler zero the partner only when the value
# changes; ours has already zeroed it, so a later write of 0 leaves ours alone.
# The background handlers zero the partner on every write.
ZEROES_ONLY_ON_CHANGE = ("vm.dirty_bytes", "vm.dirty_ratio")

_SWAP_SEPARATORS = {ord("."): "/", ord("/"): "."}


def proc_path(key):
    """Path of key below /proc/sys, as systemd-sysctl resolves it.

    If the first separator is a dot, dots and slashes are interchanged; if it is
    a slash, the key already is a path: ``net.ipv4.conf.eth0/100.rp_filter`` and
    ``net/ipv4/conf/eth0.100/rp_filter`` both give ``net/ipv4/conf/eth0.100/rp_filter``.
    """
    key = key.strip().lstrip("/")
    for char in key:
        if char == ".":
            return key.translate(_SWAP_SEPARATORS)
        if char == "/":
            return key
    return key


def canonical_key(key):
    """The dotted form ``sysctl -a`` prints, for comparing keys written either way."""
    return proc_path(key).translate(_SWAP_SEPARATORS)


def is_glob(key):
    return any(char in key for char in GLOB_CHARS)


def valid_key(key):
    """True for a plain key this collection may write: no globs, no path tricks."""
    path = proc_path(key)
    parts = path.split("/")
    return len(parts) >= 2 and not is_glob(key) and all(part not in ("", ".", "..") for part in parts)


def normalize_value(value):
    """Whitespace-insensitive form: the kernel prints multi-value keys tab-separated."""
    return " ".join(str(value).split())


def parse(text, path=None):
    """Explicit assignments in a sysctl.d file, in file order.

    Comments (``#``, ``;``), blank lines, glob keys and ``-pattern`` exclusions
    are skipped; a leading ``-`` (ignore write errors) is dropped from the key.
    """
    found = []
    for number, raw in enumerate((text or "").splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#;" or "=" not in line:
            continue
        key, dummy, value = line.partition("=")
        key = key.strip()
        if key.startswith("-"):
            key = key[1:].strip()
        if not key or is_glob(key):
            continue
        found.append(Assignment(canonical_key(key), normalize_value(value), path, number))
    return found


def merge_settings(base, overrides):
    """base overridden by overrides, key by key, as systemd-sysctl would read them.

    Keys come out canonical (``vm/swappiness`` -> ``vm.swappiness``), so two
    spellings of one key are one key and the override wins; a null value
    (in either) leaves the key unmanaged and drops it.
    """
    merged = {}
    for settings in (base or {}, overrides or {}):
        for key, value in settings.items():
            merged[canonical_key(str(key))] = value
    return dict((key, value) for key, value in merged.items() if value is not None)


PRECEDENCE_NOTE = (
    "# Files named after this one in /etc/sysctl.d, /run/sysctl.d, /usr/local/lib/sysctl.d",
    "# or /usr/lib/sysctl.d, and /etc/sysctl.conf, override it; the module reports them.",
)


def _comment(text):
    return ["# %s" % line.strip() if line.strip() else "#" for line in text.strip().splitlines()]


def render(settings, notes=None, description=None):
    """The sysctl.d file for settings (canonical key -> value text).

    A managed-by header and the description, then each key in sorted order,
    with its note, when it has one, as a comment above it.
    """
    notes = dict((canonical_key(key), note) for key, note in (notes or {}).items() if note)
    lines = [managed_header("sysctl_settings")] + (_comment(description) if description else []) + list(PRECEDENCE_NOTE)
    for key in sorted(settings):
        lines.append("")
        if key in notes:
            lines.extend(_comment(str(notes[key])))
        lines.append("%s = %s" % (key, settings[key]))
    return "\n".join(lines) + "\n"


def boot_files(directories=SYSCTL_DIRS):
    """The sysctl.d files systemd-sysctl applies, in order: list of (name, path).

    Hidden files, non-``.conf`` names and directories are skipped; a name seen in an
    earlier directory hides it in later ones, and a masked name drops out entirely.
    """
    return config_files(directories)


def masked_by(own_path, directories=SYSCTL_DIRS):
    """Why own_path would not be read at boot, or None.

    It is hidden by the same name in an earlier directory, or it does not sit in
    any of the directories.
    """
    directories = [os.path.normpath(directory) for directory in directories]
    own_dir = os.path.dirname(os.path.normpath(own_path))
    if own_dir not in directories:
        return "%s is not in a sysctl.d directory (%s)" % (own_path, ", ".join(directories))
    name = os.path.basename(own_path)
    for directory in directories[:directories.index(own_dir)]:
        other = os.path.join(directory, name)
        if os.path.lexists(other):
            return "%s hides %s: a file of the same name in an earlier sysctl.d directory wins" % (other, own_path)
    return None


def application_orders(own_path, own_content, directories=SYSCTL_DIRS, sysctl_conf=SYSCTL_CONF, read=read_text):
    """The files each boot-time tool applies, with our file as it will be written.

    Returns {tool: [(path, text), ...]} for systemd-sysctl and procps.
    """
    own_name = os.path.basename(own_path)
    files = [(name, path) for name, path in boot_files(directories) if name != own_name]
    if masked_by(own_path, directories) is None:
        files.append((own_name, own_path))
    files.sort()
    systemd = [(path, own_content if path == own_path else read(path)) for dummy, path in files]
    procps = list(systemd)
    if os.path.isfile(sysctl_conf):
        procps.append((sysctl_conf, read(sysctl_conf)))
    return {SYSTEMD: systemd, PROCPS: procps}


def _last_assignments(ordered):
    """Canonical key -> (position in the order, Assignment) of its last write."""
    winners = {}
    for position, (path, text) in enumerate(ordered):
        for assignment in parse(text, path):
            winners[assignment.key] = ((position, assignment.line), assignment)
    return winners


def _zeroing_partner(key, winners, own_path):
    """The partner's write, from another file, that comes after key's last write and zeroes it; or None."""
    partner = PAIRED_KEYS.get(key)
    if partner not in winners or key not in winners:
        return None
    partner_at, partner_write = winners[partner]
    key_at = winners[key][0]
    if partner_write.path == own_path or partner_at < key_at:
        return None
    if key in ZEROES_ONLY_ON_CHANGE and partner_write.value == "0":
        return None
    return partner_write


def _source(path):
    real = os.path.realpath(path)
    return path if real == path else "%s -> %s" % (path, real)


def boot_conflicts(wanted, own_path, own_content, directories=SYSCTL_DIRS, sysctl_conf=SYSCTL_CONF, read=read_text):
    """Values from other files that would override ours at boot.

    wanted maps canonical keys to normalized values. A key is in conflict when the
    last assignment systemd-sysctl or ``sysctl --system`` applies comes from
    another file with a different value, or when another file sets its partner
    (PAIRED_KEYS) after that, which zeroes it. One Conflict per winning line; when
    both tools end on the same line (a linked /etc/sysctl.conf), applied_by names both.
    """
    orders = application_orders(own_path, own_content, directories, sysctl_conf, read)
    found = {}
    for tool in (SYSTEMD, PROCPS):
        winners = _last_assignments(orders[tool])
        for key, value in wanted.items():
            winner = winners.get(key, (None, None))[1]
            if winner is None:
                continue
            if winner.path != own_path and winner.value != value:
                culprit = winner
            else:
                culprit = _zeroing_partner(key, winners, own_path)
            if culprit is None:
                continue
            identity = (key, os.path.realpath(culprit.path), culprit.line)
            if identity in found:
                found[identity] = found[identity]._replace(applied_by=found[identity].applied_by + " and " + tool)
            else:
                found[identity] = Conflict(key, value, culprit.value, culprit.path, culprit.line, tool, culprit.key)
    return list(found.values())


def describe(conflict, own_path):
    """One sentence an operator can act on."""
    if conflict.other_key != conflict.key:
        text = ("%s: %s line %s sets %s = %s after %s, and the kernel then zeroes %s (wanted %s) at boot "
                "(applied by %s); set only one of the pair" % (
                    conflict.key, _source(conflict.path), conflict.line, conflict.other_key, conflict.value, own_path,
                    conflict.key, conflict.wanted, conflict.applied_by))
    else:
        text = "%s: %s line %s sets %s, which overrides %s from %s at boot (applied by %s)" % (
            conflict.key, _source(conflict.path), conflict.line, conflict.value, conflict.wanted, own_path, conflict.applied_by)
    if conflict.applied_by == PROCPS:
        text += "; systemd-sysctl skips that file, but any 'sysctl --system' or 'sysctl -p' run applies it last"
    return text
