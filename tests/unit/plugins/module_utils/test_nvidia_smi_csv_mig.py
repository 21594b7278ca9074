# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The --query-gpu / --query-compute-apps csv parser and the MIG create-output parser on the project's own samples."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import nvidia_smi

# ------------------------------------------------------------------ --query-gpu / --query-compute-apps csv

QUERY = (
    "index, name, memory.total [MiB], power.draw [W], mig.mode.current\n"
    "0, NVIDIA A100-SXM4-40GB, 40960 MiB, 54.12 W, Enabled\n"
    "1, NVIDIA A100-SXM4-40GB, 40960 MiB, [N/A], [Not Supported]\n"
)
QUERY_ROWS = [
    {"index": "0", "name": "NVIDIA A100-SXM4-40GB", "memory.total": "40960 MiB",
     "power.draw": "54.12 W", "mig.mode.current": "Enabled"},
    {"index": "1", "name": "NVIDIA A100-SXM4-40GB", "memory.total": "40960 MiB",
     "power.draw": None, "mig.mode.current": None},
]


def test_query_csv_rows_keyed_by_field_without_unit():
    assert nvidia_smi.parse_query_csv(QUERY) == QUERY_ROWS


@pytest.mark.parametrize("copy", [
    lambda text: text.replace("\n", "\r\n"),
    lambda text: "\ufeff" + text,
    lambda text: "\n\n" + text.replace("\n", "\n\n") + "\n",
    lambda text: text.replace(", ", ",   ").replace("\n", "   \n"),
    lambda text: text.replace(", ", ","),
    lambda text: "WARNING: infoROM is corrupted at gpu 0000:07:00.0\n" + text,
    lambda text: "Warning: MIG mode is in pending enable state for GPU 00000000:07:00.0:In use\n" + text,
    lambda text: text + "Failed to query GPU 2: Unknown Error\nAll done.\n",
    lambda text: text + text.splitlines(True)[0],
], ids=["crlf", "bom", "blank-lines", "extra-spaces", "no-spaces", "warning-before",
        "mig-warning-before", "messages-after", "header-repeated"])
def test_query_csv_survives_copies(copy):
    assert nvidia_smi.parse_query_csv(copy(QUERY)) == QUERY_ROWS


def test_query_csv_unavailable_spellings_are_none():
    text = "power.draw [W], fan.speed [%], ecc.mode.current, clocks.max.sm [MHz]\nN/A, Not Supported, [N/A], [Not Supported]\n"
    assert nvidia_smi.parse_query_csv(text) == [
        {"power.draw": None, "fan.speed": None, "ecc.mode.current": None, "clocks.max.sm": None}]


def test_query_csv_quoted_cell_keeps_its_comma():
    text = 'index, name\n0, "Card, rev 2"\n'
    assert nvidia_smi.parse_query_csv(text) == [{"index": "0", "name": "Card, rev 2"}]


def test_query_csv_line_with_other_cell_count_is_not_a_row():
    text = "index, name\n0, NVIDIA L40S\n1, NVIDIA L40S, stray\n2\n3, NVIDIA L40S\n"
    assert [row["index"] for row in nvidia_smi.parse_query_csv(text)] == ["0", "3"]


def test_query_csv_single_field_ignores_messages():
    text = ("name\nNVIDIA H100 80GB HBM3\nUnable to determine the device handle for GPU 0000:41:00.0: Unknown Error\n"
            "Error: timeout\nNo devices were found\n")
    assert nvidia_smi.parse_query_csv(text) == [{"name": "NVIDIA H100 80GB HBM3"}]


@pytest.mark.parametrize("text", [
    "Enabled\n",
    "0, NVIDIA A100-SXM4-40GB, 40960 MiB\n1, NVIDIA A100-SXM4-40GB, 40960 MiB\n",
    "00000000:4F:00.0, Disabled\r\n",
    "No devices were found\n",
    "index, name\n",
    "",
    None,
    "index, na\x00me\n0, x\x00\n",
])
def test_query_csv_without_header_or_rows_is_empty(text):
    assert nvidia_smi.parse_query_csv(text) == []


def test_query_csv_compute_apps_keep_commas_in_a_last_process_name():
    text = ("gpu_uuid, pid, used_gpu_memory [MiB], process_name\n"
            "GPU-a, 12, 1024 MiB, /opt/run,v2/python, -u\n"
            "No running processes found\n"
            "GPU-b, 13, [N/A], python3\n")
    assert nvidia_smi.parse_query_csv(text) == [
        {"gpu_uuid": "GPU-a", "pid": "12", "used_gpu_memory": "1024 MiB", "process_name": "/opt/run,v2/python, -u"},
        {"gpu_uuid": "GPU-b", "pid": "13", "used_gpu_memory": None, "process_name": "python3"}]


def test_query_csv_surplus_cells_stay_no_row_before_another_last_field():
    text = "pid, process_name, gpu_uuid\n12, /opt/run,v2/python, GPU-a\n"
    assert nvidia_smi.parse_query_csv(text) == []


def test_query_csv_no_running_processes_is_no_row():
    assert nvidia_smi.parse_query_csv("process_name\nNo running processes found\n") == []


def test_cell_text_and_cell_int():
    row = nvidia_smi.parse_query_csv("index, pid, uuid\n[N/A], 12, GPU-a\n")[0]
    assert [nvidia_smi.cell_text(row, name) for name in ("index", "uuid", "absent")] == ["[N/A]", "GPU-a", "[N/A]"]
    assert [nvidia_smi.cell_int(row, name) for name in ("index", "pid", "uuid", "absent")] == [None, 12, None, None]
    assert nvidia_smi.cell_int({"index": "-1"}, "index") is None


def test_query_csv_second_table_uses_its_own_header():
    text = "index, name\n0, NVIDIA L4\n\nindex, uuid, pstate\n0, GPU-1234, P8\n"
    assert nvidia_smi.parse_query_csv(text) == [
        {"index": "0", "name": "NVIDIA L4"}, {"index": "0", "uuid": "GPU-1234", "pstate": "P8"}]


# ------------------------------------------------------------------ mig -cgi / -cci

CREATED = (
    "Successfully created GPU instance ID  9 on GPU  0 using profile MIG 3g.20gb (ID  9)\n"
    "Successfully created compute instance ID  0 on GPU  0 GPU instance ID  9 using profile MIG 3g.20gb (ID  2)\n"
    "Successfully created GPU instance ID 13 on GPU  1 using profile MIG 1g.10gb+me (ID 20)\n"
    "Successfully created compute instance ID  1 on GPU  1 GPU instance ID 13 using profile MIG 1c.3g.20gb (ID  0)\n"
)
CREATED_RESULT = {
    "gpu_instances": [
        {"gpu": 0, "id": 9, "profile": "3g.20gb", "profile_id": 9},
        {"gpu": 1, "id": 13, "profile": "1g.10gb+me", "profile_id": 20},
    ],
    "compute_instances": [
        {"gpu": 0, "gpu_instance": 9, "id": 0, "profile": "3g.20gb", "profile_id": 2},
        {"gpu": 1, "gpu_instance": 13, "id": 1, "profile": "1c.3g.20gb", "profile_id": 0},
    ],
    "errors": [],
}


def test_mig_created_instances():
    assert nvidia_smi.parse_mig_command_output(CREATED) == CREATED_RESULT


@pytest.mark.parametrize("copy", [
    lambda text: text.replace("\n", "\r\n"),
    lambda text: "\n" + text.replace("\n", "\n\n"),
    lambda text: text.replace("  ", " ").replace("(ID ", "(ID"),
    lambda text: "  " + text.replace("\n", "   \n  "),
    lambda text: "Warning: persistence mode is disabled on device 00000000:07:00.0.\n" + text + "All done.\n",
    lambda text: text + "Successfully destroyed compute instance ID  1 from GPU  1 GPU instance ID 13\n"
                        "Successfully destroyed GPU instance ID 13 from GPU  1\n",
], ids=["crlf", "blank-lines", "single-spaces", "indented", "warnings", "destroy-lines"])
def test_mig_created_instances_survive_copies(copy):
    assert nvidia_smi.parse_mig_command_output(copy(CREATED)) == CREATED_RESULT


def test_mig_profile_without_mig_prefix():
    text = "Successfully created GPU instance ID  1 on GPU  0 using profile 7g.80gb (ID  0)\n"
    assert nvidia_smi.parse_mig_command_output(text)["gpu_instances"] == [
        {"gpu": 0, "id": 1, "profile": "7g.80gb", "profile_id": 0}]


ERRORS = [
    "Unable to create a GPU instance on GPU  0 using profile 19: Insufficient Resources",
    "Failed to create GPU instances: Insufficient Resources",
    "Unable to create a compute instance on GPU  0 GPU instance ID  1 using profile 2: Insufficient Resources",
    "Failed to create compute instances: Insufficient Resources",
    "Failed to create GPU instances: Insufficient Permissions",
    "No MIG-enabled devices found.",
    "No GPU instances found: Not Found",
    "Failed to initialize NVML: Driver/library version mismatch",
    "ERROR: Option -x is not recognized. Please run 'nvidia-smi -h'.",
    "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.",
]


def test_mig_errors_verbatim_in_order():
    text = "\r\n".join("  %s  " % line for line in ERRORS) + "\r\n"
    assert nvidia_smi.parse_mig_command_output(text) == {
        "gpu_instances": [], "compute_instances": [], "errors": ERRORS}


def test_mig_partial_success_keeps_instances_and_errors():
    text = CREATED.splitlines(True)[0] + ERRORS[0] + "\n" + ERRORS[1] + "\n"
    result = nvidia_smi.parse_mig_command_output(text)
    assert result["gpu_instances"] == CREATED_RESULT["gpu_instances"][:1]
    assert result["errors"] == ERRORS[:2]


@pytest.mark.parametrize("text", [
    "", None,
    "Warning: MIG mode is in pending disable state for GPU 00000000:C1:00.0:In use by another client\n"
    "Reboot the system or try nvidia-smi --gpu-reset to make MIG mode effective on GPU 00000000:C1:00.0\nAll done.\n",
    "Enabled MIG Mode for GPU 00000000:B7:00.0\nAll done.\n",
    "Successfully destroyed GPU instance ID  5 from GPU  3\n",
    "Successfully created GPU instance ID on GPU  0 using profile MIG 3g.20gb\n",
])
def test_mig_lines_it_does_not_know_are_ignored(text):
    assert nvidia_smi.parse_mig_command_output(text) == {"gpu_instances": [], "compute_instances": [], "errors": []}
