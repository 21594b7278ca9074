# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One call that converges a node: every feature of the plan, in its order, in this process.

gpuops.hardening.node hands it the plan, a list of features ({name, engine, args}). Each feature's
arguments are checked against its engine's argument spec before anything runs, so a bad one fails
the call before the first change, naming the feature and the option. The engines then run one
after another on one NodeHost, under one node lock; the first failure stops the call and names its
feature, and the features after it do not run.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import (
    container_facts,
    container_runtime,
    fabricmanager,
    gpu_numa_facts,
    installed_files,
    kubelet_config,
    memlock,
    mig_boot,
    mps,
    nvidia_mig,
    persistenced,
    slurm_gres,
    swap_off,
    sysctl_settings,
    thp,
)
from ansible_collections.gpuops.hardening.plugins.module_utils.node_host import FeatureFailed, NodeHost

# The engines a plan may name. The plan (not this list) sets the order the features run in.
ENGINES = dict((engine.NAME, engine) for engine in (
    sysctl_settings, swap_off, thp, memlock, persistenced, fabricmanager, nvidia_mig, mig_boot, installed_files, mps,
    container_runtime, gpu_numa_facts, slurm_gres, kubelet_config, container_facts))
# Options the call sets once for every feature: one tree, one lock.
CALL_OPTIONS = ("root", "lock_timeout")
# Features checked against the node in check mode before the call changes anything: a Fabric Manager at another
# version than the driver's (or missing, or masked), a MIG layout a GPU cannot take, MPS GPU sets on unknown GPUs or
# GPUs in MIG mode, running work in the way, kubelet reservations on CPUs or NUMA nodes the node lacks, a container
# engine or the Container Toolkit missing, a containerd drop-in its config would not load, a Docker restart that
# would stop containers. Their refusals fail before the first change; the other engines check their inputs before
# they act.
CHECKED_FIRST = ("fabricmanager", "nvidia_mig", "mps", "kubelet_config", "container_runtime")


class PlanError(Exception):
    """The plan is not one the engines can run; nothing was changed."""


def checked_plan(features, root, lock_timeout):
    """[(name, engine, spec)]: each feature's arguments validated and completed with its engine's defaults."""
    names = [feature["name"] for feature in features]
    repeated = sorted(set(name for name in names if names.count(name) > 1))
    if repeated:
        raise PlanError("features: each name must be unique, got %s more than once; nothing was changed"
                        % ", ".join(repeated))
    plan = []
    for position, feature in enumerate(features):
        where = "features[%d] (%s)" % (position, feature["name"])
        engine = ENGINES[feature["engine"]]
        args = dict(feature["args"] or {})
        for option in CALL_OPTIONS:
            if option in args:
                raise PlanError("%s: %s is set once for the whole call, not per feature; nothing was changed"
                                % (where, option))
        args.update(root=root, lock_timeout=lock_timeout)
        validated = ArgumentSpecValidator(engine.ARGUMENT_SPEC, **engine.SPEC_RULES).validate(args)
        if validated.error_messages:
            raise PlanError("%s: %s; nothing was changed" % (where, "; ".join(validated.error_messages)))
        plan.append((feature["name"], engine, validated.validated_parameters))
    return plan


def refusal_before_any_change(module, plan, reads):
    """(name, result) of the first CHECKED_FIRST feature that refuses the node as it is, in check mode, or None.

    The check reads the node before any feature of the call has changed it, as a validation play before the
    call would (an MPS daemon that would stay off is not checked: removing refuses nothing)."""
    host = NodeHost(module)
    # Its survey reads answer the converge's while nothing changes the node (shared_reads.py).
    host.reads = reads
    for name, engine, spec in plan:
        if engine.NAME not in CHECKED_FIRST or spec.get("state", "present") != "present":
            continue
        # require_applied fails after the change, when the layout waits for a reset: no refusal of the node as it is.
        checked = dict(spec, require_applied=False) if "require_applied" in spec else spec
        try:
            engine.converge(checked, host, True)
        except FeatureFailed as failure:
            return name, dict(failure.result, failed=True, changed=False, msg=failure.msg)
    return None


def converge_node(module, plan, keep_going=False, timings=False):
    """Run the plan's engines in order on one host.

    Returns (result, warnings). The first failure stops the call: failed is set and failed_feature names it.
    With keep_going (the audit, in check mode) every feature runs and each failure stays in its own result,
    listed in failed_features. Each warning names its feature; handlers lists, in plan order, what the play
    does after the call, each naming its feature. With timings, timings gives each feature's seconds (make bench).
    """
    host = NodeHost(module)
    result = dict(changed=False, features={}, handlers=[], diff=[], failed_feature=None, failed_features=[])
    legacy_record = host.remove_legacy_record(module.params["root"], module.check_mode)
    if legacy_record:
        result.update(changed=True, legacy_record_removed=legacy_record)
    warnings = list(host.warnings)
    refused = None if module.check_mode else refusal_before_any_change(module, plan, host.reads)
    if refused:
        name, outcome = refused
        result["features"][name] = outcome
        result["failed_features"].append(name)
        result.update(failed=True, failed_feature=name, msg="%s: %s" % (name, outcome["msg"]))
        return result, warnings
    facts = {}
    seconds = {}
    for name, engine, spec in plan:
        first_warning = len(host.warnings)
        started = time.monotonic()
        try:
            outcome = engine.converge(spec, host, module.check_mode)
        except FeatureFailed as failure:
            outcome = dict(failure.result, failed=True, msg=failure.msg)
        seconds[name] = round(time.monotonic() - started, 4)
        if outcome.get("changed") or outcome.get("failed"):
            host.reads.forget()
        warnings.extend("%s: %s" % (name, warning) for warning in host.warnings[first_warning:])
        result["diff"].extend(outcome.pop("diff", None) or [])
        host.facts[name] = outcome.pop("ansible_facts", None) or {}
        facts.update(host.facts[name])
        result["features"][name] = host.results[name] = outcome
        result["changed"] = result["changed"] or bool(outcome.get("changed"))
        if outcome.get("failed"):
            result["failed_features"].append(name)
            if not keep_going:
                result.update(failed=True, failed_feature=name, msg="%s: %s" % (name, outcome["msg"]))
                break
            continue
        if hasattr(engine, "handlers"):
            result["handlers"].extend(dict(todo, feature=name) for todo in engine.handlers(spec, outcome))
    if facts:
        result["ansible_facts"] = facts
    if timings:
        result["timings"] = seconds
        result["nvidia_smi_reads_shared"] = host.reads.answered
    return result, warnings
