# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The MPS helpers: the GPU and process queries (on the emulator's output), GPU sets, and the rendered files."""

from __future__ import annotations

import json

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import mps
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import enable_mig, single_gpu

PROFILES = sorted(api.PROFILES)
UUIDS = ["GPU-aaaa1111-0000-4000-8000-000000000000", "GPU-aaaa2222-0000-4000-8000-000000000000",
         "GPU-bbbb3333-0000-4000-8000-000000000000"]
BINARIES = {"nvidia-smi": "/usr/bin/nvidia-smi", "nvidia-cuda-mps-control": "/usr/bin/nvidia-cuda-mps-control",
            "sh": "/bin/sh", "systemd-tmpfiles": "/usr/bin/systemd-tmpfiles"}


def _gpu(index, cap=(9, 0), mig=False, mode="Default"):
    return {"index": index, "uuid": UUIDS[index], "compute_mode": mode, "compute_cap": cap, "mig": mig}


GPUS = [_gpu(0), _gpu(1), _gpu(2)]


def _query(tmp_path, profile, args, edit=None):
    state = api.new_state(profile)
    if edit:
        edit(state)
    path = str(tmp_path / "state.json")
    api.write_state(state, path)
    rc, out, err = api.run("nvidia-smi", args, path)
    assert rc == 0, err
    return state, out


# ------------------------------------------------------------------ queries


@pytest.mark.parametrize("profile", PROFILES)
def test_parse_gpus_reads_every_emulated_profile(tmp_path, profile):
    state, out = _query(tmp_path, profile, mps.QUERY_GPUS)
    parsed = mps.parse_gpus(out)
    assert [(gpu["index"], gpu["uuid"], gpu["compute_mode"]) for gpu in parsed] == \
        [(index, gpu["uuid"], gpu["compute_mode"]) for index, gpu in enumerate(state["gpus"])]
    # Every profile's GPUs are Volta or newer, with a capability nvidia-smi prints as major.minor.
    assert all(gpu["compute_cap"] is not None and gpu["compute_cap"] >= (7, 0) for gpu in parsed)
    assert not any(gpu["mig"] for gpu in parsed)


def test_parse_gpus_reads_mig_enabled_and_a_pre_volta_capability(tmp_path):
    _state, out = _query(tmp_path, "a100_8x_mig", mps.QUERY_GPUS, edit=lambda state: enable_mig(state, 1))
    assert [gpu["mig"] for gpu in mps.parse_gpus(out)] == [False, True] + [False] * 6
    _state, out = _query(tmp_path, "l40s_4x", mps.QUERY_GPUS,
                         edit=single_gpu("Tesla P100-PCIE-16GB", "00000000:04:00.0"))
    assert [gpu["compute_cap"] for gpu in mps.parse_gpus(out)] == [(6, 0)]


def test_parse_gpus_takes_an_unknown_capability_as_none_and_skips_other_lines():
    text = ("index, uuid, compute_mode, compute_cap, mig.mode.current\n"
            "0, GPU-a, Default, [N/A], Enabled\n"
            "1, GPU-b, Exclusive_Process, 8.9, [N/A]\n"
            "No devices were found\n"
            "2, GPU-c, Default, 9.x, Disabled\n"
            "[N/A], GPU-d, Default, 9.0, Disabled\n"
            "4, GPU-e, Default\n"
            "5, [N/A], [Not Supported], 9.0, Disabled\n")
    parsed = mps.parse_gpus(text)
    assert parsed == [
        {"index": 0, "uuid": "GPU-a", "compute_mode": "Default", "compute_cap": None, "mig": True},
        {"index": 1, "uuid": "GPU-b", "compute_mode": "Exclusive_Process", "compute_cap": (8, 9), "mig": False},
        {"index": 2, "uuid": "GPU-c", "compute_mode": "Default", "compute_cap": None, "mig": False},
        {"index": 5, "uuid": "[N/A]", "compute_mode": "[N/A]", "compute_cap": (9, 0), "mig": False},
    ]
    assert mps.parse_gpus("") == [] and mps.parse_gpus(None) == []


def test_parse_gpus_needs_the_header():
    assert mps.parse_gpus("0, GPU-a, Default, 9.0, Disabled\n") == []


def test_parse_apps_on_the_emulator_lists_clients_and_servers(tmp_path):
    def processes(state):
        api.add_process(state, gpu=1, pid=51818, name="python3", process_type="M+C")
        api.add_process(state, gpu=1, pid=51819, name="/opt/run,v2/python", process_type="M+C")
        api.add_process(state, gpu=0, pid=4242, name="nvidia-cuda-mps-server")
    state, out = _query(tmp_path, "l40s_4x", mps.QUERY_APPS, edit=processes)
    assert sorted((app["gpu_uuid"], app["pid"], app["name"]) for app in mps.parse_apps(out)) == sorted([
        (state["gpus"][1]["uuid"], 51818, "python3"), (state["gpus"][1]["uuid"], 51819, "/opt/run,v2/python"),
        (state["gpus"][0]["uuid"], 4242, "nvidia-cuda-mps-server")])
    assert mps.parse_apps(_query(tmp_path, "l40s_4x", mps.QUERY_APPS)[1]) == []


def test_parse_apps_keeps_commas_in_the_process_name_and_skips_rows_without_a_pid():
    text = ("gpu_uuid, pid, process_name\n"
            "GPU-a, 12, /opt/run,v2/python\n"
            "No running processes found\n"
            "GPU-b, [N/A], x\n"
            "[N/A], 13, [N/A]\n")
    assert mps.parse_apps(text) == [
        {"gpu_uuid": "GPU-a", "pid": 12, "name": "/opt/run,v2/python"},
        {"gpu_uuid": "[N/A]", "pid": 13, "name": "[N/A]"}]
    assert mps.parse_apps("GPU-a, 12, python3\n") == [] and mps.parse_apps(None) == []


# ------------------------------------------------------------------ GPU sets


def test_empty_sets_are_one_daemon_for_every_gpu():
    assert mps.resolve_sets({}, GPUS) == ({mps.ALL_GPUS: GPUS}, [])
    sets, errors = mps.resolve_sets({}, [])
    assert sets == {} and errors == ["nvidia-smi lists no GPU"]


def test_sets_by_index_uuid_and_unique_prefix():
    sets, errors = mps.resolve_sets({"left": [0, "1"], "right": [UUIDS[2].lower()[:9]]}, GPUS)
    assert errors == []
    assert sets == {"left": [GPUS[0], GPUS[1]], "right": [GPUS[2]]}
    sets, errors = mps.resolve_sets({"one": [UUIDS[1]]}, GPUS)
    assert errors == [] and sets == {"one": [GPUS[1]]}


def test_ambiguous_prefix_and_unknown_index_are_named_with_the_host_gpus():
    sets, errors = mps.resolve_sets({"a": ["GPU-aaaa"], "b": [7]}, GPUS)
    assert sets == {"a": [], "b": []}
    assert errors[0].startswith("mps_gpu_sets.a: GPU GPU-aaaa matches more than one GPU; GPUs on this host: 0 (%s)" % UUIDS[0])
    assert errors[1].startswith("mps_gpu_sets.b: GPU 7 is not on this host; GPUs on this host: 0 (")
    assert "2 (%s)" % UUIDS[2] in errors[1]


def test_a_gpu_in_two_sets_by_index_and_by_uuid_is_refused():
    sets, errors = mps.resolve_sets({"a": [1], "b": [UUIDS[1], 2]}, GPUS)
    assert sets == {"a": [GPUS[1]], "b": [GPUS[2]]}
    assert errors == ["mps_gpu_sets.b: GPU 1 (%s) is already in set a; a GPU can serve one MPS daemon" % UUIDS[1]]


def test_mig_refusals_name_each_mig_gpu_and_the_way_out():
    sets = {"a": [_gpu(0, mig=True), _gpu(1)], "b": [_gpu(2, mig=True)]}
    refusals = mps.mig_refusals(sets)
    assert len(refusals) == 2
    assert refusals[0].startswith("MPS daemon a: GPU 0 (%s) is in MIG mode" % UUIDS[0])
    assert refusals[1].startswith("MPS daemon b: GPU 2 (%s) is in MIG mode" % UUIDS[2])
    assert all("mps_allow_mig" in refusal for refusal in refusals)
    assert mps.mig_refusals({"a": [_gpu(0)]}) == []


@pytest.mark.parametrize("caps, expected", [
    ([(7, 0)], True),
    ([(9, 0), (8, 9)], True),
    ([(9, 0), (6, 0)], False),
    ([(6, 1)], False),
    ([None], False),
    ([(9, 0), None], False),
])
def test_supports_multiuser_needs_volta_on_every_gpu(caps, expected):
    assert mps.supports_multiuser([_gpu(0, cap=cap) for cap in caps]) is expected


# ------------------------------------------------------------------ names and paths


@pytest.mark.parametrize("unit, name", [
    ("gpuops-mps-all.service", "all"),
    ("gpuops-mps-left_0.service", "left_0"),
    ("gpuops-mps-.service", None),
    ("gpuops-mps-all.timer", None),
    ("nvidia-persistenced.service", None),
])
def test_daemon_name_recognises_only_this_modules_units(unit, name):
    assert mps.daemon_name(unit) == name


def test_unit_name_and_daemon_name_round_trip():
    assert mps.daemon_name(mps.unit_name("right")) == "right"


def test_paths_put_each_daemon_below_the_folders():
    assert mps.paths("left", "/run/nvidia-mps/", "/var/log/nvidia-mps") == {
        "unit": "/etc/systemd/system/gpuops-mps-left.service",
        "commands": "/etc/gpuops-hardening/mps/left.commands",
        "env": "/etc/gpuops-hardening/mps/left.env",
        "pipe_directory": "/run/nvidia-mps/left",
        "log_directory": "/var/log/nvidia-mps/left",
    }


# ------------------------------------------------------------------ the unit


def _unit(exclusive_modes=(), multiuser=True, binaries=None, gpus=None):
    return mps.render_unit("left", gpus or GPUS[:2], mps.paths("left", "/run/nvidia-mps", "/var/log/nvidia-mps"),
                           binaries or BINARIES, list(exclusive_modes), multiuser)


def _lines(text, key):
    return [line[len(key) + 1:] for line in text.splitlines() if line.startswith(key + "=")]


def test_unit_sets_and_restores_the_compute_mode_of_each_gpu():
    unit = _unit(exclusive_modes=[(UUIDS[0], "Prohibited"), (UUIDS[1], "Default")])
    assert _lines(unit, "ExecStartPre") == [
        "/usr/bin/systemd-tmpfiles --create /etc/tmpfiles.d/gpuops-mps.conf",
        "/usr/bin/nvidia-smi -i %s -c EXCLUSIVE_PROCESS" % UUIDS[0],
        "/usr/bin/nvidia-smi -i %s -c EXCLUSIVE_PROCESS" % UUIDS[1],
    ]
    # nvidia-smi prints Prohibited but takes PROHIBITED.
    assert _lines(unit, "ExecStopPost") == [
        "/usr/bin/nvidia-smi -i %s -c PROHIBITED" % UUIDS[0],
        "/usr/bin/nvidia-smi -i %s -c DEFAULT" % UUIDS[1],
    ]


def test_the_modes_a_unit_sets_at_stop_are_read_back_from_it():
    unit = _unit(exclusive_modes=[(UUIDS[0], "Prohibited"), (UUIDS[1], "[N/A]")])
    assert mps.modes_set_at_stop(unit) == {UUIDS[0]: "Prohibited", UUIDS[1]: "Default"}
    assert mps.modes_set_at_stop(_unit()) == {} and mps.modes_set_at_stop(None) == {}


def test_unit_restores_an_unknown_recorded_mode_as_default():
    unit = _unit(exclusive_modes=[(UUIDS[0], "Exclusive_Thread"), (UUIDS[1], "[N/A]")])
    assert _lines(unit, "ExecStopPost") == ["/usr/bin/nvidia-smi -i %s -c EXCLUSIVE_THREAD" % UUIDS[0],
                                            "/usr/bin/nvidia-smi -i %s -c DEFAULT" % UUIDS[1]]


def test_unit_without_exclusive_process_or_systemd_tmpfiles():
    unit = _unit(binaries=dict(BINARIES, **{"systemd-tmpfiles": None}))
    assert _lines(unit, "ExecStartPre") == [] and _lines(unit, "ExecStopPost") == []
    assert "tmpfiles" not in unit.split("[Service]")[1]


def test_unit_environment_and_start_lines():
    unit = _unit()
    assert mps.unit_environment(unit) == {
        "CUDA_MPS_PIPE_DIRECTORY": "/run/nvidia-mps/left",
        "CUDA_MPS_LOG_DIRECTORY": "/var/log/nvidia-mps/left",
        "CUDA_VISIBLE_DEVICES": "%s,%s" % (UUIDS[0], UUIDS[1]),
    }
    assert _lines(unit, "PIDFile") == ["/run/nvidia-mps/left/nvidia-cuda-mps-control.pid"]
    assert _lines(unit, "Type") == ["forking"]
    assert _lines(unit, "ExecStart") == ["/usr/bin/nvidia-cuda-mps-control -d -multiuser-server"]
    assert _lines(_unit(multiuser=False), "ExecStart") == ["/usr/bin/nvidia-cuda-mps-control -d"]
    assert "< /etc/gpuops-hardening/mps/left.commands" in _lines(unit, "ExecStartPost")[0]
    assert _lines(unit, "ExecStop") == ["-/bin/sh -c 'echo quit | /usr/bin/nvidia-cuda-mps-control'"]
    assert unit.startswith(mps.managed_header("mps") + "\n")
    assert unit.endswith("[Install]\nWantedBy=multi-user.target\n")


def test_unit_has_nothing_systemd_would_expand():
    """systemd expands $VAR and %x in Exec and Environment lines: a shell loop must not use either."""
    unit = _unit(exclusive_modes=[(UUIDS[0], "Default"), (UUIDS[1], "Prohibited")])
    assert "$" not in unit and "%" not in unit


def test_unit_environment_of_another_text():
    assert mps.unit_environment(None) == {}
    assert mps.unit_environment("[Service]\nEnvironment=A=b=c\n Environment=B=1\n") == {"A": "b=c"}


# ------------------------------------------------------------------ other files


def test_render_commands_sets_the_percentage_and_each_visible_device():
    assert mps.render_commands(50, "", 2) == "set_default_active_thread_percentage 50\n"
    assert mps.render_commands(100, "8G", 3) == (
        "set_default_active_thread_percentage 100\n"
        "set_default_device_pinned_mem_limit 0 8G\n"
        "set_default_device_pinned_mem_limit 1 8G\n"
        "set_default_device_pinned_mem_limit 2 8G\n")


def test_render_tmpfiles_one_line_per_directory():
    text = mps.render_tmpfiles([("/run/nvidia-mps", 0o755, "root", "root"), ("/run/nvidia-mps/all", 0o770, "root", "gpu-mps")])
    assert text.splitlines()[0] == mps.managed_header("mps")
    assert [line for line in text.splitlines() if not line.startswith("#")] == [
        "d /run/nvidia-mps 0755 root root -", "d /run/nvidia-mps/all 0770 root gpu-mps -"]


def test_tmpfiles_folders_reads_back_the_modules_own_entry_only():
    text = mps.render_tmpfiles([("/run/nvidia-mps", 0o755, "root", "root"), ("/run/nvidia-mps/all", 0o770, "root", "gpu-mps")])
    assert mps.tmpfiles_folders(text) == ["/run/nvidia-mps", "/run/nvidia-mps/all"]
    # An operator's file at the same path names folders the module did not make.
    assert mps.tmpfiles_folders("d /var/log 0755 root root -\n") == [] and mps.tmpfiles_folders(None) == []


@pytest.mark.parametrize("path, normal", [
    ("/var/log", "/var/log"), ("/var/log/", "/var/log"), ("//var//log", "/var/log"), ("/var/lib/../log", "/var/log"),
    ("/", "/"), ("var/log", "/var/log"), ("/run/nvidia-mps/all", "/run/nvidia-mps/all")])
def test_normal_folder_compares_folder_names_as_the_file_system_would(path, normal):
    assert mps.normal_folder(path) == normal


@pytest.mark.parametrize("path, system", [
    ("/var/log/", True), ("/run", True), ("/", True), ("/var/run", True), ("/etc/..", True),
    ("/var/log/nvidia-mps", False), ("/run/nvidia-mps", False), ("/srv/mps", False)])
def test_is_system_folder(path, system):
    assert mps.is_system_folder(path) is system


@pytest.mark.parametrize("text, folders", [
    (None, []), ("{not json", []), ('["/run/x"]', []), ('{"folders": "/run/x"}', []),
    ('{"folders": ["/run/x", "/var/log/x"]}', ["/run/x", "/var/log/x"])])
def test_load_folders_record_of_any_text(text, folders):
    assert mps.load_folders_record(text) == folders


def test_folders_record_round_trip_is_sorted_without_repeats():
    text = mps.render_folders_record(["/var/log/x", "/run/x", "/run/x"])
    assert text.endswith("\n") and mps.load_folders_record(text) == ["/run/x", "/var/log/x"]


def test_render_env_and_profile_name_the_daemon_directories():
    daemon_paths = mps.paths("all", "/run/nvidia-mps", "/var/log/nvidia-mps")
    env = mps.render_env(daemon_paths).splitlines()
    profile = mps.render_profile(daemon_paths).splitlines()
    assert env == [mps.managed_header("mps"), "CUDA_MPS_PIPE_DIRECTORY=/run/nvidia-mps/all",
                   "CUDA_MPS_LOG_DIRECTORY=/var/log/nvidia-mps/all"]
    assert profile == [mps.managed_header("mps"), "export CUDA_MPS_PIPE_DIRECTORY=/run/nvidia-mps/all",
                       "export CUDA_MPS_LOG_DIRECTORY=/var/log/nvidia-mps/all"]


@pytest.mark.parametrize("text, record", [
    (None, {}),
    ("", {}),
    ("{not json", {}),
    ("[\"GPU-a\"]", {}),
    ("\"Default\"", {}),
    ('{"GPU-a": "Prohibited", "GPU-b": 0}', {"GPU-a": "Prohibited", "GPU-b": "0"}),
])
def test_load_modes_record_of_any_text(text, record):
    assert mps.load_modes_record(text) == record


def test_modes_record_round_trip_is_sorted_json():
    text = mps.render_modes_record({"GPU-b": "Default", "GPU-a": "Prohibited"})
    assert text.endswith("\n") and list(json.loads(text)) == ["GPU-a", "GPU-b"]
    assert mps.load_modes_record(text) == {"GPU-a": "Prohibited", "GPU-b": "Default"}


def test_parse_server_list():
    assert mps.parse_server_list("4242\n4243\n") == [4242, 4243]
    assert mps.parse_server_list("") == [] and mps.parse_server_list(None) == []


@pytest.mark.parametrize("text, value", [("100.0\n", 100.0), ("25", 25.0), ("50%", 50.0), ("", None),
                                         (None, None), ("Invalid percentage value\n", None)])
def test_parse_percentage(text, value):
    assert mps.parse_percentage(text) == value


@pytest.mark.parametrize("text, mib", [
    ("2G", 2048.0), ("8g", 8192.0), ("512M", 512.0), ("2048 MiB", 2048.0), ("1.5GB", 1536.0),
    ("1T", 1024.0 * 1024), ("1024K", 1.0), ("1048576", 1.0), ("0", 0.0),
    ("", None), (None, None), ("lots", None), ("2 G B", None), ("-1G", None),
])
def test_size_mib(text, mib):
    assert mps.size_mib(text) == mib


def test_sizes_in_different_units_compare_equal():
    assert mps.size_mib("8G") == mps.size_mib("8192M") == mps.size_mib("8192 MiB")


@pytest.mark.parametrize("name, server", [
    ("nvidia-cuda-mps-server", True), ("/usr/bin/nvidia-cuda-mps-server", True),
    ("python3", False), ("/opt/nvidia-cuda-mps-server-wrapper", False),
])
def test_is_server_process_takes_the_bare_name_or_a_path(name, server):
    assert mps.is_server_process(name) is server
