# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""-i with a MIG device UUID: real nvidia-smi answers "No devices were found".

Public reports of real hosts show `nvidia-smi -i MIG-<uuid>` (with and without
--query-gpu) printing "No devices were found": -i takes GPU indexes, GPU UUIDs and PCI
bus ids only, and MIG devices are reached through their parent GPU. The exit code 6
is nvidia-smi's "A query to find an object was unsuccessful".
"""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import single_gpu

H100 = "NVIDIA H100 80GB HBM3"


@pytest.fixture
def mig_path(make_state, smi):
    path = make_state("dgx_h100", single_gpu(H100, "0000:18:00.0", "Enabled"))
    assert smi(path, "mig", "-cgi", "9,19", "-C")[0] == 0
    return path


def mig_uuids(smi, path):
    _rc, out, _err = smi(path, "-L")
    return [line.rsplit("(UUID: ", 1)[1].rstrip(")") for line in out.splitlines() if line.lstrip().startswith("MIG ")]


@pytest.mark.parametrize("argv", [
    ["--query-gpu=uuid,mig.mode.current", "--format=csv,noheader"],
    ["-q", "-x"],
    [],
    ["-c", "0"],
    ["-r"],
])
def test_a_mig_uuid_in_minus_i_names_no_device(mig_path, smi, argv):
    uuids = mig_uuids(smi, mig_path)
    assert len(uuids) == 2 and all(u.startswith("MIG-") for u in uuids)
    assert smi(mig_path, "-i", uuids[0], *argv) == (6, "No devices were found\n", "")


def test_a_mig_uuid_in_mig_minus_i_names_no_device(mig_path, smi):
    uuid = mig_uuids(smi, mig_path)[1]
    assert smi(mig_path, "mig", "-i", uuid, "-lgi") == (6, "No devices were found\n", "")


def test_the_parent_gpu_uuid_still_selects_the_gpu(mig_path, smi):
    _rc, out, _err = smi(mig_path, "-L")
    parent = out.splitlines()[0].rsplit("(UUID: ", 1)[1].rstrip(")")
    assert smi(mig_path, "-i", parent, "--query-gpu=mig.mode.current", "--format=csv,noheader") == (0, "Enabled\n", "")
    assert smi(mig_path, "mig", "-i", parent, "-lgi")[0] == 0
