# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Slurm proof needs Docker and the lab image (`make lab`); under CI it fails without them."""

from __future__ import annotations

import os
import shutil

import pytest


def pytest_collection_modifyitems(config, items):  # pylint: disable=unused-argument
    if shutil.which("docker"):
        return
    if os.environ.get("CI"):
        raise pytest.UsageError("the Slurm proof needs docker and the lab image; run `make lab` first")
    for item in items:
        item.add_marker(pytest.mark.skip(reason="docker is not installed"))
