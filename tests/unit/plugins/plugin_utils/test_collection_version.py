# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's version: MANIFEST.json once installed, galaxy.yml in a checkout."""

from __future__ import annotations

import json
import os

import yaml

from ansible_collections.gpuops.hardening.plugins.plugin_utils.collection_version import COLLECTION_ROOT, collection_version


def test_a_checkout_gives_galaxy_yml_s_version():
    with open(os.path.join(COLLECTION_ROOT, "galaxy.yml")) as handle:
        assert collection_version() == str(yaml.safe_load(handle)["version"])


def test_an_installed_collection_gives_its_manifest_s_version(tmp_path):
    (tmp_path / "MANIFEST.json").write_text(json.dumps({"collection_info": {"version": "9.8.7"}}))
    (tmp_path / "galaxy.yml").write_text("version: 1.0.0\n")
    assert collection_version(str(tmp_path)) == "9.8.7"


def test_neither_file_gives_unknown(tmp_path):
    assert collection_version(str(tmp_path)) == "unknown"
