# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""YAML of CDI specs as nvidia-ctk writes them, and the device names `cdi list` reads back.

The layout follows the expected specs in NVIDIA/nvidia-container-toolkit v1.19.1
cmd/nvidia-ctk/cdi/generate/generate_test.go (go-yaml v3 with a four-space indent): a
`---` line, fields in the Go structs' order, a sequence's `- ` four columns under its key,
the keys of a mapping inside a sequence item two columns after the dash and its own
nested collections four columns under the dash. A string is double-quoted where YAML would
read it as something else: numbers ("0"), the old base-60 numbers ("0:1", go-yaml v3's
isBase60Float), booleans and nulls, old booleans (yes/no/on/off), or text starting with an
indicator.
"""

import re

_NUMBER = re.compile(r"^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$|^0x[0-9a-fA-F_]+$|^0o?[0-7_]+$")
_BASE60 = re.compile(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$")
_WORDS = {"true", "false", "null", "~", "y", "yes", "n", "no", "on", "off", ".inf", "-.inf", "+.inf", ".nan"}
_INDICATORS = tuple("?:,[]{}#&*!|>'\"%@`")


def _needs_quotes(text):
    return (not text or text.lower() in _WORDS or _NUMBER.match(text) or _BASE60.match(text)
            or text.startswith(_INDICATORS) or text in ("-", "- ") or text.startswith("- ")
            or ": " in text or " #" in text or text.endswith(":") or text != text.strip())


def scalar(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if _needs_quotes(value):
        return '"%s"' % value.replace("\\", "\\\\").replace('"', '\\"')
    return value


def _mapping(value, indent, lines, dash=False):
    """A mapping whose nested collections go four columns under indent; in a sequence item
    its first key follows the dash and the others line up two columns after it."""
    for number, (key, item) in enumerate(value.items()):
        if dash:
            lead = " " * indent + ("- " if number == 0 else "  ")
        else:
            lead = " " * indent
        if isinstance(item, dict):
            lines.append("%s%s:" % (lead, key))
            _mapping(item, indent + 4, lines)
        elif isinstance(item, list):
            lines.append("%s%s:" % (lead, key))
            _sequence(item, indent + 4, lines)
        else:
            lines.append("%s%s: %s" % (lead, key, scalar(item)))


def _sequence(value, indent, lines):
    for item in value:
        if isinstance(item, dict):
            _mapping(item, indent, lines, dash=True)
        else:
            lines.append("%s- %s" % (" " * indent, scalar(item)))


def dumps(document):
    lines = ["---"]
    _mapping(document, 0, lines)
    return "\n".join(lines) + "\n"


def _unquote(text):
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return text


def kind_and_names(text):
    """(kind, device names) of a YAML spec in the layout above (or any layout whose top
    level keys start a line and whose devices' names are each item's `name:`)."""
    kind, names, in_devices, item_indent = None, [], False, None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#") or line == "---":
            continue
        if not line[0].isspace() and not (in_devices and line.startswith("- ")):
            key, rest = (line.split(":", 1) + [""])[:2]
            in_devices, item_indent = key == "devices", None
            if key == "kind":
                kind = _unquote(rest)
            continue
        if not in_devices:
            continue
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if stripped.startswith("- "):
            item_indent = item_indent if item_indent is not None else indent
            if indent == item_indent:
                stripped, indent = stripped[2:].lstrip(), indent + 2
        if item_indent is not None and indent == item_indent + 2 and stripped.startswith("name:"):
            names.append(_unquote(stripped[len("name:"):]))
    return kind, names
