# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure helpers for transparent hugepage (THP) settings.

sysfs shows a choice setting as ``always [madvise] never``: every allowed value,
with the active one in brackets. khugepaged's defrag is a plain ``0``/``1``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

ENABLED_CHOICES = ("always", "madvise", "never")
DEFRAG_CHOICES = ("always", "defer", "defer+madvise", "madvise", "never")

# Relative to the THP sysfs directory; ordered as they are applied.
SETTING_FILES = (
    ("enabled", "enabled"),
    ("defrag", "defrag"),
    ("khugepaged_defrag", "khugepaged/defrag"),
)

_CMDLINE_THP = re.compile(r"(?:^|\s)transparent_hugepage=(\S+)")


def parse_choice(text):
    """Return (active, choices) from a sysfs choice file.

    ``always [madvise] never`` -> ("madvise", ["always", "madvise", "never"]).
    A plain value (``1``) is returned as (value, []).
    """
    words = text.split()
    active = None
    choices = []
    for word in words:
        if word.startswith("[") and word.endswith("]"):
            word = word[1:-1]
            active = word
        choices.append(word)
    if active is None:
        return (words[0] if len(words) == 1 else None), []
    return active, choices


def parse_khugepaged_defrag(text):
    """``1`` -> True, ``0`` -> False; anything else -> None."""
    value = text.strip()
    if value in ("0", "1"):
        return value == "1"
    active, dummy = parse_choice(text)
    if active in ("0", "1"):
        return active == "1"
    return None


def format_value(name, value):
    """The string to write to a setting's sysfs file."""
    if name == "khugepaged_defrag":
        return "1" if value else "0"
    return str(value)


def cmdline_value(cmdline):
    """The last ``transparent_hugepage=`` on a kernel command line (the kernel
    honours the last one), or None."""
    found = _CMDLINE_THP.findall(cmdline or "")
    return found[-1] if found else None


def cmdline_conflict(cmdline, wanted_enabled):
    """A message when the boot command line contradicts wanted_enabled, else None."""
    value = cmdline_value(cmdline)
    if value is None or wanted_enabled is None or value == wanted_enabled:
        return None
    return (
        "the kernel command line sets transparent_hugepage=%s but the THP profile wants "
        "enabled=%s. The gpuops THP unit overrides it after boot, but anything that runs "
        "before that unit, and anyone reading the boot loader configuration, sees '%s'. "
        "Remove transparent_hugepage=%s from the boot loader's kernel command line "
        "(GRUB_CMDLINE_LINUX) or set the profile to match."
        % (value, wanted_enabled, value, value)
    )


def render_state(state):
    """Human-readable block used in --diff output."""
    lines = []
    for name, dummy in SETTING_FILES:
        if name in state:
            lines.append("%s: %s" % (name, state[name]))
    return "\n".join(lines) + "\n"
