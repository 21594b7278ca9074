# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""JSON as Go's encoding/json writes it, for docker's daemon.json and JSON CDI specs.

nvidia-ctk v1.19.1 decodes daemon.json into a map[string]interface{} and writes it back
with json.MarshalIndent(config, "", "    ") (pkg/config/engine/docker/docker.go, Save):
object keys sorted, numbers decoded as float64 (so 2.0 comes back as 2), ``<``, ``>`` and
``&`` escaped as \\u003c, \\u003e, \\u0026, other characters kept (Go's encode.go).
The file gets no newline at its end (pkg/config/raw.go writes the bytes as they are).
"""

import json

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f",
            "<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def loads(text):
    """Numbers as Go's decoder into interface{} gives them: float64."""
    return json.loads(text, parse_int=float, parse_float=float)


def _string(value):
    out = []
    for char in value:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20:
            out.append("\\u%04x" % ord(char))
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _number(value):
    if isinstance(value, int):
        return str(value)
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


def dumps(value, indent="    ", prefix="", sort_keys=True):
    """json.MarshalIndent(value, "", indent); indent None is json.Marshal (compact).
    sort_keys False keeps the dicts' order, as Go writes a struct's fields."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _number(value)
    if isinstance(value, str):
        return _string(value)
    inner = prefix + (indent or "")
    newline = "\n" if indent is not None else ""
    separator = ": " if indent is not None else ":"
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = ["%s%s%s%s" % (newline and inner, _string(k), separator, dumps(value[k], indent, inner, sort_keys))
                 for k in (sorted(value) if sort_keys else value)]
        return "{" + newline + ("," + newline).join(items) + newline + (newline and prefix) + "}"
    if not value:
        return "[]"
    items = ["%s%s" % (newline and inner, dumps(item, indent, inner, sort_keys)) for item in value]
    return "[" + newline + ("," + newline).join(items) + newline + (newline and prefix) + "]"
