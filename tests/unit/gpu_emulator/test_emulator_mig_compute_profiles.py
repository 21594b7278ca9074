# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi mig -lcip and compute-instance profiles by name in -cci.

No capture of -lcip is in the real fixtures; the expected rows are those of the MIG
user guide's "nvidia-smi mig -lcip -gi 1" example (A100-SXM4-40GB, 3g.20gb GPU
instances) and of real listings for 4g and A100-80GB GPU instances (blog posts named
in models.json).
"""

from __future__ import annotations

import re

from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import body_lines, single_gpu

A100_40GB = "NVIDIA A100-SXM4-40GB"
A100_80GB = "NVIDIA A100-SXM4-80GB"


def a100_mig(make_state, model=A100_40GB):
    return make_state("a100_8x_mig", single_gpu(model, "0000:00:03.0", "Enabled"))


def profile_rows(out):
    """(gpu, gi, name, profile id with its '*', free/total, sm) of each -lcip row."""
    return re.findall(r"^\|\s+(\d+)\s+(\d+)\s+MIG (\S+)\s+(\d+\*?)\s+(\d+/\d+)\s+(\d+)\s+\d+\s+\d+\s+\d+\s+\|$", out, re.M)


def test_lcip_layout_and_rows_follow_the_mig_user_guide(make_state, smi):
    path = a100_mig(make_state)
    smi(path, "mig", "-cgi", "9,9")
    rc, out, _err = smi(path, "mig", "-i", "0", "-lcip", "-gi", "2")
    assert rc == 0
    lines = body_lines(out)
    assert {len(line) for line in lines} == {88}
    assert lines[1].startswith("| Compute instance profiles:")
    assert lines[2].split() == ["|", "GPU", "GPU", "Name", "Profile", "Instances", "Exclusive", "Shared", "|"]
    assert lines[3].split() == ["|", "Instance", "ID", "Free/Total", "SM", "DEC", "ENC", "OFA", "|"]
    assert lines[4].split() == ["|", "ID", "CE", "JPEG", "|"]
    assert lines[5] == "|" + "=" * 86 + "|"
    assert profile_rows(out) == [
        ("0", "2", "1c.3g.20gb", "0", "3/3", "14"),
        ("0", "2", "2c.3g.20gb", "1", "1/1", "28"),
        ("0", "2", "3g.20gb", "2*", "1/1", "42"),
    ]
    # The shared engines (CE 3, JPEG 0) on the second line of each row, under CE and JPEG.
    assert lines[7] == "|" + " " * 70 + "3     0" + " " * 9 + "|"
    assert lines[7].index("3") == lines[4].index("CE") + 1


def test_lcip_free_counts_drop_as_compute_instances_are_created(make_state, smi):
    path = a100_mig(make_state)
    smi(path, "mig", "-cgi", "9,9")
    smi(path, "mig", "-cci", "-gi", "1")
    rc, out, _err = smi(path, "mig", "-lcip")
    assert rc == 0
    # As the guide's listing after "-cgi 9,3g.20gb -C": a full compute instance leaves none free.
    assert [row[1:5] for row in profile_rows(out)] == [
        ("1", "1c.3g.20gb", "0", "0/3"), ("1", "2c.3g.20gb", "1", "0/1"), ("1", "3g.20gb", "2*", "0/1"),
        ("2", "1c.3g.20gb", "0", "3/3"), ("2", "2c.3g.20gb", "1", "1/1"), ("2", "3g.20gb", "2*", "1/1"),
    ]
    smi(path, "mig", "-cci", "0", "-gi", "2")
    rows = profile_rows(smi(path, "mig", "-lcip", "-gi", "2")[1])
    # The 1c takes slice 0, the only start of a 2c in a 3-slice GPU instance (mig._ci_starts).
    assert [row[4] for row in rows] == ["2/3", "0/1", "0/1"]


def test_lcip_offers_per_gpu_instance_size(make_state, smi):
    path = a100_mig(make_state, A100_80GB)
    smi(path, "mig", "-cgi", "0")
    rows = profile_rows(smi(path, "mig", "-lcip")[1])
    assert [(row[2], row[3], row[4]) for row in rows] == [
        ("1c.7g.80gb", "0", "7/7"), ("2c.7g.80gb", "1", "3/3"), ("3c.7g.80gb", "2", "2/2"),
        ("4c.7g.80gb", "3", "1/1"), ("7g.80gb", "4*", "1/1"),
    ]
    smi(path, "mig", "-dgi")
    smi(path, "mig", "-cgi", "5,9")
    rows = profile_rows(smi(path, "mig", "-lcip")[1])
    # A 4g offers no 3c profile; A100-80GB SMs per compute slice are 14, as on the 40GB.
    assert [(row[2], row[3], row[4], row[5]) for row in rows] == [
        ("1c.3g.40gb", "0", "3/3", "14"), ("2c.3g.40gb", "1", "1/1", "28"), ("3g.40gb", "2*", "1/1", "42"),
        ("1c.4g.40gb", "0", "4/4", "14"), ("2c.4g.40gb", "1", "2/2", "28"), ("4g.40gb", "3*", "1/1", "56"),
    ]


def test_lcip_without_gpu_instances(make_state, smi):
    path = a100_mig(make_state)
    assert smi(path, "mig", "-lcip") == (6, "No GPU instances found: Not Found\n", "")
    smi(path, "mig", "-cgi", "9")
    assert smi(path, "mig", "-lcip", "-gi", "1")[0] == 6


def test_cci_takes_profile_names_and_prints_the_profile_name(make_state, smi):
    path = a100_mig(make_state)
    smi(path, "mig", "-cgi", "9,9")
    rc, out, _err = smi(path, "mig", "-cci", "1c.3g.20gb,MIG 1c.3g.20gb,0", "-gi", "2")
    assert rc == 0
    # The success line of the MIG user guide's "-cci 0,0,0 -gi 1" example.
    assert out.splitlines() == [
        "Successfully created compute instance ID  %d on GPU  0 GPU instance ID  2 using profile MIG 1c.3g.20gb (ID  0)" % n
        for n in range(3)
    ]
    rc, out, _err = smi(path, "mig", "-cci", "3g.20gb", "-gi", "1")
    assert (rc, out) == (0, "Successfully created compute instance ID  0 on GPU  0 GPU instance ID  1 "
                            "using profile MIG 3g.20gb (ID  2)\n")


def test_cci_refuses_a_profile_the_gpu_instance_does_not_offer(make_state, smi):
    path = a100_mig(make_state)
    smi(path, "mig", "-cgi", "5")
    for token in ("3c.4g.20gb", "2", "1c.3g.20gb"):
        rc, out, _err = smi(path, "mig", "-cci", token, "-gi", "2")
        assert rc == 255
        assert out == ("Unable to create a compute instance on GPU  0 GPU instance ID  2 using profile %s: Invalid Argument\n"
                       "Failed to create compute instances: Invalid Argument\n" % token)
    assert smi(path, "mig", "-lci")[0] == 6


def test_cci_without_a_profile_in_a_full_gpu_instance(make_state, smi):
    path = a100_mig(make_state)
    smi(path, "mig", "-cgi", "9", "-C")
    # The default profile is the whole GPU instance (2, "3c"); naming it in the refusal is an assumption.
    assert smi(path, "mig", "-cci", "-gi", "2") == (
        255, "Unable to create a compute instance on GPU  0 GPU instance ID  2 using profile 2: Insufficient Resources\n"
        "Failed to create compute instances: Insufficient Resources\n", "")
