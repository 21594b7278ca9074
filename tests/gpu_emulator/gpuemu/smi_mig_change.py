# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi mig -cgi, -cci, -dci and -dgi: create and destroy MIG instances, each
change recorded in the state's log. Each returns (rc, stdout) and edits the state in
place; the caller saves it."""

from . import mig, runtime, state as state_file, texts


def ids(text):
    return None if text is None else [int(t) for t in text.split(",") if t.strip()]


def matching(instances, wanted):
    return [i for i in instances if wanted is None or i["id"] in wanted]


def _refused(error, what):
    """(rc, last line) of a failed create or destroy: a refused permission is exit 4."""
    rc = texts.RC_NO_PERMISSION if str(error) == texts.INSUFFICIENT_PERMISSIONS else texts.RC_OTHER
    return rc, "Failed to %s: %s\n" % (what, error)


def _permitted(privileged):
    """Creating and destroying instances needs root (NVML reference,
    nvmlDeviceCreateGpuInstance, nvmlGpuInstanceDestroy and the compute-instance
    calls: "Requires privileged user"); a non-root user is refused before anything
    changes. The refusal's lines take the layout of the tool's other refusals (an
    assumption)."""
    if not privileged:
        raise mig.MigError(texts.INSUFFICIENT_PERMISSIONS)


def _log_gi(state, event, gpu, instance):
    state_file.record(state, event, gpu=gpu["index"], gpu_instance=instance["id"], profile_id=instance["profile_id"],
                      start=instance["start"])


def _log_ci(state, event, gpu, instance, ci):
    state_file.record(state, event, gpu=gpu["index"], gpu_instance=instance["id"], compute_instance=ci["id"],
                      profile_id=ci["profile_id"])


def create_gpu_instances(state, gpus, profiles_text, with_default_ci, privileged=True):
    out = []
    for gpu in gpus:
        for token in profiles_text.split(","):
            # A profile tuple: a profile name or id, optionally ":<placement start>".
            name, _colon, start = token.partition(":")
            profile = mig.profile_by_token(gpu, name)
            try:
                if profile is None or (start and not start.strip().isdigit()):
                    raise mig.MigError("Invalid Argument")
                _permitted(privileged)
                if gpu["index"] in state["faults"]["gpu_busy"]:
                    raise mig.MigError(texts.IN_USE)
                instance = mig.create_gpu_instance(gpu, profile, int(start) if start else None)
            except mig.MigError as error:
                out.append("Unable to create a GPU instance on GPU %2d using profile %s: %s\n" % (gpu["index"], token.strip(), error))
                rc, last = _refused(error, "create GPU instances")
                return rc, "".join(out) + last
            _log_gi(state, "gi_create", gpu, instance)
            out.append("Successfully created GPU instance ID %2d on GPU %2d using profile MIG %s (ID %2d)\n" % (
                instance["id"], gpu["index"], profile["name"], profile["id"]))
            if with_default_ci:
                ci = mig.create_compute_instance(gpu, instance)
                _log_ci(state, "ci_create", gpu, instance, ci)
                out.append(_created_ci(gpu, instance, ci))
    return texts.RC_OK, "".join(out)


def _created_ci(gpu, instance, ci):
    return "Successfully created compute instance ID %2d on GPU %2d GPU instance ID %2d using profile MIG %s (ID %2d)\n" % (
        ci["id"], gpu["index"], instance["id"], mig.ci_name(gpu, instance, ci["size"]), ci["profile_id"])


def create_compute_instances(state, gpus, profiles_text, gi_text, privileged=True):
    out = []
    wanted = ids(gi_text)
    for gpu in gpus:
        for instance in matching(mig.sorted_instances(gpu), wanted):
            tokens = profiles_text.split(",") if profiles_text else [None]
            for token in tokens:
                try:
                    # An id or a name ("1c.3g.20gb"), as -cgi takes both.
                    ci_profile_id = None if token is None else mig.ci_profile_by_token(gpu, instance, token)
                    if token is not None and ci_profile_id is None:
                        raise mig.MigError("Invalid Argument")
                    _permitted(privileged)
                    ci = mig.create_compute_instance(gpu, instance, ci_profile_id)
                except mig.MigError as error:
                    out.append("Unable to create a compute instance on GPU %2d GPU instance ID %2d using profile %s: %s\n" % (
                        gpu["index"], instance["id"], (token or str(mig.default_ci_profile_id(gpu, instance))).strip(), error))
                    rc, last = _refused(error, "create compute instances")
                    return rc, "".join(out) + last
                _log_ci(state, "ci_create", gpu, instance, ci)
                out.append(_created_ci(gpu, instance, ci))
    if not out:
        return texts.RC_QUERY_FAILED, texts.NO_GPU_INSTANCES
    return texts.RC_OK, "".join(out)


def _destroy_refusal(state, gpu, busy, privileged):
    """Why a destroy is refused (permission first, then a user of the instance), or None."""
    if not privileged:
        return texts.INSUFFICIENT_PERMISSIONS
    return texts.IN_USE if busy or runtime.held_by_holder(state, gpu) else None


def destroy_compute_instances(state, gpus, gi_text, ci_text, privileged=True):
    out = []
    wanted_gi, wanted_ci = ids(gi_text), ids(ci_text)
    for gpu in gpus:
        for instance in matching(mig.sorted_instances(gpu), wanted_gi):
            for ci in matching(sorted(instance["compute_instances"], key=lambda c: c["id"]), wanted_ci):
                reason = _destroy_refusal(state, gpu, runtime.processes_on(state, gpu["index"], instance["id"], ci["id"]), privileged)
                if reason:
                    out.append("Unable to destroy compute instance ID %2d from GPU %2d GPU instance ID %2d: %s\n" % (
                        ci["id"], gpu["index"], instance["id"], reason))
                    rc, last = _refused(reason, "destroy compute instances")
                    return rc, "".join(out) + last
                instance["compute_instances"].remove(ci)
                _log_ci(state, "ci_destroy", gpu, instance, ci)
                out.append("Successfully destroyed compute instance ID %2d from GPU %2d GPU instance ID %2d\n" % (
                    ci["id"], gpu["index"], instance["id"]))
    if not out:
        return texts.RC_QUERY_FAILED, texts.NO_COMPUTE_INSTANCES
    return texts.RC_OK, "".join(out)


def destroy_gpu_instances(state, gpus, gi_text, privileged=True):
    out = []
    wanted = ids(gi_text)
    for gpu in gpus:
        for instance in matching(mig.sorted_instances(gpu), wanted):
            busy = instance["compute_instances"] or runtime.processes_on(state, gpu["index"], instance["id"])
            reason = _destroy_refusal(state, gpu, busy, privileged)
            if reason:
                out.append("Unable to destroy GPU instance ID %2d from GPU %2d: %s\n" % (instance["id"], gpu["index"], reason))
                rc, last = _refused(reason, "destroy GPU instances")
                return rc, "".join(out) + last
            gpu["gpu_instances"].remove(instance)
            _log_gi(state, "gi_destroy", gpu, instance)
            out.append("Successfully destroyed GPU instance ID %2d from GPU %2d\n" % (instance["id"], gpu["index"]))
    if not out:
        return texts.RC_QUERY_FAILED, texts.NO_GPU_INSTANCES
    return texts.RC_OK, "".join(out)
