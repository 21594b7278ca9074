# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Docker's daemon.json: merging a default-ulimits entry, or top-level keys, into the file as it is.

The file is the administrator's: every other key keeps its value, position and
formatting, and a file that cannot be merged safely is refused, not rewritten.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re
from collections import OrderedDict

from ansible_collections.gpuops.hardening.plugins.module_utils.memlock import UNLIMITED

# Where dockerd reads its configuration (dockerd --config-file's default on Linux).
DAEMON_JSON_PATH = "/etc/docker/daemon.json"


def docker_ulimit(limit):
    """Docker's default-ulimits entry for memlock (bytes, -1 for unlimited)."""
    value = -1 if limit == UNLIMITED else limit * 1024
    return OrderedDict([("Name", "memlock"), ("Hard", value), ("Soft", value)])


class DaemonJsonError(ValueError):
    """daemon.json cannot be merged safely; the message says why."""


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


def load_daemon_json(text):
    """The object a daemon.json text holds ({} for a missing or blank file); DaemonJsonError when it is none."""
    if text is None or not text.strip():
        return OrderedDict()
    try:
        data = json.loads(text, object_pairs_hook=OrderedDict)
    except ValueError as exc:
        raise DaemonJsonError("is not valid JSON (%s)" % exc)
    if not isinstance(data, dict):
        raise DaemonJsonError("must hold a JSON object, found %s" % type(data).__name__)
    return data


def merge_top_level(text, updates):
    """Set top-level keys of a daemon.json text to the values in updates (a dict).

    Returns (new_text, changed keys in the order of updates). Every other key keeps its
    value, position and formatting: each changed value is edited in where it is, a new key
    goes last. Raises DaemonJsonError when the text is not a JSON object.
    """
    data = load_daemon_json(text)
    changed = [key for key, value in updates.items() if key not in data or data[key] != value]
    if not changed:
        return text, []
    if text is None or not text.strip():
        return json.dumps(OrderedDict((key, updates[key]) for key in changed), indent=2) + "\n", changed
    edited = text
    for key in changed:
        data[key] = updates[key]
        edited = _edit_top_level(edited, key, updates[key]) if edited is not None else None
    # The edit must parse to exactly the merged data, order included; else rewrite it all.
    if edited is not None and json.loads(edited, object_pairs_hook=OrderedDict) == data:
        return edited, changed
    return json.dumps(data, indent=detect_indent(text), ensure_ascii=False) + "\n", changed


def _edit_top_level(text, key, value):
    """text with the top-level member key set to value, formatting kept; None when unsure."""
    try:
        members, dummy = _members(text, _SPACE.match(text).end())
        existing = [member for member in members if member[0] == key]
        if existing:
            dummy, dummy2, start, end = existing[-1]
            inner = _edit_object(text, start, value) if isinstance(value, dict) and text[start] == "{" else None
            return inner if inner is not None else text[:start] + json.dumps(value) + text[end:]
        return _insert_member(text, members, json.dumps(key) + ": " + json.dumps(value))
    except (ValueError, IndexError):
        return None


def _edit_object(text, brace, wanted):
    """text with the object at index brace holding wanted's members, each edited or added where it belongs so
    the object's own layout (one member a line, say) stays; None when a member would have to go."""
    members, dummy = _members(text, brace)
    if not members or set(member[0] for member in members) - set(wanted):
        return None
    one_line = _line_indent(text, members[0][1]) is None
    for key, value in wanted.items():
        members, dummy = _members(text, brace)
        existing = [member for member in members if member[0] == key]
        value_text = json.dumps(value) if one_line else json.dumps(value, indent=detect_indent(text))
        if existing and json.loads(text[existing[-1][2]:existing[-1][3]]) != value:
            text = text[:existing[-1][2]] + value_text + text[existing[-1][3]:]
        elif not existing:
            text = _insert_member(text, members, json.dumps(key) + ": " + value_text)
    return text


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
    data = load_daemon_json(text)
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
