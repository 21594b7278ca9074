# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""mig-parted v1 files: a file in the layout of mig-parted's examples, read unchanged, and
every field mig-parted refuses refused with its path. PCI device ids come from the
emulated nvidia-smi --query-gpu=pci.device_id."""

from __future__ import annotations

import copy
import os

import pytest
import yaml

from ansible_collections.gpuops.hardening.plugins.module_utils.mig_parted import (
    MigPartedError,
    desired_layouts,
    load_config,
    matches,
)
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api

FLEET = os.path.join(os.path.dirname(__file__), "fixtures", "mig_parted", "fleet.yaml")


@pytest.fixture(scope="module")
def fleet():
    with open(FLEET, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def _gpus(tmp_path, profile):
    path = str(tmp_path / "state.json")
    api.write_state(api.new_state(profile), path)
    rc, out, err = api.run("nvidia-smi", ["--query-gpu=index,pci.device_id", "--format=csv,noheader"], path)
    assert rc == 0, err
    return [{"index": int(index), "pci_device_id": device.strip()}
            for index, device in (line.split(",") for line in out.splitlines())]


def test_every_config_of_the_file_loads(fleet):
    for name in fleet["mig-configs"]:
        assert load_config(fleet, name)


def test_a_filtered_config_applies_to_the_matching_model_only(fleet, tmp_path):
    entries = load_config(fleet, "inference-mixed")
    a100 = desired_layouts(entries, _gpus(tmp_path, "a100_8x_mig"))
    assert sorted(a100) == list(range(8))
    assert a100[0] == {"mig_enabled": True, "mig_devices": {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}}
    h100 = desired_layouts(entries, _gpus(tmp_path, "dgx_h100"))
    # The H100 entry lists GPUs 0-3 only; the A100 filter never matches an H100.
    assert sorted(h100) == [0, 1, 2, 3]
    assert h100[3]["mig_devices"] == {"1c.3g.40gb": 2, "1g.10gb+me": 1}
    assert desired_layouts(entries, _gpus(tmp_path, "l40s_4x")) == {}


def test_later_entries_decide_the_gpus_they_match(fleet, tmp_path):
    layouts = desired_layouts(load_config(fleet, "half-and-half"), _gpus(tmp_path, "dgx_h100"))
    assert [layouts[index]["mig_enabled"] for index in range(8)] == [False] * 4 + [True] * 4
    assert layouts[7]["mig_devices"] == {"7g.80gb": 1}


def test_an_empty_mig_devices_enables_mig_without_instances(fleet):
    assert load_config(fleet, "all-enabled") == [
        {"devices": "all", "device_filter": [], "mig_enabled": True, "mig_devices": {}}]


def test_device_filters_compare_as_numbers():
    entry = {"devices": "all", "device_filter": [0x20B210DE], "mig_enabled": False, "mig_devices": {}}
    assert matches(entry, 0, "0x20b210de") and not matches(entry, 0, "0x20B510DE")


def _with(fleet, config, change):
    document = copy.deepcopy(fleet)
    change(document, document["mig-configs"].get(config, [{}])[0] if config else None)
    return document


@pytest.mark.parametrize("change, fragment", [
    (lambda doc, entry: doc.pop("version"), "missing required field version"),
    (lambda doc, entry: doc.update(version="v2"), "unknown version 'v2'"),
    (lambda doc, entry: doc.update(extra=1), "unexpected field extra"),
    (lambda doc, entry: entry.pop("devices"), "mig-configs.all-1g.10gb[0]: missing required field devices"),
    (lambda doc, entry: entry.pop("mig-enabled"), "missing required field mig-enabled"),
    (lambda doc, entry: entry.update(devices="some"), "mig-configs.all-1g.10gb[0].devices: got 'some'"),
    (lambda doc, entry: entry.update(devices=[0, "1"]), "allowed: all or a list of GPU indexes"),
    (lambda doc, entry: entry.update({"device-filter": "A100"}), "device-filter: got 'A100'"),
    (lambda doc, entry: entry.update({"device-filter": [0x20B210DE]}), "a PCI device id such as 0x20B210DE"),
    (lambda doc, entry: entry.update({"mig-enabled": "yes"}), "mig-enabled: got 'yes'"),
    (lambda doc, entry: entry.pop("mig-devices"), "mig-devices is required when mig-enabled is true"),
    (lambda doc, entry: entry.update({"mig-enabled": False}), "mig-devices must be empty when mig-enabled is false"),
    (lambda doc, entry: entry.update({"mig-devices": {"1g.10gb": -1}}), "mig-devices.1g.10gb: got -1"),
    (lambda doc, entry: entry.update({"mig-devices": {"tiny": 1}}), "'tiny' is not a MIG profile name"),
    (lambda doc, entry: entry.update(extra=True), "mig-configs.all-1g.10gb[0]: unexpected field extra"),
])
def test_what_mig_parted_refuses_is_refused_with_its_path(fleet, change, fragment):
    with pytest.raises(MigPartedError) as error:
        load_config(_with(fleet, "all-1g.10gb", change), "all-1g.10gb")
    assert fragment in str(error.value)


def test_an_unknown_config_name_lists_the_file_s_configs(fleet):
    with pytest.raises(MigPartedError) as error:
        load_config(fleet, "all-2g.20gb")
    assert "no config 'all-2g.20gb'; the file has: all-1g.10gb, all-disabled" in str(error.value)


def test_a_config_without_entries_is_refused(fleet):
    document = copy.deepcopy(fleet)
    document["mig-configs"]["empty"] = []
    with pytest.raises(MigPartedError) as error:
        load_config(document, "empty")
    assert "at least one entry is required" in str(error.value)


def test_mig_devices_may_be_empty_when_disabled(fleet):
    document = copy.deepcopy(fleet)
    document["mig-configs"]["all-disabled"][0]["mig-devices"] = {}
    assert load_config(document, "all-disabled")[0]["mig_enabled"] is False
