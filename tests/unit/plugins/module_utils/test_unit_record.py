# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The durable record of units a module still owes an action (unit_record)."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import unit_record


class FakeModule:
    """What ensure_content uses of an AnsibleModule."""

    def __init__(self, root, check_mode=False):
        self.params = {"root": root}
        self.check_mode = check_mode

    @staticmethod
    def atomic_move(src, dest):
        os.rename(src, dest)


def test_a_rendered_record_parses_back_to_its_units_in_order():
    units = ["nvidia-dcgm.service", "dcgm-exporter.service"]
    assert unit_record.parse(unit_record.render(units), "/r.json") == units


def test_no_record_means_no_units():
    assert unit_record.parse(None, "/r.json") == []


@pytest.mark.parametrize("text", ["", "{", "[]", '{"units": "nvidia-dcgm.service"}', '{"units": [""]}', '{"units": [3]}'])
def test_a_foreign_record_is_refused_naming_its_path(text):
    with pytest.raises(unit_record.RecordError, match="/var/lib/x.json is not a record of units"):
        unit_record.parse(text, "/var/lib/x.json")


def test_written_below_root_then_removed(tmp_path):
    record = unit_record.UnitRecord(FakeModule(str(tmp_path)), unit_record.MIG_CLIENTS_STOPPED)
    record.write(["nvidia-dcgm.service"])
    host_path = str(tmp_path) + unit_record.MIG_CLIENTS_STOPPED
    assert os.path.isfile(host_path) and oct(os.stat(host_path).st_mode & 0o777) == "0o644"
    assert record.units() == ["nvidia-dcgm.service"]
    # No temporary file is left beside it: the write is a rename.
    assert os.listdir(os.path.dirname(host_path)) == [os.path.basename(host_path)]
    record.remove()
    assert record.units() == [] and not os.path.exists(host_path)
    record.remove()  # nothing to remove is fine


def test_check_mode_neither_writes_nor_removes(tmp_path):
    path = unit_record.PERSISTENCED_RESTART_PENDING
    unit_record.UnitRecord(FakeModule(str(tmp_path), check_mode=True), path).write(["x.service"])
    assert not os.path.exists(str(tmp_path) + path)
    unit_record.UnitRecord(FakeModule(str(tmp_path)), path).write(["x.service"])
    unit_record.UnitRecord(FakeModule(str(tmp_path), check_mode=True), path).remove()
    assert os.path.exists(str(tmp_path) + path)
