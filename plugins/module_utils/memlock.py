# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure helpers for the locked-memory (RLIMIT_MEMLOCK) limit.

One wanted limit, ``unlimited`` or a number of KiB, is written in three
dialects: pam_limits (KiB or ``unlimited``), systemd (``infinity`` or bytes with
a ``K`` suffix; ``systemctl show`` answers in bytes) and Docker's
``default-ulimits`` (bytes, ``-1`` for unlimited).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re
from collections import OrderedDict

UNLIMITED = "unlimited"
# KiB * 1024 must fit Docker's signed 64-bit byte count.
MAX_KIB = (2 ** 63 - 1) // 1024
CAP_SYS_RESOURCE = 24

_DIGITS = re.compile(r"^[1-9][0-9]*$")


class DaemonJsonError(ValueError):
    """daemon.json cannot be merged safely; the message says why."""


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


def docker_ulimit(limit):
    """Docker's default-ulimits entry for memlock."""
    value = -1 if limit == UNLIMITED else limit * 1024
    return OrderedDict([("Name", "memlock"), ("Hard", value), ("Soft", value)])


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


# --- pam_limits (limits.conf and limits.d) ---------------------------------

def parse_limits(text):
    """memlock entries of a limits.conf-style text: list of (domain, type, value).

    A type of ``-`` sets both soft and hard and is returned as two entries.
    """
    entries = []
    for raw in (text or "").splitlines():
        line = raw.split("#", 1)[0].strip()
        fields = line.split()
        if len(fields) != 4 or fields[2] != "memlock":
            continue
        domain, kind, dummy, value = fields
        kinds = ("soft", "hard") if kind == "-" else (kind,)
        for one in kinds:
            if one in ("soft", "hard"):
                entries.append((domain, one, _pam_value(value)))
    return entries


def _pam_value(value):
    if value in ("unlimited", "infinity", "-1"):
        return UNLIMITED
    if value.isdigit():
        return int(value)
    return value


def effective_login_limits(files, domains):
    """What pam_limits sets for each domain, from files in the order it reads them
    (limits.conf, then limits.d/*.conf sorted by name): the last entry for a
    domain wins. Returns {domain: {"soft": .., "hard": .., "soft_source": path, ...}}.
    Only literal domain matches are considered; user entries beat ``*`` for that user.
    """
    found = OrderedDict((domain, {"soft": None, "hard": None, "soft_source": None, "hard_source": None}) for domain in domains)
    for path, text in files:
        for domain, kind, value in parse_limits(text):
            if domain in found:
                found[domain][kind] = value
                found[domain][kind + "_source"] = path
    return found


def limits_domains(text):
    """The domains a limits file sets memlock for, in order of appearance."""
    seen = []
    for domain, dummy, dummy2 in parse_limits(text):
        if domain not in seen:
            seen.append(domain)
    return seen


# --- PAM stacks ------------------------------------------------------------

def pam_stack_has_limits(service, read_service, depth=0):
    """True when the PAM service's session stack runs pam_limits, following
    ``@include`` (Debian) and ``include``/``substack`` (Red Hat). None when the
    service file does not exist. read_service(name) returns its text or None.
    """
    text = read_service(service)
    if text is None:
        return None
    if depth > 8:
        return False
    for raw in text.splitlines():
        fields = raw.split("#", 1)[0].split()
        if not fields:
            continue
        if fields[0] == "@include" and len(fields) > 1:
            if pam_stack_has_limits(fields[1], read_service, depth + 1):
                return True
            continue
        if len(fields) < 3 or fields[0].lstrip("-") != "session":
            continue
        if fields[1] in ("include", "substack"):
            if pam_stack_has_limits(fields[2], read_service, depth + 1):
                return True
        elif fields[2].rsplit("/", 1)[-1] == "pam_limits.so":
            return True
    return False


# --- Docker daemon.json ----------------------------------------------------

def detect_indent(text):
    """The indent unit of a JSON text (spaces or a tab); 2 when it has none."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[:len(line) - len(stripped)]
    return "  "


def _same_ulimit(current, wanted):
    """Docker reads the entry's keys case-insensitively (Go's encoding/json)."""
    if not isinstance(current, dict):
        return False
    folded = dict((str(key).lower(), value) for key, value in current.items())
    return all(folded.get(key.lower()) == value for key, value in wanted.items()) and len(folded) == len(wanted)


def merge_daemon_json(text, ulimit):
    """Merge ulimit (a default-ulimits entry) into a daemon.json text.

    Returns (new_text, changed). Every other key keeps its value, position and
    formatting: the entry is edited into the text where it belongs (an existing
    memlock entry is replaced in place). A missing or blank file is treated as
    ``{}``. Raises DaemonJsonError, leaving the decision to the caller, when the
    text is not a JSON object or default-ulimits is not an object.
    """
    name = ulimit["Name"]
    if text is None or not text.strip():
        data = OrderedDict([("default-ulimits", OrderedDict([(name, ulimit)]))])
        return json.dumps(data, indent=2) + "\n", True
    try:
        data = json.loads(text, object_pairs_hook=OrderedDict)
    except ValueError as exc:
        raise DaemonJsonError("is not valid JSON (%s)" % exc)
    if not isinstance(data, dict):
        raise DaemonJsonError("must hold a JSON object, found %s" % type(data).__name__)
    ulimits = data.get("default-ulimits")
    if ulimits is None:
        ulimits = data["default-ulimits"] = OrderedDict()
    elif not isinstance(ulimits, dict):
        raise DaemonJsonError('"default-ulimits" must be an object of ulimit entries, found %s' % type(ulimits).__name__)
    key = next((existing for existing in ulimits if existing.lower() == name), name)
    if _same_ulimit(ulimits.get(key), ulimit):
        return text, False
    ulimits[key] = ulimit
    edited = _edit_in_place(text, key, ulimit)
    # The edit must parse to exactly the merged data, order included; else rewrite it all.
    if edited is not None and json.loads(edited, object_pairs_hook=OrderedDict) == data:
        return edited, True
    return json.dumps(data, indent=detect_indent(text), ensure_ascii=False) + "\n", True


_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"\s*")


def _members(text, brace):
    """(key, key_start, value_start, value_end) of each member of the object whose
    ``{`` is at index brace, and the index of its closing ``}``."""
    members = []
    index = _SPACE.match(text, brace + 1).end()
    if text[index] == "}":
        return members, index
    while True:
        key_start = index
        key, index = json.decoder.scanstring(text, index + 1)
        index = _SPACE.match(text, index).end() + 1  # past ':'
        value_start = _SPACE.match(text, index).end()
        dummy, value_end = _DECODER.raw_decode(text, value_start)
        members.append((key, key_start, value_start, value_end))
        index = _SPACE.match(text, value_end).end()
        if text[index] == "}":
            return members, index
        index = _SPACE.match(text, index + 1).end()  # past ','


def _line_indent(text, index):
    """The whitespace before index on its line, or None when other text precedes it."""
    line_start = text.rfind("\n", 0, index) + 1
    prefix = text[line_start:index]
    return prefix if not prefix.strip() else None


def _insert_member(text, members, member_text):
    """Text with member_text added as the object's last member."""
    if not members:
        return None
    last = members[-1]
    indent = _line_indent(text, last[1])
    if indent is None:
        # Members share a line ({"a": 1, "b": 2}): continue that line.
        return text[:last[3]] + ", " + member_text + text[last[3]:]
    return text[:last[3]] + ",\n" + indent + member_text.replace("\n", "\n" + indent) + text[last[3]:]


def _edit_in_place(text, key, ulimit):
    """daemon.json text with the ulimit entry edited in, formatting kept; None when unsure."""
    entry = json.dumps(ulimit, separators=(", ", ": "))
    try:
        brace = _SPACE.match(text).end()
        members, dummy = _members(text, brace)
        section = [member for member in members if member[0] == "default-ulimits"]
        if not section:
            unit = detect_indent(text)
            block = '"default-ulimits": {\n%s"%s": %s\n}' % (unit, ulimit["Name"], entry)
            return _insert_member(text, members, block)
        value_start = section[-1][2]
        inner, inner_closing = _members(text, value_start)
        existing = [member for member in inner if member[0] == key]
        if existing:
            dummy, dummy2, start, end = existing[-1]
            return text[:start] + entry + text[end:]
        if not inner:
            return text[:value_start] + "{" + json.dumps(key) + ": " + entry + "}" + text[inner_closing + 1:]
        return _insert_member(text, inner, json.dumps(key) + ": " + entry)
    except (ValueError, IndexError):
        return None


def daemon_json_ulimit(text, name="memlock"):
    """The default-ulimits entry for name in a daemon.json text, or None."""
    try:
        data = json.loads(text or "{}")
    except ValueError:
        return None
    ulimits = data.get("default-ulimits") if isinstance(data, dict) else None
    if not isinstance(ulimits, dict):
        return None
    return next((value for key, value in ulimits.items() if key.lower() == name), None)


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
