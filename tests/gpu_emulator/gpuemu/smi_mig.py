# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi mig: list profiles, placements and instances; create and destroy them."""

from . import layout, mig, runtime, texts

PROFILES_WIDTH = 79
PROFILES_HEAD = [
    [(2, "GPU"), (8, "Name"), (25, "ID"), (31, "Instances"), (43, "Memory"), (54, "P2P"), (61, "SM"), (67, "DEC"), (73, "ENC")],
    [(31, "Free/Total"), (44, "GiB"), (61, "CE"), (67, "JPEG"), (73, "OFA")],
]
INSTANCES_WIDTH = 57
INSTANCES_HEAD = [
    [(2, "GPU"), (8, "Name"), (25, "Profile"), (34, "Instance"), (45, "Placement")],
    [(27, "ID"), (36, "ID"), (45, "Start:Size")],
]
COMPUTE_WIDTH = 70
COMPUTE_HEAD = [
    [(2, "GPU"), (10, "GPU"), (20, "Name"), (37, "Profile"), (47, "Instance"), (58, "Placement")],
    [(8, "Instance"), (39, "ID"), (49, "ID"), (58, "Start:Size")],
    [(10, "ID")],
]

# -lcip: the layout of the MIG user guide's "nvidia-smi mig -lcip -gi 1" example.
CI_PROFILES_WIDTH = 88
CI_PROFILES_HEAD = [
    [(2, "GPU"), (10, "GPU"), (20, "Name"), (37, "Profile"), (46, "Instances"), (58, "Exclusive"), (74, "Shared")],
    [(8, "Instance"), (39, "ID"), (46, "Free/Total"), (61, "SM"), (70, "DEC"), (76, "ENC"), (82, "OFA")],
    [(10, "ID"), (70, "CE"), (76, "JPEG")],
]


def _boxed(width, title, head, rows):
    """Title, column heads, '=' rule, then each row group closed by a '+' rule."""
    out = [layout.rule(width), layout.banner(width, title)]
    out += [layout.place(width, cells) for cells in head]
    out.append(layout.rule(width, "=", "|"))
    for group in rows:
        out += [layout.place(width, cells) for cells in group]
        out.append(layout.rule(width))
    return "".join(out)


def _mig_enabled(gpus):
    """(gpus with MIG on, error) where error is the tool's answer when there are none."""
    if not any(g["mig"] for g in gpus):
        return [], (texts.RC_QUERY_FAILED, texts.NO_MIG_SUPPORTED)
    enabled = [g for g in gpus if mig.enabled(g)]
    if not enabled:
        return [], (texts.RC_OK, texts.NO_MIG_ENABLED)
    return enabled, None


def list_profiles(gpus):
    rows = []
    for gpu in gpus:
        for profile in mig.table(gpu)["profiles"]:
            rows.append([
                [(-4, gpu["index"]), (7, "MIG " + profile["name"]), (-26, profile["id"]),
                 (32, "%d/%d" % (mig.free_count(gpu, profile), profile["max"])), (43, profile["memory"]),
                 (54, "No"), (61, profile["sm"]), (68, profile["dec"]), (74, profile["enc"])],
                [(-62, profile["ce"]), (68, profile["jpeg"]), (74, profile["ofa"])],
            ])
    return _boxed(PROFILES_WIDTH, "GPU instance profiles:", PROFILES_HEAD, rows)


def list_placements(gpus):
    out = []
    for gpu in gpus:
        for profile in mig.table(gpu)["profiles"]:
            placements = profile["placements"]
            label = "Placements:" if len(placements) > 1 else "Placement :"
            out.append("GPU %2d Profile ID %2d %s {%s}:%d\n" % (
                gpu["index"], profile["id"], label, ",".join(str(p) for p in placements), profile["size"]))
    return "".join(out)


def list_instances(gpus):
    rows = []
    for gpu in gpus:
        for instance in mig.sorted_instances(gpu):
            profile = mig.profile_by_id(gpu, instance["profile_id"])
            rows.append([[(-4, gpu["index"]), (7, "MIG " + profile["name"]), (-28, profile["id"]),
                          (-37, instance["id"]), (48, "%d:%d" % (instance["start"], profile["size"]))]])
    return _boxed(INSTANCES_WIDTH, "GPU instances:", INSTANCES_HEAD, rows)


def list_compute_instances(gpus):
    rows = []
    for gpu in gpus:
        for instance in mig.sorted_instances(gpu):
            for ci in sorted(instance["compute_instances"], key=lambda c: c["id"]):
                rows.append([[(-4, gpu["index"]), (-11, instance["id"]), (19, "MIG " + mig.ci_name(gpu, instance, ci["size"])),
                              (-40, ci["profile_id"]), (-50, ci["id"]), (61, "%d:%d" % (ci["start"], ci["size"]))]])
    return _boxed(COMPUTE_WIDTH, "Compute instances:", COMPUTE_HEAD, rows)


def list_compute_profiles(gpus, gi_text):
    """Per GPU instance, the compute-instance profiles it offers; '*' marks the default
    (whole GPU instance). Shared engines are the GPU instance's."""
    rows = []
    wanted = _ids(gi_text)
    for gpu in gpus:
        for instance in _matching(mig.sorted_instances(gpu), wanted):
            profile = mig.profile_by_id(gpu, instance["profile_id"])
            for ci_profile_id in mig.ci_profile_ids(gpu, instance):
                compute = mig.CI_SIZES[ci_profile_id]
                marker = "*" if ci_profile_id == mig.default_ci_profile_id(gpu, instance) else ""
                rows.append([
                    [(-4, gpu["index"]), (-11, instance["id"]), (19, "MIG " + mig.ci_name(gpu, instance, compute)),
                     (-40, ci_profile_id), (41, marker), (47, "%d/%d" % mig.ci_counts(gpu, instance, ci_profile_id)),
                     (61, mig.sm_count(gpu, instance, {"size": compute})),
                     (71, profile["dec"]), (77, profile["enc"]), (83, profile["ofa"])],
                    [(71, profile["ce"]), (77, profile["jpeg"])],
                ])
    if not rows:
        return texts.RC_QUERY_FAILED, texts.NO_GPU_INSTANCES
    return texts.RC_OK, _boxed(CI_PROFILES_WIDTH, "Compute instance profiles:", CI_PROFILES_HEAD, rows)


def _ids(text):
    return None if text is None else [int(t) for t in text.split(",") if t.strip()]


def _matching(instances, wanted):
    return [i for i in instances if wanted is None or i["id"] in wanted]


def create_gpu_instances(state, gpus, profiles_text, with_default_ci):
    out = []
    for gpu in gpus:
        for token in profiles_text.split(","):
            # A profile tuple: a profile name or id, optionally ":<placement start>".
            name, _colon, start = token.partition(":")
            profile = mig.profile_by_token(gpu, name)
            try:
                if profile is None or (start and not start.strip().isdigit()):
                    raise mig.MigError("Invalid Argument")
                if gpu["index"] in state["faults"]["gpu_busy"]:
                    raise mig.MigError(texts.IN_USE)
                instance = mig.create_gpu_instance(gpu, profile, int(start) if start else None)
            except mig.MigError as error:
                out.append("Unable to create a GPU instance on GPU %2d using profile %s: %s\n" % (gpu["index"], token.strip(), error))
                out.append("Failed to create GPU instances: %s\n" % error)
                return texts.RC_OTHER, "".join(out)
            out.append("Successfully created GPU instance ID %2d on GPU %2d using profile MIG %s (ID %2d)\n" % (
                instance["id"], gpu["index"], profile["name"], profile["id"]))
            if with_default_ci:
                out.append(_created_ci(gpu, instance, mig.create_compute_instance(gpu, instance)))
    return texts.RC_OK, "".join(out)


def _created_ci(gpu, instance, ci):
    return "Successfully created compute instance ID %2d on GPU %2d GPU instance ID %2d using profile MIG %s (ID %2d)\n" % (
        ci["id"], gpu["index"], instance["id"], mig.ci_name(gpu, instance, ci["size"]), ci["profile_id"])


def create_compute_instances(gpus, profiles_text, gi_text):
    out = []
    wanted = _ids(gi_text)
    for gpu in gpus:
        for instance in _matching(mig.sorted_instances(gpu), wanted):
            tokens = profiles_text.split(",") if profiles_text else [None]
            for token in tokens:
                try:
                    # An id or a name ("1c.3g.20gb"), as -cgi takes both.
                    ci_profile_id = None if token is None else mig.ci_profile_by_token(gpu, instance, token)
                    if token is not None and ci_profile_id is None:
                        raise mig.MigError("Invalid Argument")
                    ci = mig.create_compute_instance(gpu, instance, ci_profile_id)
                except mig.MigError as error:
                    out.append("Unable to create a compute instance on GPU %2d GPU instance ID %2d using profile %s: %s\n" % (
                        gpu["index"], instance["id"], token.strip(), error))
                    out.append("Failed to create compute instances: %s\n" % error)
                    return texts.RC_OTHER, "".join(out)
                out.append(_created_ci(gpu, instance, ci))
    if not out:
        return texts.RC_QUERY_FAILED, texts.NO_GPU_INSTANCES
    return texts.RC_OK, "".join(out)


def destroy_compute_instances(state, gpus, gi_text, ci_text):
    out = []
    wanted_gi, wanted_ci = _ids(gi_text), _ids(ci_text)
    for gpu in gpus:
        for instance in _matching(mig.sorted_instances(gpu), wanted_gi):
            for ci in _matching(sorted(instance["compute_instances"], key=lambda c: c["id"]), wanted_ci):
                if runtime.processes_on(state, gpu["index"], instance["id"], ci["id"]):
                    out.append("Unable to destroy compute instance ID %2d from GPU %2d GPU instance ID %2d: %s\n" % (
                        ci["id"], gpu["index"], instance["id"], texts.IN_USE))
                    out.append("Failed to destroy compute instances: %s\n" % texts.IN_USE)
                    return texts.RC_OTHER, "".join(out)
                instance["compute_instances"].remove(ci)
                out.append("Successfully destroyed compute instance ID %2d from GPU %2d GPU instance ID %2d\n" % (
                    ci["id"], gpu["index"], instance["id"]))
    if not out:
        return texts.RC_QUERY_FAILED, texts.NO_COMPUTE_INSTANCES
    return texts.RC_OK, "".join(out)


def destroy_gpu_instances(state, gpus, gi_text):
    out = []
    wanted = _ids(gi_text)
    for gpu in gpus:
        for instance in _matching(mig.sorted_instances(gpu), wanted):
            if instance["compute_instances"] or runtime.processes_on(state, gpu["index"], instance["id"]):
                out.append("Unable to destroy GPU instance ID %2d from GPU %2d: %s\n" % (instance["id"], gpu["index"], texts.IN_USE))
                out.append("Failed to destroy GPU instances: %s\n" % texts.IN_USE)
                return texts.RC_OTHER, "".join(out)
            gpu["gpu_instances"].remove(instance)
            out.append("Successfully destroyed GPU instance ID %2d from GPU %2d\n" % (instance["id"], gpu["index"]))
    if not out:
        return texts.RC_QUERY_FAILED, texts.NO_GPU_INSTANCES
    return texts.RC_OK, "".join(out)


ACTIONS = {
    "-lgip": "lgip", "--list-gpu-instance-profiles": "lgip",
    "-lgipp": "lgipp", "--list-gpu-instance-possible-placements": "lgipp",
    "-lgi": "lgi", "--list-gpu-instances": "lgi",
    "-lci": "lci", "--list-compute-instances": "lci",
    "-lcip": "lcip", "--list-compute-instance-profiles": "lcip",
    "-cgi": "cgi", "--create-gpu-instance": "cgi",
    "-cci": "cci", "--create-compute-instance": "cci",
    "-dci": "dci", "--destroy-compute-instance": "dci",
    "-dgi": "dgi", "--destroy-gpu-instance": "dgi",
}
VALUES = {
    "-i": "id", "--id": "id",
    "-gi": "gi", "--gpu-instance-id": "gi",
    "-ci": "ci", "--compute-instance-id": "ci",
}
FLAGS = {"-C": "default_ci", "--default-compute-instance": "default_ci"}


MUTATING = ("cgi", "cci", "dci", "dgi")


def changes(argv):
    """True when these mig arguments create or destroy instances."""
    return any(ACTIONS.get(token.partition("=")[0]) in MUTATING for token in argv)


HELP = """
    mig -- Multi Instance GPU management.

    Usage: nvidia-smi mig [options]

    Options include: -i, -gi, -ci, -lgip, -lgipp, -lgi, -lci, -lcip, -cgi PROFILE[:START][,...] [-C],
    -cci [PROFILE[,...]], -dci, -dgi.
"""


def parse(argv):
    """(options, None) or (None, (rc, text)) for the arguments after 'mig'."""
    options = {}
    tokens = list(argv)
    while tokens:
        token = tokens.pop(0)
        name, _equals, inline = token.partition("=")
        if name in ACTIONS:
            if "action" in options:
                return None, (texts.RC_INVALID_ARGUMENT, texts.INVALID_COMBINATION)
            options["action"] = ACTIONS[name]
            if options["action"] in ("cgi", "cci"):
                value = inline or (tokens.pop(0) if tokens and not tokens[0].startswith("-") else None)
                if options["action"] == "cgi" and not value:
                    return None, (texts.RC_INVALID_ARGUMENT, texts.INVALID_COMBINATION)
                options["profiles"] = value
        elif name in VALUES:
            value = inline or (tokens.pop(0) if tokens else None)
            if value is None:
                return None, (texts.RC_INVALID_ARGUMENT, texts.INVALID_COMBINATION)
            options[VALUES[name]] = value
        elif name in FLAGS:
            options[FLAGS[name]] = True
        elif name in ("-h", "--help"):
            return None, (texts.RC_OK, HELP)
        else:
            return None, (texts.RC_OTHER, texts.UNKNOWN_OPTION % name)
    if "action" not in options:
        return None, (texts.RC_OK, HELP)
    return options, None


def run(state, argv, select_gpus):
    """Returns (rc, stdout). select_gpus(id text or None) -> (gpus, error)."""
    options, error = parse(argv)
    if error:
        return error
    gpus, error = select_gpus(options.get("id"))
    if error:
        return error
    gpus, error = _mig_enabled(gpus)
    if error:
        return error
    action = options["action"]
    if action == "lgip":
        return texts.RC_OK, list_profiles(gpus)
    if action == "lgipp":
        return texts.RC_OK, list_placements(gpus)
    if action in ("lgi", "lci"):
        instances = [i for g in gpus for i in g["gpu_instances"]]
        if not instances:
            return texts.RC_QUERY_FAILED, texts.NO_GPU_INSTANCES
        if action == "lgi":
            return texts.RC_OK, list_instances(gpus)
        if not any(i["compute_instances"] for i in instances):
            return texts.RC_QUERY_FAILED, texts.NO_COMPUTE_INSTANCES
        return texts.RC_OK, list_compute_instances(gpus)
    if action == "lcip":
        return list_compute_profiles(gpus, options.get("gi"))
    if action == "cgi":
        return create_gpu_instances(state, gpus, options["profiles"], options.get("default_ci", False))
    if action == "cci":
        return create_compute_instances(gpus, options.get("profiles"), options.get("gi"))
    if action == "dci":
        return destroy_compute_instances(state, gpus, options.get("gi"), options.get("ci"))
    return destroy_gpu_instances(state, gpus, options.get("gi"))
