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

from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import managed_header

# The values the module documents and accepts. The running kernel has the last
# word: its sysfs file lists what it takes, and a value it does not list fails.
CHOICES = {
    "enabled": ("always", "madvise", "never"),
    "defrag": ("always", "defer", "defer+madvise", "madvise", "never"),
}

SYSFS_DIR = "/sys/kernel/mm/transparent_hugepage"
UNIT_PATH = "/etc/systemd/system/gpuops-thp.service"
# The first line of every unit this module writes; a file without it is not ours.
# Units written by earlier releases (from the role's template) carry the second.
UNIT_MARKER = managed_header("thp")
_OLD_UNIT_MARKER = "of the gpuops.hardening thp role"

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


def cmdline_conflict(cmdline, wanted_enabled, unit_managed, live_skipped_reason=None):
    """A message when the boot command line contradicts wanted_enabled, else None.

    It says what actually happens to the value: whether this run sets it on the
    running kernel and whether a boot unit sets it again after every boot.
    """
    value = cmdline_value(cmdline)
    if value is None or wanted_enabled is None or value == wanted_enabled:
        return None
    if live_skipped_reason:
        live = "The running kernel keeps its value (live apply skipped: %s)" % live_skipped_reason
    else:
        live = "The module sets enabled=%s on the running kernel" % wanted_enabled
    if unit_managed:
        boot = ("; the gpuops-thp.service unit sets it again after every boot, but anything that runs "
                "before that unit, and anyone reading the boot loader configuration, sees '%s'" % value)
    else:
        boot = "; no boot unit is managed (persist is false), so every boot starts with '%s' again" % value
    return (
        "the kernel command line sets transparent_hugepage=%s but the THP profile wants enabled=%s. %s%s. "
        "Remove transparent_hugepage=%s from the boot loader's kernel command line "
        "(GRUB_CMDLINE_LINUX) or set the profile to match."
        % (value, wanted_enabled, live, boot, value)
    )


def is_managed_unit(text):
    """True when a unit file's content was written by this collection."""
    return bool(text) and (text.startswith(UNIT_MARKER) or _OLD_UNIT_MARKER in text)


def render_unit(values, profile=None, sysfs_dir=SYSFS_DIR):
    """The oneshot unit that writes values (setting name -> value) at boot.

    It runs before the container runtimes and schedulers start GPU work, and
    its condition makes it a no-op where sysfs is read-only (containers).
    """
    described = " (%s profile)" % profile if profile else ""
    lines = [
        UNIT_MARKER,
        "# Re-applies the transparent hugepage settings at boot, before GPU workloads start.",
        "[Unit]",
        "Description=Transparent hugepages for GPU workloads%s" % described,
        "DefaultDependencies=no",
        "After=local-fs.target sysinit.target",
        "Before=basic.target docker.service containerd.service kubelet.service slurmd.service "
        "nvidia-persistenced.service",
        "# Read-only inside containers: skip rather than fail.",
        "ConditionPathIsReadWrite=%s/enabled" % sysfs_dir,
        "",
        "[Service]",
        "Type=oneshot",
        "RemainAfterExit=yes",
    ]
    for name, relative in SETTING_FILES:
        if name in values:
            lines.append("ExecStart=/bin/sh -c 'echo %s > %s/%s'" % (format_value(name, values[name]), sysfs_dir, relative))
    lines += ["", "[Install]", "WantedBy=basic.target", ""]
    return "\n".join(lines)


def render_state(state):
    """Human-readable block used in --diff output."""
    lines = []
    for name, dummy in SETTING_FILES:
        if name in state:
            lines.append("%s: %s" % (name, state[name]))
    return "\n".join(lines) + "\n"
