# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node plan: built once from the validated inputs, in PLAN_ROLES' order (the group roles' features for the
hosts of their groups), every feature's arguments valid for its engine, and the playbooks, roles and audit held to
it (tags, groups, feature names)."""

from __future__ import annotations

import glob
import os

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils.node_call import ENGINES, checked_plan
from ansible_collections.gpuops.hardening.plugins.plugin_utils import audit_document, gpu_models, node_plan
from ansible_collections.gpuops.hardening.plugins.plugin_utils.role_inputs import check_collection, load_roles, read_yaml_file

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
ROLES_DIR = os.path.join(ROOT, "roles")
ROLES = load_roles(ROLES_DIR)
# Every feature on: partitioning, the boot service, swap off, the launcher, the container runtimes.
EVERYTHING = {"mig_state": "present", "mig_layouts": {0: {"mig_enabled": True, "mig_devices": {"1g.10gb": 7}}},
              "mps_state": "present", "mps_gpu_sets": {"left": [1]}, "container_runtime_enabled": True}
# The node roles whose features a node opts in to: no feature at all until it does.
OPT_IN = {"container_runtime"}


# A host in every group: its plan has every feature.
EVERY_GROUP = [group for dummy, group in node_plan.GROUP_ROLES]


def plan_for(given, wanted=node_plan.NODE_ROLES, read_yaml=None):
    errors, _profile, inputs = check_collection(ROLES, given)
    assert not errors, errors
    return node_plan.node_plan(inputs, ROLES, node_plan.PlanContext(ROLES_DIR, read_yaml, "gpu-node-1"), wanted)


@pytest.mark.parametrize("given", [{}, {"gpuops_profile": "inference"}, EVERYTHING])
@pytest.mark.parametrize("groups", [[], EVERY_GROUP])
def test_every_feature_runs_in_the_guides_order_with_arguments_its_engine_takes(given, groups):
    plan = plan_for(given, node_plan.plan_roles(groups))
    roles = [entry["role"] for entry in plan]
    assert roles == sorted(roles, key=node_plan.PLAN_ROLES.index)
    node_roles = set(node_plan.NODE_ROLES) - (set() if given is EVERYTHING else OPT_IN)
    assert set(roles) == node_roles | set(role for role, group in node_plan.GROUP_ROLES if group in groups)
    assert all(entry["engine"] in ENGINES and entry["tags"][0] == entry["role"] for entry in plan)
    checked = checked_plan(plan, "/", 30)
    assert [name for name, dummy, dummy in checked] == [entry["name"] for entry in plan]


def test_the_profile_reaches_the_features():
    training, inference = plan_for({}), plan_for({"gpuops_profile": "inference"})
    thp = dict((entry["name"], entry) for entry in inference)["thp"]
    assert thp["args"]["enabled"] == "madvise" and thp["args"]["profile"] == "inference"
    assert dict((entry["name"], entry) for entry in training)["thp"]["args"]["enabled"] == "always"
    settings = dict((entry["name"], entry) for entry in inference)["sysctl_settings"]["args"]["settings"]
    assert settings["vm.dirty_bytes"] == 1073741824


def test_off_switches_leave_features_out_and_mig_absent_removes_the_boot_service():
    plan = plan_for({"sysctl_disable_swap": False, "numa_binding_install_launcher": False,
                     "numa_binding_manage_packages": False})
    names = [entry["name"] for entry in plan]
    assert "swap_off" not in names and "numa_launcher" not in names and "mig_layout" not in names
    features = dict((entry["name"], entry) for entry in plan)
    assert features["mig_boot"]["args"]["state"] == "absent"
    assert features["numa_topology"]["args"]["numactl_packages"] == []
    boot = dict((entry["name"], entry) for entry in plan_for(EVERYTHING))["mig_boot"]["args"]
    assert boot["state"] == "present" and boot["layout_feature"] == "mig_layout"


def test_a_mig_parted_file_is_read_on_the_controller_and_an_unreadable_one_names_the_variable():
    config = {"version": "v1",
              "mig-configs": {"all-1g": [{"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 7}}]}}
    given = {"mig_state": "present", "mig_parted_file": "parted.yaml", "mig_parted_config": "all-1g"}
    layout = plan_for(given, ("mig",), read_yaml=lambda path: config)[0]
    assert layout["args"]["mig_parted_config"] == config and layout["args"]["mig_parted_name"] == "all-1g"
    assert "layouts" not in layout["args"]

    def missing(path):
        raise IOError("no such file: %s" % path)
    with pytest.raises(node_plan.PlanInputError, match=r"^mig_parted_file: got 'parted.yaml'; allowed: a readable"):
        plan_for(given, ("mig",), read_yaml=missing)
    with pytest.raises(node_plan.PlanInputError, match=r"^mig_parted_config: got 'all-2g', with mig_parted_file "
                                                       r"'parted.yaml': no config 'all-2g'; the file has: all-1g"):
        plan_for(dict(given, mig_parted_config="all-2g"), ("mig",), read_yaml=lambda path: config)


@pytest.mark.parametrize("run_tags, skip_tags, runs", [
    (None, None, True), (["all"], [], True), (["thp"], [], True), (["thp_apply"], [], True), (["memlock"], [], False),
    (["all"], ["thp"], False), (["tagged"], [], True), (["untagged"], [], False), (["all"], ["tagged"], False),
])
def test_the_plays_tags_select_features_as_ansible_selects_tasks(run_tags, skip_tags, runs):
    thp = {"name": "thp", "tags": ["thp", "thp_apply"]}
    untagged = {"name": "x"}
    assert node_plan.selected([thp, untagged], run_tags, skip_tags) == ([thp] if runs else []) + [untagged]


def node_imports(path):
    """The tags of each import of the validate role's node.yml in a playbook or task file."""
    found = []

    def walk(node):
        if isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            if (node.get("ansible.builtin.import_role") or {}).get("tasks_from") == "node.yml":
                found.append(node)
            for key in ("tasks", "block"):
                walk(node.get(key) or [])
    walk(read_yaml_file(path))
    return found


def test_site_yml_carries_every_tag_of_the_plan():
    (site,) = node_imports(os.path.join(ROOT, "playbooks", "site.yml"))
    assert site["tags"] == node_plan.all_tags(plan_for(EVERYTHING, node_plan.plan_roles(EVERY_GROUP)))


@pytest.mark.parametrize("role", node_plan.PLAN_ROLES)
def test_a_role_alone_carries_the_tags_of_its_features(role):
    (alone,) = node_imports(os.path.join(ROLES_DIR, role, "tasks", "features.yml"))
    assert alone["tags"] == node_plan.all_tags(plan_for(EVERYTHING, (role,)))
    assert alone["vars"]["__gpuops_node_features"] == "{{ __%s_validation.plan }}" % role


@pytest.mark.parametrize("playbook, role", [("mig.yml", "mig"), ("mps.yml", "mps")])
def test_the_partitioning_playbooks_run_their_roles_features(playbook, role):
    (use,) = node_imports(os.path.join(ROOT, "playbooks", playbook))
    assert use["tags"] == node_plan.all_tags(plan_for(EVERYTHING, (role,)))
    assert "selectattr('role', 'equalto', '%s')" % role in use["vars"]["__gpuops_node_features"]


def test_the_group_roles_end_the_plan_of_the_hosts_in_their_groups_only():
    assert node_plan.plan_roles([]) == node_plan.NODE_ROLES
    assert node_plan.plan_roles(["kubernetes_nodes", "other"]) == node_plan.NODE_ROLES + ("kubelet_topology",)
    plan = plan_for({"kubelet_topology_drain": True}, node_plan.plan_roles(EVERY_GROUP))
    assert [entry["name"] for entry in plan][-2:] == ["slurm_gres", "kubelet"]
    kubelet = plan[-1]["args"]
    assert kubelet["drain"] == {"node": "gpu-node-1", "delegate_to": "localhost", "timeout": 600}
    assert "drain" not in plan_for({}, ("kubelet_topology",))[0]["args"]
    plays = read_yaml_file(os.path.join(ROOT, "playbooks", "site.yml"))
    assert [play["hosts"] for play in plays if "hosts" in play] == ["gpu_nodes"]


def test_slurmd_gets_its_memlock_limit_from_the_memlock_feature_and_gres_the_calls_topology():
    given = {"memlock_service_units": ["a.service"]}
    whole = dict((entry["name"], entry) for entry in plan_for(given, node_plan.plan_roles(["slurm_nodes"])))
    assert whole["memlock"]["args"]["units"] == ["a.service", "slurmd.service"]
    assert whole["memlock"]["tags"][-2:] == ["slurm_gres", "slurm_gres_memlock"]
    assert whole["slurm_gres"]["args"]["topology_feature"] == "numa_topology" == whole["numa_topology"]["name"]
    assert dict((entry["name"], entry) for entry in plan_for(given))["memlock"]["args"]["units"] == ["a.service"]
    alone = plan_for({"memlock_service_units": ["a.service"]}, ("slurm_gres",))
    assert [entry["name"] for entry in alone] == ["memlock", "slurm_gres"]
    assert alone[0]["args"]["units"] == ["a.service", "slurmd.service"]
    assert [entry["name"] for entry in plan_for({"slurm_gres_memlock": False}, ("slurm_gres",))] == ["slurm_gres"]


def test_every_role_is_a_node_role_a_group_role_or_one_outside_the_plan():
    tuning = set(node_plan.NODE_ROLES) | set(role for role, dummy in node_plan.GROUP_ROLES)
    # readiness_gate acts on the audit's verdict through the scheduler, after the audit: no feature of the plan.
    others = {"validate", "audit", "baseline", "readiness_gate"}
    assert set(ROLES) == tuning | others


def test_the_audit_reads_features_the_plan_has():
    names = set(entry["name"] for entry in plan_for(EVERYTHING, node_plan.plan_roles(EVERY_GROUP)))
    assert set(audit_document.NODE_FEATURES.values()) <= names


def test_no_playbook_or_role_lists_the_node_roles_again():
    """The order lives in node_plan.NODE_ROLES: a literal list of the roles anywhere in YAML would be a copy."""
    listed = "'sysctl', 'thp', 'memlock'"
    for path in glob.glob(os.path.join(ROOT, "roles", "*", "*", "*.yml")) + glob.glob(os.path.join(ROOT, "playbooks", "*.yml")):
        with open(path, encoding="utf-8") as handle:
            assert listed not in handle.read(), path


def test_fabricmanager_runs_after_persistenced_with_its_inputs_and_the_models_whose_boards_carry_nvswitches():
    plan = plan_for({"fabricmanager_install": True, "fabricmanager_force_restart": True})
    names = [entry["name"] for entry in plan]
    assert names.index("fabricmanager") == names.index("persistenced") + 1
    args = plan[names.index("fabricmanager")]["args"]
    assert args["install"] is True and args["force"] is True and args["wait_seconds"] == 120
    assert args["fabric_gpus"] == {"NVIDIA H100 80GB HBM3": 8, "NVIDIA H200": 8}


def test_fabricmanager_expects_a_fabric_where_the_readiness_audit_does_with_the_operators_models():
    models = {"NVIDIA A100-SXM4-80GB": {"fabric_gpus": 8}, "NVIDIA B200": {"fabric_gpus": 8},
              "NVIDIA H200": {"fabric_gpus": None}}
    plan = plan_for({"audit_gpu_models": models}, wanted=("fabricmanager",))
    (entry,) = plan
    assert entry["args"]["fabric_gpus"] == {"NVIDIA H100 80GB HBM3": 8, "NVIDIA A100-SXM4-80GB": 8, "NVIDIA B200": 8}
    expected = dict((name, gpu_models.model_spec(name, models)["fabric_gpus"]) for name in entry["args"]["fabric_gpus"])
    assert entry["args"]["fabric_gpus"] == expected


@pytest.mark.parametrize("given, message", [
    ({"fabricmanager_wait_seconds": 5}, "fabricmanager_wait_seconds: got 5; allowed: an integer from 10 to 3600 (seconds)"),
    ({"fabricmanager_timeout": 0}, "fabricmanager_timeout: got 0; allowed: an integer from 1 to 600 (seconds)"),
])
def test_fabricmanager_seconds_out_of_range_name_the_variable(given, message):
    errors, dummy, dummy = check_collection(ROLES, given)
    assert [error for error in errors if "fabricmanager" in error] == ["fabricmanager role: " + message]


def test_the_audits_own_read_is_a_valid_feature_tagged_with_its_collect_step():
    features = node_plan.audit_features({}, {}, None)
    assert [(entry["name"], entry["engine"], entry["tags"]) for entry in features] == [
        ("containers", "container_facts", ["audit", "audit_collect", "audit_containers"])]
    plan = plan_for({}) + features
    assert [name for name, dummy, dummy in checked_plan(plan, "/", 30)][-1] == "containers"
    assert "containers" not in [entry["name"] for entry in plan_for({})], "a converge's plan reads no runtime"
