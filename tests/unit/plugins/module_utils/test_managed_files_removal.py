# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""managed_files.removal_diff: what a removal takes away, as every module reports it."""

from __future__ import annotations

from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import removal_diff


def test_a_file_shows_its_text_under_the_path_on_the_node(tmp_path):
    unit = tmp_path / "etc/systemd/system/x.service"
    unit.parent.mkdir(parents=True)
    unit.write_text("[Unit]\n")
    assert removal_diff(str(unit), "/etc/systemd/system/x.service") == {
        "before_header": "/etc/systemd/system/x.service", "after_header": "/etc/systemd/system/x.service (absent)",
        "before": "[Unit]\n", "after": ""}


def test_a_link_shows_its_target_not_the_target_text(tmp_path):
    mask = tmp_path / "x.service"
    mask.symlink_to("/dev/null")
    assert removal_diff(str(mask))["before"] == "symlink to /dev/null\n"
    assert removal_diff(str(mask))["before_header"] == str(mask)


def test_a_folder_says_everything_below_it_goes(tmp_path):
    (tmp_path / "pipe/all").mkdir(parents=True)
    assert removal_diff(str(tmp_path / "pipe"), "/run/nvidia-mps")["before"] == "directory, with everything below it\n"
