# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node plan: each role's validated inputs turned into the features of one gpuops.hardening.node call.

NODE_ROLES is the one list of the roles a GPU node is converged with, in the tuning guide's order, and
GROUP_ROLES those that join the plan, after them, for the nodes of an inventory group; the playbooks, the audit
and the tests derive theirs from them. A feature is {name, role, tags, engine, args}:
the node action plugin runs a feature only when the play's tags select its tags, then sends
{name, engine, args} to the node. A role's fixed values (paths, notes) stay in its vars/main.yml.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpuops.hardening.plugins.module_utils.mig_parted import MigPartedError, load_config
from ansible_collections.gpuops.hardening.plugins.plugin_utils.gpu_models import fabric_models

# Zero-cost knobs, the GPU runtime (persistence, then Fabric Manager, as the boot order has them), partitioning
# (MIG before MPS, so MPS starts on the instances it serves), then the data path, which describes the GPUs as
# partitioning left them: the container runtimes' CDI spec (generated again after a MIG change in the same call),
# the NUMA facts and launcher.
NODE_ROLES = ("sysctl", "thp", "memlock", "persistenced", "fabricmanager", "mig", "mps", "container_runtime",
              "numa_binding")
# The roles whose features end the plan of a node in their inventory group: Slurm and the kubelet are told the
# topology the node roles left.
GROUP_ROLES = (("slurm_gres", "slurm_nodes"), ("kubelet_topology", "kubernetes_nodes"))
PLAN_ROLES = NODE_ROLES + tuple(role for role, dummy in GROUP_ROLES)
# The feature whose GPU topology the slurm_gres feature describes when both are in the call.
TOPOLOGY_FEATURE = "numa_topology"
# The system Python, which the scripts the roles install run with, by platform: platform-python is always
# there on EL 8 and 9 (unlike /usr/bin/python3 on EL 8), /usr/bin/python3 on Debian and Ubuntu.
SYSTEM_PYTHONS = ["/usr/libexec/platform-python", "/usr/bin/python3"]
# The module_utils files the launcher and the MIG boot script import (their SHARED_HELPERS and imports).
LAUNCHER_HELPERS = ("cpulist", "host_options", "pci_bus_id")
MIG_ENGINE_FILES = ("mig_converge", "mig_survey", "mig_plan", "nvidia_smi", "cpulist", "pci_bus_id", "host_options")
MODULE_UTILS = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "module_utils"))


class PlanInputError(Exception):
    """An input names something on the controller that cannot be used (a file that cannot be read)."""


def feature(name, role, tags, engine, args):
    return {"name": name, "role": role, "tags": [role] + list(tags), "engine": engine, "args": args}


def sysctl_features(inputs, variables, context):
    del context
    found = [feature("sysctl_settings", "sysctl", ["sysctl_settings"], "sysctl_settings", {
        "settings": inputs["sysctl_settings"],
        "notes": variables["__sysctl_setting_notes"],
        "description": "Kernel VM settings for GPU nodes: gpuops.hardening sysctl role, %s profile."
                       % inputs["gpuops_profile"],
        "path": variables["__sysctl_conf_path"],
        "conflict_action": inputs["sysctl_boot_conflict_action"],
    })]
    if inputs["sysctl_disable_swap"]:
        found.append(feature("swap_off", "sysctl", ["sysctl_swap"], "swap_off", {
            "margin_mib": inputs["sysctl_swapoff_margin_mib"], "force": inputs["sysctl_swapoff_force"]}))
    return found


def prefixed(inputs, role, options):
    """{option: the input <role>_<option>}: the arguments named as the role's inputs are, less the prefix."""
    return dict((option, inputs["%s_%s" % (role, option)]) for option in options)


def fixed(variables, role, options):
    """{option: the role's fixed value __<role>_<option>} from its vars/main.yml."""
    return dict((option, variables["__%s_%s" % (role, option)]) for option in options)


def thp_features(inputs, variables, context):
    del context
    args = prefixed(inputs, "thp", ("enabled", "defrag", "khugepaged_defrag", "persist", "cmdline_conflict_action"))
    args.update(unit_path=variables["__thp_unit_path"], profile=inputs["gpuops_profile"])
    return [feature("thp", "thp", ["thp_apply"], "thp", args)]


def memlock_features(inputs, variables, context):
    del context
    args = prefixed(inputs, "memlock", ("limit", "login_sessions", "limits_domain", "limits_root", "services_default",
                                        "docker_daemon_json", "restart_services"))
    args.update(fixed(variables, "memlock", ("limits_path", "manager_dropin_path", "unit_dropin_name",
                                             "docker_daemon_json_path", "pam_services")),
                units=inputs["memlock_service_units"])
    return [feature("memlock", "memlock", ["memlock_converge"], "memlock", args)]


def persistenced_features(inputs, variables, context):
    del variables, context
    args = prefixed(inputs, "persistenced", ("unmask", "require_gpu", "timeout"))
    args["timeout_variable"] = "persistenced_timeout"
    return [feature("persistenced", "persistenced", ["persistenced_service"], "persistenced", args)]


def fabricmanager_features(inputs, variables, context):
    del variables, context
    args = prefixed(inputs, "fabricmanager", ("install", "wait_seconds", "timeout"))
    args.update(force=inputs["fabricmanager_force_restart"], timeout_variable="fabricmanager_timeout",
                # Where the model table expects a fabric, missing NVSwitch device nodes fail instead of a no-op;
                # expected_fabrics adds the operator's audit_gpu_models, as the readiness audit reads them.
                fabric_gpus=fabric_models())
    return [feature("fabricmanager", "fabricmanager", ["fabricmanager_service"], "fabricmanager", args)]


def expected_fabrics(plan, audit_inputs):
    """The fabricmanager feature's models with a fabric: the model table with the audit role's audit_gpu_models
    (already validated), so the role and the readiness audit give one answer."""
    for entry in plan:
        if entry["engine"] == "fabricmanager":
            entry["args"]["fabric_gpus"] = fabric_models(audit_inputs.get("audit_gpu_models"))


def mig_features(inputs, variables, context):
    found = []
    present = inputs["mig_state"] == "present"
    if present:
        args = {"layouts_variable": "mig_layouts", "force": inputs["mig_force"], "reset": inputs["mig_reset"],
                "timeout": inputs["mig_timeout"], "timeout_variable": "mig_timeout"}
        if inputs["mig_parted_file"]:
            document = context.read_yaml("mig_parted_file", inputs["mig_parted_file"])
            try:
                load_config(document, inputs["mig_parted_config"])
            except MigPartedError as error:
                raise PlanInputError("mig_parted_config: got %r, with mig_parted_file %r: %s"
                                     % (inputs["mig_parted_config"], inputs["mig_parted_file"], error))
            args.update(mig_parted_config=document, mig_parted_name=inputs["mig_parted_config"])
        else:
            args["layouts"] = inputs["mig_layouts"]
        if inputs["mig_gpu_clients"] is not None:
            args["gpu_clients"] = inputs["mig_gpu_clients"]
        # The boot service records what this resolves, so its tag runs this feature too.
        found.append(feature("mig_layout", "mig", ["mig_layout", "mig_boot"], "nvidia_mig", args))
    boot = {"state": "present" if present and inputs["mig_boot_service"] else "absent",
            "unit": variables["__mig_unit"], "script": variables["__mig_script"], "record": variables["__mig_record"],
            "library": variables["__mig_library"]}
    if boot["state"] == "present":
        boot.update(
            layout_feature="mig_layout", reset=inputs["mig_reset"], mig_timeout=inputs["mig_timeout"],
            boot_timeout=inputs["mig_boot_timeout"],
            script_file={"src": context.role_file("mig", "gpuops_mig_boot.py"), "interpreters": SYSTEM_PYTHONS},
            engine_files=[{"path": name + ".py", "src": os.path.join(MODULE_UTILS, name + ".py")}
                          for name in MIG_ENGINE_FILES])
    found.append(feature("mig_boot", "mig", ["mig_boot"], "mig_boot", boot))
    return found


def mps_features(inputs, variables, context):
    del variables, context
    options = ("state", "gpu_sets", "active_thread_percentage", "pinned_mem_limit", "exclusive_process",
               "multiuser_server", "group", "client_users", "pipe_directory", "log_directory", "directory_mode",
               "allow_mig", "require_gpu", "timeout")
    args = prefixed(inputs, "mps", options)
    args.update(force=inputs["mps_force_restart"], timeout_variable="mps_timeout")
    return [feature("mps", "mps", ["mps_service", "mps_clients"], "mps", args)]


def container_runtime_features(inputs, variables, context):
    """Opt-in: no feature unless the node enables it (nothing of its own to remove when it does not)."""
    del variables, context
    if not inputs["container_runtime_enabled"]:
        return []
    args = prefixed(inputs, "container_runtime", ("engines", "set_default", "shm_size", "install", "force_restart",
                                                  "timeout"))
    args["timeout_variable"] = "container_runtime_timeout"
    return [feature("container_runtime", "container_runtime", ["container_runtime_config"], "container_runtime", args)]


def numa_binding_features(inputs, variables, context):
    topology = {"require_gpu": inputs["numa_binding_require_gpu"],
                "timeout": inputs["numa_binding_nvidia_smi_timeout"],
                "timeout_variable": "numa_binding_nvidia_smi_timeout",
                "numactl_packages": variables["__numa_binding_packages"] if inputs["numa_binding_manage_packages"] else []}
    if inputs["numa_binding_write_local_fact"]:
        topology["fact_path"] = variables["__numa_binding_fact_file"]
    # numactl_packages: the package task's own tag, as a task of its own had.
    found = [feature("numa_topology", "numa_binding", ["numa_binding_topology", "numa_binding_packages"],
                     "gpu_numa_facts", topology)]
    if inputs["numa_binding_install_launcher"]:
        launcher = inputs["numa_binding_launcher_path"]
        # The launcher loads its helpers from ../lib/gpuops-hardening beside its own folder.
        lib_dir = os.path.join(os.path.dirname(os.path.dirname(launcher)), "lib", "gpuops-hardening")
        files = [{"path": os.path.join(lib_dir, name + ".py"), "src": os.path.join(MODULE_UTILS, name + ".py")}
                 for name in LAUNCHER_HELPERS]
        files.append({"path": launcher, "src": context.role_file("numa_binding", "gpu_numa_exec.py"), "mode": "0755",
                      "interpreters": SYSTEM_PYTHONS})
        found.append(feature("numa_launcher", "numa_binding", ["numa_binding_launcher"], "installed_files",
                             {"folders": [{"path": lib_dir, "mode": "0755"}], "files": files}))
    return found


def slurm_gres_features(inputs, variables, context):
    del context
    args = prefixed(inputs, "slurm_gres", ("autodetect", "gpu_type", "config_dir", "cgroup", "slurmd_action"))
    args.update(timeout=inputs["slurm_gres_nvidia_smi_timeout"], timeout_variable="slurm_gres_nvidia_smi_timeout",
                topology_feature=TOPOLOGY_FEATURE, slurmd_unit=variables["__slurm_gres_slurmd_unit"])
    return [feature("slurm_gres", "slurm_gres", ["slurm_gres_conf"], "slurm_gres", args)]


def kubelet_topology_features(inputs, variables, context):
    del variables
    args = prefixed(inputs, "kubelet_topology", ("service", "reset_state", "timeout"))
    args.update(path=inputs["kubelet_topology_config_path"], root_dir=inputs["kubelet_topology_root_dir"],
                settings=inputs["kubelet_settings"], labels=inputs["kubelet_labels"],
                timeout_variable="kubelet_topology_timeout")
    if inputs["kubelet_topology_drain"]:
        args["drain"] = {"node": inputs["kubelet_topology_node_name"] or context.inventory_hostname,
                         "delegate_to": inputs["kubelet_topology_drain_delegate_to"],
                         "timeout": inputs["kubelet_topology_drain_timeout"]}
    return [feature("kubelet", "kubelet_topology", ["kubelet_topology_config", "kubelet_topology_drain"],
                    "kubelet_config", args)]


def slurmd_memlock(plan, inputs_by_role, roles, context):
    """slurm_gres_memlock: slurmd.service joins the memlock feature's units (the memlock role's feature, added
    for slurm_gres alone), which then also runs under slurm_gres' tags."""
    found = [entry for entry in plan if entry["engine"] == "memlock"]
    if not found:
        found = memlock_features(inputs_by_role["memlock"], roles["memlock"].variables, context)
        plan[:0] = found
    unit = roles["slurm_gres"].variables["__slurm_gres_slurmd_unit"]
    for entry in found:
        if unit not in entry["args"]["units"]:
            entry["args"]["units"] = list(entry["args"]["units"]) + [unit]
        entry["tags"].extend(["slurm_gres", "slurm_gres_memlock"])


BUILDERS = {"sysctl": sysctl_features, "thp": thp_features, "memlock": memlock_features,
            "persistenced": persistenced_features, "fabricmanager": fabricmanager_features, "mig": mig_features,
            "mps": mps_features, "container_runtime": container_runtime_features,
            "numa_binding": numa_binding_features, "slurm_gres": slurm_gres_features,
            "kubelet_topology": kubelet_topology_features}


# The audit's own read, after the node roles' features in its call: the container runtimes (read only; no
# converge runs it). Its tags let --tags audit_collect select it as they select the call.
def audit_features(inputs, variables, context):
    del inputs, variables, context
    return [feature("containers", "audit", ["audit_collect", "audit_containers"], "container_facts", {})]


class PlanContext(object):
    """What a builder may read on the controller: the roles' files, and files an input names."""

    def __init__(self, roles_dir, read_controller_yaml, inventory_hostname=None):
        self.roles_dir = roles_dir
        self._read_controller_yaml = read_controller_yaml
        self.inventory_hostname = inventory_hostname

    def role_file(self, role, name):
        return os.path.join(self.roles_dir, role, "files", name)

    def read_yaml(self, variable, path):
        try:
            return self._read_controller_yaml(path)
        except Exception as error:  # pylint: disable=broad-except
            raise PlanInputError("%s: got %r; allowed: a readable YAML file on the controller (%s)"
                                 % (variable, path, error))


def plan_roles(groups):
    """The roles of a whole node's plan: every node role, then the group roles of the host's groups."""
    return NODE_ROLES + tuple(role for role, group in GROUP_ROLES if group in groups)


def node_plan(inputs_by_role, roles, context, wanted=NODE_ROLES):
    """The features of the roles in wanted (in PLAN_ROLES order) for one host."""
    plan = []
    for role in PLAN_ROLES:
        if role in wanted:
            plan.extend(BUILDERS[role](inputs_by_role[role], roles[role].variables, context))
    if "fabricmanager" in wanted:
        expected_fabrics(plan, inputs_by_role.get("audit") or {})
    if "slurm_gres" in wanted and inputs_by_role["slurm_gres"]["slurm_gres_memlock"]:
        slurmd_memlock(plan, inputs_by_role, roles, context)
    return plan


def _tagged(tags, run_tags, skip_tags):
    """Whether a task with these tags runs under --tags run_tags and --skip-tags skip_tags (Ansible's rules:
    always, never, all, tagged and untagged)."""
    tags = set(tags)
    run_tags, skip_tags = set(run_tags or ["all"]), set(skip_tags or [])
    if "always" in tags and "always" not in skip_tags:
        runs = True
    else:
        runs = bool(("all" in run_tags and "never" not in tags) or tags & run_tags or
                    ("tagged" in run_tags and tags) or ("untagged" in run_tags and not tags))
    skipped = bool(tags & skip_tags - {"always"} or ("tagged" in skip_tags and tags) or "all" in skip_tags or
                   ("always" in tags and "always" in skip_tags))
    return runs and not skipped


def selected(features, run_tags, skip_tags):
    """The features the play's tags select; a feature without tags always runs."""
    return [entry for entry in features
            if not isinstance(entry, dict) or entry.get("tags") is None or
            _tagged(entry["tags"], run_tags, skip_tags)]


def all_tags(plan):
    """Every tag of the plan's features, in order: what a task running the plan must carry."""
    found = []
    for entry in plan:
        for tag in entry["tags"]:
            if tag not in found:
                found.append(tag)
    return found
