# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A host tree for the thp module: THP sysfs at kernel defaults, a kernel command line, no unit yet."""

from __future__ import annotations


def thp_host_tree(host_root):
    """Fill host_root (a pathlib.Path); returns (the THP sysfs folder, the /proc/cmdline file)."""
    thp_dir = host_root / "sys" / "kernel" / "mm" / "transparent_hugepage"
    (thp_dir / "khugepaged").mkdir(parents=True)
    (thp_dir / "enabled").write_text("always [madvise] never\n")
    (thp_dir / "defrag").write_text("always defer defer+madvise [madvise] never\n")
    (thp_dir / "khugepaged" / "defrag").write_text("1\n")
    cmdline = host_root / "proc" / "cmdline"
    cmdline.parent.mkdir()
    cmdline.write_text("BOOT_IMAGE=/vmlinuz root=/dev/vda ro quiet\n")
    return thp_dir, cmdline
