# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure helpers for turning swap off: /proc/swaps and /proc/meminfo, the
swapoff safety check, /etc/fstab swap entries, and zram-generator configuration.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import dropin_files, is_masked, parse_ini_sections

FSTAB_MARKER = "# gpuops.hardening: swap is off on this GPU node; the line below is the original entry"

# fstab tags that name a udev symlink, as systemd's fstab-generator resolves them.
FSTAB_TAGS = {
    "UUID": "/dev/disk/by-uuid/",
    "LABEL": "/dev/disk/by-label/",
    "PARTUUID": "/dev/disk/by-partuuid/",
    "PARTLABEL": "/dev/disk/by-partlabel/",
}

# zram-generator: the first main file found wins (this order); drop-ins merge by
# name, a later base directory replacing an earlier one's file of the same name.
ZRAM_MAIN_CONFIGS = (
    "run/systemd/zram-generator.conf",
    "etc/systemd/zram-generator.conf",
    "usr/local/lib/systemd/zram-generator.conf",
    "usr/lib/systemd/zram-generator.conf",
)
ZRAM_DROPIN_DIRS = (
    "usr/lib/systemd/zram-generator.conf.d",
    "usr/local/lib/systemd/zram-generator.conf.d",
    "etc/systemd/zram-generator.conf.d",
    "run/systemd/zram-generator.conf.d",
)
ZRAM_GENERATORS = (
    "usr/lib/systemd/system-generators/zram-generator",
    "lib/systemd/system-generators/zram-generator",
)

# udev's encode_devnode_name() (and libblkid's blkid_encode_string(), which makes
# ID_FS_LABEL_ENC for the by-label links) keeps these and valid multi-byte UTF-8.
DEVNODE_SAFE = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#+-.:=@_")
# systemd's unit_name_path_escape() keeps these; a leading "." is escaped too.
UNIT_NAME_SAFE = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz:_.")

_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")
_ZRAM_SECTION = re.compile(r"^zram[0-9]+$")


def unescape_octal(text):
    r"""fstab and /proc/swaps write space, tab and backslash as ``\040``, ``\011``, ``\134``."""
    return _OCTAL_ESCAPE.sub(lambda match: chr(int(match.group(1), 8)), text)


def parse_proc_swaps(text):
    """Active swap areas: list of dicts with path, type, size_kib, used_kib, priority."""
    swaps = []
    for line in (text or "").splitlines()[1:]:
        fields = line.split()
        if len(fields) < 5:
            continue
        try:
            size, used, priority = int(fields[-3]), int(fields[-2]), int(fields[-1])
        except ValueError:
            continue
        swaps.append({
            "path": unescape_octal(" ".join(fields[:-4])),
            "type": fields[-4],
            "size_kib": size,
            "used_kib": used,
            "priority": priority,
        })
    return swaps


def parse_meminfo(text):
    """/proc/meminfo as {name: kibibytes}."""
    info = {}
    for line in (text or "").splitlines():
        name, dummy, rest = line.partition(":")
        fields = rest.split()
        if fields and fields[0].isdigit():
            info[name.strip()] = int(fields[0])
    return info


def swapoff_refusal(used_kib, available_kib, margin_kib):
    """Why turning swap off now is unsafe, or None.

    swapoff pulls every swapped-out page back into RAM. When that does not fit in
    the memory available now minus a safety margin, the kernel would reclaim hard
    or invoke the OOM killer on running work instead.
    """
    room_kib = available_kib - margin_kib
    if used_kib <= room_kib:
        return None
    return (
        "%s of swap is in use, but only %s of memory is available, and the safety margin is %s "
        "(room for %s). Turning swap off now could push running jobs into the OOM killer."
        % (_mib(used_kib), _mib(available_kib), _mib(margin_kib), _mib(max(room_kib, 0)))
    )


def _mib(kib):
    return "%.0f MiB" % (kib / 1024.0)


def fstab_fields(line):
    """The whitespace-separated fields of an fstab line; [] for comments and blanks."""
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return []
    return stripped.split()


def is_swap_entry(line):
    fields = fstab_fields(line)
    return len(fields) >= 3 and fields[2] == "swap"


def comment_out_swap(text):
    """Comment out the swap entries of an fstab, touching no other line.

    Each swap line gets a leading ``#`` and, unless already there, a marker line
    above it. Returns (new_text, [original swap lines]).
    """
    out = []
    commented = []
    for line in (text or "").splitlines(True):
        if not is_swap_entry(line):
            out.append(line)
            continue
        ending = "\r\n" if line.endswith("\r\n") else "\n"
        if not (out and out[-1].rstrip("\r\n") == FSTAB_MARKER):
            out.append(FSTAB_MARKER + ending)
        out.append("#" + line)
        commented.append(line.rstrip("\r\n"))
    return "".join(out), commented


def _unquote(value):
    """systemd's unquote(): one pair of surrounding single or double quotes goes."""
    if len(value) >= 2 and value[0] in "\"'" and value[-1] == value[0]:
        return value[1:-1]
    return value


def _char_bytes(char):
    """The bytes a character stands for; a surrogate escape stands for its one raw byte."""
    if 0xDC80 <= ord(char) <= 0xDCFF:
        return bytearray([ord(char) - 0xDC00])
    return bytearray(char.encode("utf-8"))


def encode_devnode_name(name):
    r"""A name as udev writes it in a /dev/disk/by-* link (``my label`` -> ``my\x20label``).

    systemd's encode_devnode_name() (src/shared/device-nodes.c), which fstab-generator
    applies to every tag, and libblkid's blkid_encode_string(), which udev's blkid
    builtin uses for ID_FS_LABEL_ENC, agree: a valid multi-byte UTF-8 character is
    kept, and a backslash or any other byte outside DEVNODE_SAFE becomes ``\xNN``.
    """
    out = []
    for char in name:
        raw = _char_bytes(char)
        if len(raw) > 1 or char in DEVNODE_SAFE:
            out.append(char)
        else:
            out.extend("\\x%02x" % byte for byte in raw)
    return "".join(out)


def fstab_device(spec):
    """The device path systemd's fstab-generator derives from an fstab source.

    ``LABEL=``, ``UUID=``, ``PARTUUID=`` and ``PARTLABEL=`` name the udev link
    /dev/disk/by-*/ENCODED, as tag_to_udev_node() builds it: octal escapes
    undone (libmount), surrounding quotes dropped, the value encoded as udev does.
    """
    tag, sep, value = spec.partition("=")
    if sep and tag in FSTAB_TAGS:
        return FSTAB_TAGS[tag] + encode_devnode_name(_unquote(unescape_octal(value)))
    return unescape_octal(spec)


def unit_name_from_path(path, suffix):
    r"""systemd's unit name for a path, as ``systemd-escape --path --suffix=SUFFIX`` prints it.

    systemd.unit(5), "String Escaping for Inclusion in Unit Names": empty and ``.``
    components and the slashes around the path go, each ``/`` becomes ``-``, and every
    byte outside UNIT_NAME_SAFE, and a leading ``.``, becomes ``\xNN``:
    ``/dev/disk/by-uuid/1-2`` -> ``dev-disk-by\x2duuid-1\x2d2.swap``; ``/`` -> ``-.swap``.
    """
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if not parts:
        return "-." + suffix
    escaped = []
    for index, char in enumerate("/".join(parts)):
        if char == "/":
            escaped.append("-")
        elif char in UNIT_NAME_SAFE and not (index == 0 and char == "."):
            escaped.append(char)
        else:
            escaped.extend("\\x%02x" % byte for byte in _char_bytes(char))
    return "".join(escaped) + "." + suffix


def zram_config_files(root="/", exclude=None):
    """zram-generator's configuration files in the order it reads them."""
    files = []
    for relative in ZRAM_MAIN_CONFIGS:
        path = os.path.join(root, relative)
        if os.path.isfile(path):
            files.append(path)
            break
    # Listed lowest priority first; config_files wants the highest first.
    directories = [os.path.join(root, relative) for relative in reversed(ZRAM_DROPIN_DIRS)]
    files.extend(dropin_files(directories))
    return [path for path in files if path != exclude and not is_masked(path)]


def zram_generator_installed(root="/"):
    return any(os.path.exists(os.path.join(root, relative)) for relative in ZRAM_GENERATORS)


def zram_devices(texts):
    """Devices the merged configuration defines: {name: is_swap}.

    A device is swap unless it has a mount-point or a fs-type other than swap;
    zram devices holding file systems are not this collection's business.
    """
    merged = {}
    for text in texts:
        for section, settings in parse_ini_sections(text):
            if _ZRAM_SECTION.match(section):
                merged.setdefault(section, {}).update(settings)
    return dict(
        (name, not settings.get("mount-point") and settings.get("fs-type", "swap") in ("", "swap"))
        for name, settings in merged.items()
    )


def zram_sort_key(name):
    return int(name[len("zram"):])


def render_zram_dropin(devices):
    """A zram-generator drop-in that keeps the given swap devices from being created.

    host-memory-limit = 0 means "only on machines with at most 0 MiB of RAM", which
    every zram-generator version honours, whatever sets the device's size.
    """
    lines = [
        "# Written by gpuops.hardening: GPU nodes run without swap, zram swap included.",
        "# zram devices used for file systems are left alone.",
    ]
    for name in sorted(devices, key=zram_sort_key):
        lines.extend(["", "[%s]" % name, "host-memory-limit = 0"])
    return "\n".join(lines) + "\n"
