# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The README's Layout table names every role, module, filter and test plugin, and every playbook."""

from __future__ import annotations

import os
import re

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def layout_rows():
    """{first cell: second cell} of the table under '## Layout'."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        text = handle.read()
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 2 and not set(cells[0]) <= set("-"):
            rows[cells[0]] = cells[1]
    return rows


def named(cell):
    return set(re.findall(r"`([^`]+)`", cell))


def row_naming(folder):
    """The text of the row whose first cell names folder."""
    found = [text for first, text in layout_rows().items() if "`%s`" % folder in first]
    assert len(found) == 1, "the Layout table has no single row for %s" % folder
    return found[0]


def entries(folder, suffix):
    path = os.path.join(ROOT, folder)
    return sorted(os.path.splitext(name)[0] for name in os.listdir(path)
                  if name.endswith(suffix) and not name.startswith("__"))


@pytest.mark.parametrize("folder, suffix", [("roles/", ""), ("plugins/modules/", ".py"), ("plugins/filter/", ".py"),
                                            ("plugins/test/", ".py"), ("playbooks/", ".yml")])
def test_the_layout_names_everything_in_each_folder(folder, suffix):
    wanted = [name + suffix if folder == "playbooks/" else name for name in entries(folder, suffix)]
    if folder == "roles/":
        wanted = [name for name in wanted if os.path.isdir(os.path.join(ROOT, folder, name))]
    # plugins/filter/ and plugins/test/ share a row.
    row = row_naming("plugins/filter/" if folder == "plugins/test/" else folder)
    missing = [name for name in wanted if name not in named(row)]
    assert wanted and not missing, "README.md, Layout, %s: add %s" % (folder, missing)
