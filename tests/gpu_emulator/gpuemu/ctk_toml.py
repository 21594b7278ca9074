# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TOML as nvidia-ctk reads and writes it (containerd and CRI-O configs).

nvidia-ctk v1.19.1 keeps configs in github.com/pelletier/go-toml v1.9.5 trees and writes
them with Tree.Marshal (pelletier/go-toml v1.9.5 tomltree_write.go, writeToOrdered with
OrderAlphabetical and a two-space indent). So a config it rewrites loses its comments and
comes back in that layout:

* in each table, the plain values first, then the sub-tables and arrays of tables, each
  group sorted by key (byte order);
* a table header is a blank line, the indent of its depth and ``[dotted.key]``; its values
  are indented one level deeper than the header;
* keys outside ``A-Za-z0-9_-`` are double-quoted; strings are double-quoted with ``\\b \\t
  \\n \\f \\r \\" \\\\`` escaped and other control characters below 0x1F as ``\\uXXXX``;
* arrays are inline, ``[a, b]``; floats with no fraction print as ``2.0``.

Reading uses the standard library's tomllib (Python 3.11 and later).
"""

import datetime
import decimal

try:
    import tomllib
except ImportError:  # Python before 3.11: the emulated nvidia-ctk cannot read TOML there
    tomllib = None

INDENT = "  "
_BARE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


class TomlError(ValueError):
    """A config that does not parse."""


def loads(text):
    if tomllib is None:
        raise TomlError("the emulated nvidia-ctk needs Python 3.11 or later (tomllib)")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise TomlError(str(error)) from error


def load_file(path):
    """The file's tree; a missing file is an empty tree (pkg/config/toml/source-file.go)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return loads(handle.read())
    except FileNotFoundError:
        return {}


def _string(value):
    out = []
    for char in value:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x1F:
            out.append("\\u%04X" % ord(char))
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def key(name):
    if name and all(char in _BARE for char in name):
        return name
    return _string(name)


def _float(value):
    if value == int(value):
        return "%.1f" % value
    text = repr(value)
    if "e" in text:
        # Go's FormatFloat(v, 'f', -1, ...) never uses an exponent.
        text = format(decimal.Decimal(text), "f")
    return text


def value_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, dict):
        return "{ " + ", ".join("%s = %s" % (key(k), value_text(v)) for k, v in _ordered(value)) + " }"
    return "[" + ", ".join(value_text(item) for item in value) + "]"


def _is_table_array(value):
    return isinstance(value, list) and bool(value) and all(isinstance(item, dict) for item in value)


def _complex(value):
    return isinstance(value, dict) or _is_table_array(value)


def _ordered(tree):
    simple = sorted(k for k, v in tree.items() if not _complex(v))
    nested = sorted(k for k, v in tree.items() if _complex(v))
    return [(k, tree[k]) for k in simple + nested]


def _write(tree, indent, keyspace, out):
    for name, value in _ordered(tree):
        combined = key(name) if not keyspace else keyspace + "." + key(name)
        if isinstance(value, dict):
            out.append("\n%s[%s]\n" % (indent, combined))
            _write(value, indent + INDENT, combined, out)
        elif _is_table_array(value):
            for item in value:
                out.append("\n%s[[%s]]\n" % (indent, combined))
                _write(item, indent + INDENT, combined, out)
        else:
            out.append("%s%s = %s\n" % (indent, key(name), value_text(value)))


def dumps(tree):
    """The text go-toml v1.9.5's Tree.Marshal gives for this tree ("" for an empty one)."""
    out = []
    _write(tree, "", "", out)
    return "".join(out)


def get_path(tree, keys):
    for name in keys:
        if not isinstance(tree, dict) or name not in tree:
            return None
        tree = tree[name]
    return tree


def set_path(tree, keys, value):
    """go-toml's SetPath: the tables on the way are made (or replace a plain value)."""
    for name in keys[:-1]:
        if not isinstance(tree.get(name), dict):
            tree[name] = {}
        tree = tree[name]
    tree[keys[-1]] = value


def delete_path(tree, keys):
    parent = get_path(tree, keys[:-1])
    if isinstance(parent, dict):
        parent.pop(keys[-1], None)
