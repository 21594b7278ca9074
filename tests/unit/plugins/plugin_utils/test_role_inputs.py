# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation engine against the roles' real files: one source per kind of rule, and every message."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpuops.hardening.plugins.plugin_utils.role_inputs import (
    COLLECTION_ROLE,
    PROFILE_VARIABLE,
    check_collection,
    input_names,
    load_roles,
)

ROLES_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles")


ROLES = load_roles(ROLES_DIR)
TUNING_ROLES = sorted(name for name in ROLES if name != COLLECTION_ROLE)


def _errors(given):
    return check_collection(ROLES, given)[0]


def _inputs(given, role):
    errors, _profile, inputs = check_collection(ROLES, given)
    assert errors == []
    return inputs[role]


def test_every_role_with_an_argument_spec_is_found():
    assert {"validate", "sysctl", "thp", "memlock", "numa_binding", "persistenced", "mps", "mig"} <= set(ROLES)


@pytest.mark.parametrize("name", sorted(ROLES))
def test_argument_specs_hold_types_and_choices_but_no_defaults(name):
    for option, spec in ROLES[name].options.items():
        # gpuops_profile belongs to the collection, not to a role's defaults/main.yml.
        if name != COLLECTION_ROLE:
            assert "default" not in spec, "%s: the default belongs in defaults/main.yml" % option
        assert "type" in spec, option


@pytest.mark.parametrize("name", sorted(ROLES))
def test_every_input_has_one_default_source(name):
    role = ROLES[name]
    profile_names = set()
    for entry in role.profiles.values():
        profile_names.update(entry)
    options = set(role.options)
    # Each input is either a role default or a value of every profile, never both.
    if name == COLLECTION_ROLE:
        assert all(role.defaults[option] == spec["default"] for option, spec in role.options.items())
        return
    for option in options:
        from_profiles = option in profile_names
        assert from_profiles != (option in role.defaults), option
        if from_profiles:
            assert all(option in entry for entry in role.profiles.values()), option
    assert set(role.defaults) <= options, "defaults without an argument spec entry: %s" % (set(role.defaults) - options)


@pytest.mark.parametrize("name", sorted(ROLES))
def test_defaults_are_plain_values(name):
    # The engine reads defaults without templating them.
    assert "{{" not in repr(ROLES[name].defaults)


def test_profiles_cover_the_profile_choices():
    choices = ROLES[COLLECTION_ROLE].options[PROFILE_VARIABLE]["choices"]
    for name in TUNING_ROLES:
        if ROLES[name].profiles:
            assert sorted(ROLES[name].profiles) == sorted(choices), name


def test_defaults_are_valid_and_follow_the_profile():
    errors, profile, inputs = check_collection(ROLES, {})
    assert errors == [] and profile == "training"
    assert inputs["thp"]["thp_enabled"] == "always"
    assert inputs["sysctl"]["sysctl_settings"]["vm.swappiness"] == 0
    assert all(inputs[name][PROFILE_VARIABLE] == "training" for name in TUNING_ROLES)


def test_inference_profile_and_a_single_override():
    thp = _inputs({"gpuops_profile": "inference", "thp_defrag": "never"}, "thp")
    assert (thp["thp_enabled"], thp["thp_defrag"], thp["thp_khugepaged_defrag"]) == ("madvise", "never", False)


def test_values_are_converted_to_their_types():
    thp = _inputs({"thp_persist": "no", "thp_khugepaged_defrag": "yes"}, "thp")
    assert thp["thp_persist"] is False and thp["thp_khugepaged_defrag"] is True
    numa = _inputs({"numa_binding_nvidia_smi_timeout": "45"}, "numa_binding")
    assert numa["numa_binding_nvidia_smi_timeout"] == 45
    assert _inputs({"memlock_limit": 65536}, "memlock")["memlock_limit"] == "65536"


def test_persistenced_defaults_and_a_timeout_at_the_limit():
    assert _inputs({}, "persistenced") == {
        "persistenced_unmask": False, "persistenced_require_gpu": True, "persistenced_timeout": 120, "gpuops_profile": "training"}
    assert _inputs({"persistenced_timeout": 600}, "persistenced")["persistenced_timeout"] == 600


def test_sysctl_settings_merge_over_the_profile_by_canonical_key():
    settings = _inputs({"sysctl_settings": {"vm/swappiness": 10, "vm.max_map_count": None, "kernel.nmi_watchdog": 0}},
                       "sysctl")["sysctl_settings"]
    assert settings["vm.swappiness"] == 10
    assert "vm.max_map_count" not in settings
    assert settings["kernel.nmi_watchdog"] == 0
    assert "vm/swappiness" not in settings


def test_each_variable_name_is_looked_up():
    assert {"thp_defrag", "gpuops_profile", "sysctl_settings", "memlock_limit", "thp_profile"} <= input_names(ROLES)


# (variables set for the host, fragments one message must contain)
BAD_INPUTS = [
    ({"gpuops_profile": "gaming"}, ["gpuops_profile", "gaming", "training, inference"]),
    ({"thp_profile": "inference"}, ["thp_profile", "no longer an input", "gpuops_profile"]),
    ({"sysctl_profile": "inference"}, ["sysctl_profile", "no longer an input", "gpuops_profile"]),
    ({"thp_enabled": "sometimes"}, ["thp role", "thp_enabled", "sometimes", "always, madvise, never"]),
    ({"thp_defrag": "eager"}, ["thp_defrag", "eager", "defer+madvise"]),
    ({"thp_khugepaged_defrag": "maybe"}, ["thp_khugepaged_defrag", "maybe", "bool"]),
    ({"thp_cmdline_conflict_action": "panic"}, ["thp_cmdline_conflict_action", "panic", "warn, fail, ignore"]),
    ({"sysctl_settings": {"vm.swappiness": 300}}, ["sysctl role", '"vm.swappiness": 300', "vm.swappiness: an integer from 0 to 200"]),
    ({"sysctl_settings": {"vm.swappiness": "lots"}}, ['"vm.swappiness": "lots"', "an integer from 0 to 200"]),
    ({"sysctl_settings": {"vm.swappiness": {"value": 0}}}, ['{"vm.swappiness": {"value": 0}}', "integers or one-line strings"]),
    ({"sysctl_settings": {"vm.swappiness": "0\nvm.overcommit_memory = 2"}}, ["integers or one-line strings"]),
    ({"sysctl_settings": {"net.ipv4.conf.*.rp_filter": 1}}, ['["net.ipv4.conf.*.rp_filter"]', "no globs"]),
    ({"sysctl_settings": {"swappiness": 1}}, ['["swappiness"]', "at least two parts"]),
    ({"sysctl_settings": {"vm.dirty_ratio": 10}}, ['"vm.dirty_ratio": 10', "not both of a pair"]),
    ({"sysctl_settings": {"vm.dirty_background_bytes": 9999999999}}, ["vm.dirty_background_bytes below vm.dirty_bytes"]),
    ({"sysctl_settings": "not a mapping"}, ["sysctl_settings", "dict"]),
    ({"sysctl_boot_conflict_action": "panic"}, ["sysctl_boot_conflict_action", "panic", "warn, fail, ignore"]),
    ({"sysctl_swapoff_margin_mib": -512}, ["sysctl_swapoff_margin_mib", "got -512", "at least 0"]),
    ({"sysctl_swapoff_margin_mib": "lots"}, ["sysctl_swapoff_margin_mib", "lots", "int"]),
    ({"sysctl_disable_swap": "maybe"}, ["sysctl_disable_swap", "maybe", "bool"]),
    ({"memlock_limit": "abc"}, ["memlock role", "memlock_limit", "abc", "unlimited or a positive integer"]),
    ({"memlock_limit": 0}, ["memlock_limit", "got 0", "unlimited or a positive integer"]),
    ({"memlock_limit": "64K"}, ["memlock_limit", "64K"]),
    ({"memlock_limit": True}, ["memlock_limit", "True"]),
    ({"memlock_limit": 9007199254740992}, ["memlock_limit", "9007199254740992", "up to 9007199254740991"]),
    ({"memlock_service_units": ["docker"]}, ["memlock_service_units", '["docker"]', "service unit names"]),
    ({"memlock_limits_domain": "bad domain"}, ["memlock_limits_domain", '"bad domain"', "everyone but root"]),
    ({"memlock_docker_daemon_json": "sometimes"}, ["memlock_docker_daemon_json", "sometimes", "auto, always, never"]),
    ({"memlock_login_sessions": "perhaps"}, ["memlock_login_sessions", "perhaps", "bool"]),
    ({"numa_binding_nvidia_smi_timeout": 0}, ["numa_binding role", "numa_binding_nvidia_smi_timeout", "got 0", "from 1 to 600"]),
    ({"numa_binding_nvidia_smi_timeout": "soon"}, ["numa_binding_nvidia_smi_timeout", "soon", "int"]),
    ({"numa_binding_launcher_path": "bin/gpu-numa-exec"}, ["numa_binding_launcher_path", '"bin/gpu-numa-exec"', "absolute file path"]),
    ({"numa_binding_launcher_path": "/usr/local/bin/"}, ["numa_binding_launcher_path", "absolute file path"]),
    ({"numa_binding_require_gpu": "sure"}, ["numa_binding_require_gpu", "sure", "bool"]),
    ({"persistenced_timeout": 0}, ["persistenced role", "persistenced_timeout", "got 0", "from 1 to 600"]),
    ({"persistenced_timeout": 601}, ["persistenced_timeout", "got 601", "from 1 to 600"]),
    ({"persistenced_timeout": "soon"}, ["persistenced_timeout", "soon", "int"]),
    ({"persistenced_unmask": "please"}, ["persistenced_unmask", "please", "bool"]),
    ({"persistenced_require_gpu": "sure"}, ["persistenced_require_gpu", "sure", "bool"]),
    ({"mps_active_thread_percentage": 0}, ["mps role", "mps_active_thread_percentage", "got 0", "from 1 to 100"]),
    ({"mps_active_thread_percentage": 150}, ["mps_active_thread_percentage", "got 150", "from 1 to 100"]),
    ({"mps_pinned_mem_limit": "2048"}, ["mps_pinned_mem_limit", '"2048"', "followed by M or G", "empty for no limit"]),
    ({"mps_pinned_mem_limit": "2g"}, ["mps_pinned_mem_limit", '"2g"', "followed by M or G"]),
    ({"mps_gpu_sets": {"Left Set": [0]}}, ["mps_gpu_sets", '"Left Set"', "daemon names of lower-case letters"]),
    ({"mps_gpu_sets": {"left": []}}, ["mps_gpu_sets.left", "got []", "a non-empty list of GPU indexes or UUIDs"]),
    ({"mps_gpu_sets": {"left": [True]}}, ["mps_gpu_sets.left", "got true", "a GPU index (0, 1, ...) or UUID"]),
    ({"mps_gpu_sets": {"left": [-1]}}, ["mps_gpu_sets.left", "got -1", "a GPU index (0, 1, ...) or UUID"]),
    ({"mps_gpu_sets": {"left": [0], "right": ["0"]}}, ["mps_gpu_sets.right", '"0"', "one set only", "also in set left"]),
    ({"mps_gpu_sets": {"left": ["GPU-ab"], "right": ["GPU-AB"]}}, ["mps_gpu_sets.right", "also in set left"]),
    ({"mps_gpu_sets": ["0"]}, ["mps_gpu_sets", "dict"]),
    ({"mps_pipe_directory": "run/nvidia-mps"}, ["mps_pipe_directory", '"run/nvidia-mps"', "absolute, normalised folder"]),
    ({"mps_pipe_directory": "/tmp/x"}, ["mps_pipe_directory", '"/tmp/x"', "outside /tmp and /var/tmp"]),
    ({"mps_log_directory": "/var/tmp"}, ["mps_log_directory", '"/var/tmp"', "outside /tmp and /var/tmp"]),
    ({"mps_pipe_directory": "/"}, ["mps_pipe_directory", 'got "/"', "absolute, normalised folder"]),
    ({"mps_pipe_directory": "/run//x"}, ["mps_pipe_directory", '"/run//x"', "normalised"]),
    ({"mps_pipe_directory": "/run/my mps"}, ["mps_pipe_directory", '"/run/my mps"', "without spaces"]),
    ({"mps_log_directory": "/var/log"}, ["mps_log_directory", '"/var/log"', "nor a system folder (", "/var/log,"]),
    ({"mps_pipe_directory": "/run"}, ["mps_pipe_directory", '"/run"', "nor a system folder ("]),
    ({"mps_pipe_directory": "/var/log/nvidia-mps"}, ["mps_log_directory", '"/var/log/nvidia-mps"',
                                                     "a folder other than mps_pipe_directory"]),
    ({"mps_directory_mode": "0777"}, ["mps_directory_mode", '"0777"', "nothing for others", "such as 0770 or 0750"]),
    ({"mps_directory_mode": "0700"}, ["mps_directory_mode", '"0700"', "at least x for the group"]),
    ({"mps_directory_mode": "0670"}, ["mps_directory_mode", '"0670"', "rwx for root"]),
    ({"mps_directory_mode": "abc"}, ["mps_directory_mode", '"abc"', "an octal mode"]),
    ({"mps_directory_mode": "07700"}, ["mps_directory_mode", '"07700"', "an octal mode"]),
    ({"mps_group": "Bad Group"}, ["mps_group", '"Bad Group"', "an account name of lower-case letters"]),
    ({"mps_client_users": ["alice", "Root"]}, ["mps_client_users", '"Root"', "an account name"]),
    ({"mps_timeout": 0}, ["mps_timeout", "got 0", "from 1 to 600"]),
    ({"mps_state": "running"}, ["mps_state", "running", "present, absent"]),
    ({"mps_allow_mig": "perhaps"}, ["mps_allow_mig", "perhaps", "bool"]),
    ({"mig_state": "on"}, ["mig_state", "on", "present, absent"]),
    ({"mig_state": "present"}, ["mig role", "mig_layouts", "got {}", "mig_parted_file and mig_parted_config"]),
    ({"mig_layouts": {"0": {"mig_enabled": True}}, "mig_parted_file": "/etc/mig.yaml", "mig_parted_config": "a"},
     ["mig_parted_file", '"/etc/mig.yaml"', "empty when mig_layouts is set"]),
    ({"mig_parted_file": "/etc/mig.yaml"}, ["mig_parted_config", 'got ""', "set together with mig_parted_file"]),
    ({"mig_parted_config": "all-1g.10gb"}, ["mig_parted_file", 'got ""', "set together with mig_parted_config"]),
    ({"mig_layouts": {"gpu0": {"mig_enabled": True}}}, ["mig_layouts", "'gpu0' is not a GPU index"]),
    ({"mig_layouts": {"0": {"mig_devices": {}}}}, ["mig_layouts.0", "mig_enabled: true|false"]),
    ({"mig_layouts": {"0": {"mig_enabled": "yes"}}}, ["mig_layouts.0", "mig_enabled: true|false"]),
    ({"mig_layouts": {"0": {"mig_enabled": True, "devices": {}}}}, ["mig_layouts.0", "unexpected field devices"]),
    ({"mig_layouts": {"0": {"mig_enabled": False, "mig_devices": {"1g.10gb": 1}}}},
     ["mig_layouts.0", "mig_devices must be empty when mig_enabled is false"]),
    ({"mig_layouts": {"0": {"mig_enabled": True, "mig_devices": {"big": 1}}}},
     ["mig_layouts.0.mig_devices", "'big' is not a MIG profile name"]),
    ({"mig_layouts": {"0": {"mig_enabled": True, "mig_devices": {"1g.10gb": -1}}}},
     ["mig_layouts.0.mig_devices.1g.10gb", "got -1", "a count of 0 or more"]),
    ({"mig_layouts": {"0": {"mig_enabled": True}, 0: {"mig_enabled": False}}}, ["mig_layouts", "GPU 0 is declared twice"]),
    ({"mig_gpu_clients": ["dcgm"]}, ["mig_gpu_clients", '"dcgm"', "systemd service names"]),
    ({"mig_timeout": 0}, ["mig_timeout", "got 0", "from 1 to 600"]),
    ({"mig_boot_timeout": 7200}, ["mig_boot_timeout", "got 7200", "from 1 to 3600"]),
    ({"mig_force": "maybe"}, ["mig_force", "maybe", "bool"]),
]


@pytest.mark.parametrize("given, fragments", BAD_INPUTS, ids=[sorted(case[0])[0] + "-%d" % i for i, case in enumerate(BAD_INPUTS)])
def test_a_bad_input_names_variable_value_and_what_is_allowed(given, fragments):
    errors = _errors(given)
    assert any(all(fragment in error for fragment in fragments) for error in errors), errors


def test_every_bad_input_is_reported_at_once():
    errors = _errors({"thp_defrag": "eager", "memlock_limit": "abc", "sysctl_settings": {"vm.swappiness": 300, "vm.dirty_ratio": 1}})
    joined = "\n".join(errors)
    for fragment in ("thp_defrag", "memlock_limit", "vm.swappiness: an integer", "not both of a pair"):
        assert fragment in joined, joined


def test_a_bad_profile_is_reported_once_and_profile_values_are_not_guessed():
    errors, profile, inputs = check_collection(ROLES, {"gpuops_profile": "turbo"})
    assert profile is None
    assert len(errors) == 1 and "gpuops_profile" in errors[0]
    assert inputs["thp"].get("thp_enabled") is None


@pytest.mark.parametrize("given", [
    {"mps_active_thread_percentage": 1},
    {"mps_active_thread_percentage": 100},
    {"mps_pinned_mem_limit": "8G"},
    {"mps_pinned_mem_limit": "512M"},
    {"mps_pinned_mem_limit": ""},
    {"mps_gpu_sets": {"left": [0, 1], "right_2": ["2", "GPU-5d1b7a3e-0000-4000-8000-000000000000"]}},
    {"mps_directory_mode": "770"},
    {"mps_directory_mode": "0750"},
    {"mps_pipe_directory": "/run/mps", "mps_log_directory": "/var/log/mps"},
    {"mps_group": "gpu_users", "mps_client_users": ["alice", "svc-infer"]},
])
def test_good_mps_inputs_pass_unchanged(given):
    inputs = _inputs(dict(given, mps_state="present"), "mps")
    assert all(inputs[name] == value for name, value in given.items())


@pytest.mark.parametrize("given, layouts", [
    ({"mig_layouts": {0: {"mig_enabled": True, "mig_devices": {"3g.40gb": 1, "1c.3g.40gb": 2}}, "1": {"mig_enabled": False}}},
     {"0": {"mig_enabled": True, "mig_devices": {"3g.40gb": 1, "1c.3g.40gb": 2}},
      "1": {"mig_enabled": False, "mig_devices": {}}}),
    ({"mig_layouts": {"2": {"mig_enabled": True}}}, {"2": {"mig_enabled": True, "mig_devices": {}}}),
    ({"mig_parted_file": "/srv/mig/config.yaml", "mig_parted_config": "all-1g.10gb"}, {}),
])
def test_good_mig_inputs_resolve_to_layouts_keyed_by_index_text(given, layouts):
    inputs = _inputs(dict(given, mig_state="present"), "mig")
    assert inputs["mig_layouts"] == layouts
    assert inputs["mig_gpu_clients"] is None and inputs["mig_reset"] is True


def test_mps_directories_that_are_the_same_are_reported_with_other_errors():
    errors = _errors({"mps_pipe_directory": "/var/log/nvidia-mps", "mps_active_thread_percentage": 0})
    joined = "\n".join(errors)
    assert "mps_active_thread_percentage: got 0" in joined
    assert 'mps_log_directory: got "/var/log/nvidia-mps"; allowed: a folder other than mps_pipe_directory' in joined


def test_mps_directories_both_bad_are_not_also_reported_as_the_same():
    errors = _errors({"mps_pipe_directory": "/tmp", "mps_log_directory": "/tmp"})
    assert len(errors) == 2 and all("outside /tmp and /var/tmp" in error for error in errors), errors


@pytest.mark.parametrize("given, fragments", [
    ({"audit_cuda_versions": ["14.1"]}, ['audit_cuda_versions: got "14.1"', "11.x, 12.x, 13.x"]),
    ({"audit_cuda_versions": ["twelve"]}, ['audit_cuda_versions: got "twelve"']),
    ({"audit_compare_baseline": "a/b"}, ['audit_compare_baseline: got "a/b"', "letters, digits"]),
    ({"gpuops_audit_fail_on_drift": True}, ["gpuops_audit_fail_on_drift: no longer an input; set audit_fail_on_fail instead"]),
    ({"audit_gpu_models": {"NVIDIA H100 80GB HBM3": {"nvlink": 16}}},
     ['audit_gpu_models["NVIDIA H100 80GB HBM3"].nvlink: got 16; allowed: keys fabric_gpus, nvlinks, pcie_gen']),
    ({"audit_gpu_models": {"NVIDIA A10G": {"pcie_width": 12}}},
     ['audit_gpu_models["NVIDIA A10G"].pcie_width: got 12; allowed: a link width: 1, 2, 4, 8, 16 or 32']),
    ({"audit_gpu_models": {"NVIDIA A10G": {"retired_pages_limit": True}}},
     ['audit_gpu_models["NVIDIA A10G"].retired_pages_limit: got true']),
    ({"audit_gpu_models": {"NVIDIA A10G": 4}}, ['audit_gpu_models["NVIDIA A10G"]: got 4; allowed: a mapping of']),
    ({"audit_container_free_space_gib": 0}, ["audit_container_free_space_gib: got 0; allowed: an integer of 1 or more (GiB)"]),
    ({"audit_container_writable_layer_mib": -5},
     ["audit_container_writable_layer_mib: got -5; allowed: an integer of 1 or more (MiB)"]),
    ({"audit_container_writable_layer_mib": "lots"}, ["audit_container_writable_layer_mib", "lots"]),
    ({"audit_metrics_dir": "node-exporter"}, ['audit_metrics_dir: got "node-exporter"; allowed: an absolute path on the node']),
    ({"audit_metrics_dir": ""}, ['audit_metrics_dir: got ""; allowed: an absolute path']),
])
def test_audit_inputs_name_the_variable_the_value_and_what_is_allowed(given, fragments):
    message = "; ".join(_errors(given))
    for fragment in fragments:
        assert fragment in message, message


def test_good_audit_inputs_pass():
    models = {"NVIDIA A10G": {"pcie_gen": 4, "pcie_width": 16, "fabric_gpus": None, "nvlinks": 0, "retired_pages_limit": 30}}
    inputs = _inputs({"audit_cuda_versions": ["11.8", "12.4", "13.0"], "audit_save_baseline": "before-thp",
                      "audit_gpu_models": models, "audit_metrics": "true", "audit_metrics_dir": "/srv/textfiles"}, "audit")
    assert inputs["audit_cuda_versions"] == ["11.8", "12.4", "13.0"] and inputs["audit_gpu_models"] == models
    assert inputs["audit_metrics"] is True and inputs["audit_metrics_dir"] == "/srv/textfiles"


@pytest.mark.parametrize("given, fragments", [
    ({"baseline_sizes_mib": [64, 0]}, ["baseline role: baseline_sizes_mib: got 0", "each 1 or more"]),
    ({"baseline_sizes_mib": []}, ["baseline_sizes_mib: got []", "a non-empty list"]),
    ({"baseline_sizes_mib": ["big"]}, ["baseline_sizes_mib", "big"]),
    ({"baseline_repeats": 0}, ["baseline_repeats: got 0", "an integer of 1 or more"]),
    ({"baseline_max_memory_mib": -5}, ["baseline_max_memory_mib: got -5", "an integer of 1 or more"]),
    ({"baseline_timeout": 0}, ["baseline_timeout: got 0", "an integer from 1 to 600 (seconds)"]),
    ({"baseline_timeout": 601}, ["baseline_timeout: got 601", "an integer from 1 to 600 (seconds)"]),
    ({"baseline_save": "../etc"}, ['baseline_save: got "../etc"', "letters, digits"]),
    ({"baseline_compare": "a b"}, ['baseline_compare: got "a b"', "letters, digits"]),
])
def test_baseline_inputs_name_the_variable_the_value_and_what_is_allowed(given, fragments):
    message = "; ".join(_errors(given))
    for fragment in fragments:
        assert fragment in message, message


def test_baseline_defaults_pass_and_values_are_converted():
    assert _inputs({}, "baseline")["baseline_sizes_mib"] == [1, 64, 1024]
    inputs = _inputs({"baseline_sizes_mib": ["1", 64], "baseline_repeats": "3", "baseline_save": "before-persistence"}, "baseline")
    assert inputs["baseline_sizes_mib"] == [1, 64] and inputs["baseline_repeats"] == 3
