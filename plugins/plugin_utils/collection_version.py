# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's version, from galaxy.yml's version: MANIFEST.json in an installed collection (which
ansible-galaxy builds from galaxy.yml), galaxy.yml itself in a checkout."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import yaml

COLLECTION_ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))


def collection_version(root=COLLECTION_ROOT):
    """The version string, or "unknown" when neither file can be read."""
    try:
        with open(os.path.join(root, "MANIFEST.json")) as handle:
            return str(json.load(handle)["collection_info"]["version"])
    except (IOError, OSError, ValueError, KeyError, TypeError):
        pass
    try:
        with open(os.path.join(root, "galaxy.yml")) as handle:
            return str(yaml.safe_load(handle)["version"])
    except (IOError, OSError, yaml.YAMLError, KeyError, TypeError):
        return "unknown"
