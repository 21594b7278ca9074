# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi mig: list profiles, placements and instances; create and destroy them."""

from . import layout, mig, texts
from .smi_mig_change import (create_compute_instances, create_gpu_instances, destroy_compute_instances,
                             destroy_gpu_instances, ids, matching)

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
    wanted = ids(gi_text)
    for gpu in gpus:
        for instance in matching(mig.sorted_instances(gpu), wanted):
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


def run(state, argv, select_gpus, privileged=True):
    """Returns (rc, stdout). select_gpus(id text or None) -> (gpus, error). Without
    privileged (a non-root user) creating and destroying instances is refused."""
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
        return create_gpu_instances(state, gpus, options["profiles"], options.get("default_ci", False), privileged)
    if action == "cci":
        return create_compute_instances(state, gpus, options.get("profiles"), options.get("gi"), privileged)
    if action == "dci":
        return destroy_compute_instances(state, gpus, options.get("gi"), options.get("ci"), privileged)
    return destroy_gpu_instances(state, gpus, options.get("gi"), privileged)
