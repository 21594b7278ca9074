# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The locked-memory (RLIMIT_MEMLOCK) limit, its systemd drop-ins, and what the
running system allows.

One wanted limit, ``unlimited`` or a number of KiB, is written in three
dialects: pam_limits (KiB or ``unlimited``; pam_limits.py), systemd (``infinity``
or bytes with a ``K`` suffix; ``systemctl show`` answers in bytes) and Docker's
``default-ulimits`` (bytes, ``-1`` for unlimited; docker_daemon_json.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import managed_header

UNLIMITED = "unlimited"
# KiB * 1024 must fit Docker's signed 64-bit byte count.
MAX_KIB = (2 ** 63 - 1) // 1024
CAP_SYS_RESOURCE = 24

_DIGITS = re.compile(r"^[1-9][0-9]*$")


# --- the wanted limit ------------------------------------------------------

def parse_limit(value):
    """``unlimited`` or a positive KiB count (int or digit string) -> "unlimited" or int.

    Raises ValueError naming what is allowed.
    """
    if isinstance(value, bool):
        raise ValueError("got %r; allowed: unlimited or a positive integer (KiB)" % (value,))
    text = str(value).strip()
    if text == UNLIMITED:
        return UNLIMITED
    if not _DIGITS.match(text) or int(text) > MAX_KIB:
        raise ValueError("got %r; allowed: unlimited or a positive integer (KiB) up to %d" % (value, MAX_KIB))
    return int(text)


def limit_bytes(limit):
    """Bytes for a parsed limit; None stands for unlimited."""
    return None if limit == UNLIMITED else limit * 1024


def systemd_value(limit):
    """The value for LimitMEMLOCK= / DefaultLimitMEMLOCK=."""
    return "infinity" if limit == UNLIMITED else "%dK" % limit


def from_systemd_bytes(text):
    """``systemctl show`` limit (``infinity`` or bytes) -> "unlimited" or KiB; None when unknown."""
    text = (text or "").strip()
    if text == "infinity":
        return UNLIMITED
    if text.isdigit():
        return int(text) // 1024
    return None


def covers(have, wanted):
    """True when limit ``have`` is at least ``wanted`` (both parsed)."""
    if have == UNLIMITED:
        return True
    if wanted == UNLIMITED or have is None:
        return False
    return have >= wanted


# --- systemd drop-ins -------------------------------------------------------

def render_manager_dropin(limit):
    """The system.conf.d drop-in that makes limit every service's default."""
    return "\n".join([
        managed_header("memlock"),
        "# Default locked-memory limit for every service systemd starts; read at",
        "# daemon-reexec, applied to each service when it (re)starts.",
        "[Manager]",
        "DefaultLimitMEMLOCK=%s" % systemd_value(limit),
    ]) + "\n"


def render_unit_dropin(limit):
    """A unit's drop-in that gives its service the limit."""
    return "\n".join([
        managed_header("memlock"),
        "# Locked-memory limit for this service and what it starts (containers, jobs);",
        "# applied when the service restarts.",
        "[Service]",
        "LimitMEMLOCK=%s" % systemd_value(limit),
    ]) + "\n"


# --- what the running system allows ----------------------------------------

def proc_memlock_hard(limits_text):
    """Hard ``Max locked memory`` from /proc/PID/limits -> "unlimited" or KiB; None if absent."""
    for line in (limits_text or "").splitlines():
        if line.startswith("Max locked memory"):
            fields = line[len("Max locked memory"):].split()
            if len(fields) >= 2:
                return UNLIMITED if fields[1] == "unlimited" else int(fields[1]) // 1024
    return None


def has_capability(status_text, bit):
    """True when /proc/PID/status's effective capability set has bit."""
    for line in (status_text or "").splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) >> bit & 1)
    return False


def process_start_epoch(stat_text, boot_epoch, clock_ticks):
    """Start time (seconds since the epoch) of a process from /proc/PID/stat."""
    # The command name may hold spaces and parentheses; fields resume after the last ')'.
    fields = stat_text.rsplit(")", 1)[1].split()
    return boot_epoch + int(fields[19]) / float(clock_ticks)


def boot_epoch(stat_text):
    """``btime`` from /proc/stat."""
    for line in (stat_text or "").splitlines():
        if line.startswith("btime "):
            return int(line.split()[1])
    return None
