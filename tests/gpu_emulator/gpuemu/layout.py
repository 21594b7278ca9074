# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Boxed tables as nvidia-smi draws them: text placed at fixed columns between '|'."""


def place(width, cells):
    """One '|...|' line of the given width with (column, text) cells; a negative
    column right-aligns the text so that it ends at -column."""
    line = [" "] * width
    line[0] = line[-1] = "|"
    for column, text in cells:
        text = str(text)
        start = column if column >= 0 else -column - len(text) + 1
        line[start:start + len(text)] = list(text)
    return "".join(line[:width]) + "\n"


def rule(width, fill="-", corner="+"):
    return corner + fill * (width - 2) + corner + "\n"


def banner(width, title):
    return place(width, [(2, title)])
