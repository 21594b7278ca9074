# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MIG partitioning rules: which GPU/compute instances fit where, and their ids.

A GPU has 8 memory slices and 7 compute slices. A GPU instance takes ``size``
memory slices at one of its profile's placements and ``compute`` compute slices;
requests that overlap or exceed the compute budget fail like the driver does
("Insufficient Resources").
"""

import uuid

from . import catalog

COMPUTE_SLICES = 7
# Compute-instance profile ids by the number of compute slices they take.
CI_PROFILE_IDS = {1: 0, 2: 1, 3: 2, 4: 3, 7: 4}
CI_SIZES = {v: k for k, v in CI_PROFILE_IDS.items()}


class MigError(Exception):
    """A refused MIG operation; the message is the driver's reason text."""


def table(gpu):
    return catalog.mig_table(gpu["model"])


def enabled(gpu):
    """MIG mode is currently on (pending changes do not count)."""
    return bool(gpu["mig"]) and gpu["mig"]["current"] == "Enabled"


def memory_mib(profile):
    """A GPU instance's memory as nvidia-smi reports it in MiB (the table's GiB x 1024)."""
    return int(round(float(profile["memory"]) * 1024))


def memory_used_mib(state, gpu, instance, ci):
    """Used memory of a MIG device: the driver's share plus its processes'."""
    return 12 + sum(p["used_memory_mib"] for p in state["processes"]
                    if p["gpu"] == gpu["index"] and p.get("gpu_instance_id") == instance["id"]
                    and p.get("compute_instance_id") == ci["id"])


def sm_count(gpu, instance, ci):
    """Multiprocessors of a compute instance: its share of the GPU instance's."""
    profile = profile_by_id(gpu, instance["profile_id"])
    return int(profile["sm"] * ci["size"] / float(profile["compute"]))


def profile_by_token(gpu, token):
    """A GPU-instance profile from an id ("9") or a name ("3g.20gb", "MIG 3g.20gb")."""
    token = token.strip()
    for profile in table(gpu)["profiles"]:
        if token == str(profile["id"]) or token in (profile["name"], "MIG " + profile["name"]):
            return profile
    return None


def profile_by_id(gpu, profile_id):
    for profile in table(gpu)["profiles"]:
        if profile["id"] == profile_id:
            return profile
    raise KeyError(profile_id)


def _overlaps(start, size, other_start, other_size):
    return start < other_start + other_size and other_start < start + size


def _fits(gpu, profile, start, instances):
    used_compute = 0
    for instance in instances:
        other = profile_by_id(gpu, instance["profile_id"])
        used_compute += other["compute"]
        if _overlaps(start, profile["size"], instance["start"], other["size"]):
            return False
        if profile["name"].endswith("+me") and other["name"].endswith("+me"):
            return False
    return used_compute + profile["compute"] <= COMPUTE_SLICES


def free_placement(gpu, profile, instances=None):
    """The start slice a new instance of the profile would get, or None."""
    instances = gpu["gpu_instances"] if instances is None else instances
    same = [i for i in instances if i["profile_id"] == profile["id"]]
    if len(same) >= profile["max"]:
        return None
    for start in profile.get("placement_order", profile["placements"]):
        if _fits(gpu, profile, start, instances):
            return start
    return None


def free_count(gpu, profile):
    """How many more instances of the profile still fit (the lgip 'Free' count)."""
    simulated = list(gpu["gpu_instances"])
    count = 0
    while True:
        start = free_placement(gpu, profile, simulated)
        if start is None:
            return count
        simulated.append({"profile_id": profile["id"], "start": start})
        count += 1


def gpu_instance_id(gpu, profile, start):
    """GPU instance ids follow the slice tree: 0 for the whole GPU, then the halves,
    the quarters (3-6) and the eighths (7-14)."""
    size = profile["size"]
    if size == 8:
        return 0
    if size == 4:
        return table(gpu)["four_slice_gi_ids"][str(start)]
    if size == 2:
        return 3 + start // 2
    return 7 + start


def create_gpu_instance(gpu, profile, start=None):
    """A new GPU instance at the first free placement, or at the one asked for."""
    if start is None:
        start = free_placement(gpu, profile)
    elif start not in profile["placements"]:
        raise MigError("Invalid Argument")
    elif not _fits(gpu, profile, start, gpu["gpu_instances"]):
        start = None
    if start is None:
        raise MigError("Insufficient Resources")
    instance = {
        "id": gpu_instance_id(gpu, profile, start),
        "profile_id": profile["id"],
        "start": start,
        "compute_instances": [],
    }
    gpu["gpu_instances"].append(instance)
    return instance


def ci_name(gpu, instance, compute):
    profile = profile_by_id(gpu, instance["profile_id"])
    if compute == profile["compute"]:
        return profile["name"]
    return "%dc.%s" % (compute, profile["name"])


def ci_profile_ids(gpu, instance):
    """The compute-instance profile ids this GPU instance offers (nvidia-smi mig -lcip)."""
    return catalog.compute_instance_profiles(profile_by_id(gpu, instance["profile_id"])["compute"])


def default_ci_profile_id(gpu, instance):
    """The profile of a compute instance spanning the whole GPU instance ('*' in -lcip)."""
    return CI_PROFILE_IDS[profile_by_id(gpu, instance["profile_id"])["compute"]]


def ci_profile_by_token(gpu, instance, token):
    """A compute-instance profile id from an id ("0") or a name ("1c.3g.20gb",
    "MIG 1c.3g.20gb"), or None when the GPU instance does not offer it."""
    token = token.strip()
    for ci_profile_id in ci_profile_ids(gpu, instance):
        name = ci_name(gpu, instance, CI_SIZES[ci_profile_id])
        if token in (str(ci_profile_id), name, "MIG " + name):
            return ci_profile_id
    return None


def _ci_starts(size, slices):
    """Where a compute instance of `size` slices may start inside a GPU instance of
    `slices`, in the order tried: 3-slice ones go high first, leaving room for a 4."""
    starts = {1: list(range(slices)), 2: list(range(0, slices, 2)), 3: [4, 0]}.get(size, [0])
    return [s for s in starts if s + size <= slices]


def _free_ci_start(slices, compute, taken):
    for candidate in _ci_starts(compute, slices):
        if all(not _overlaps(candidate, compute, ci["start"], ci["size"]) for ci in taken):
            return candidate
    return None


def ci_counts(gpu, instance, ci_profile_id):
    """(free, total) compute instances of a profile in a GPU instance: how many more
    still fit beside the existing ones, and how many fit in it when it is empty."""
    slices = profile_by_id(gpu, instance["profile_id"])["compute"]
    compute = CI_SIZES[ci_profile_id]
    counts = []
    for taken in (list(instance["compute_instances"]), []):
        count = 0
        while True:
            start = _free_ci_start(slices, compute, taken)
            if start is None:
                break
            taken.append({"start": start, "size": compute})
            count += 1
        counts.append(count)
    return tuple(counts)


def create_compute_instance(gpu, instance, ci_profile_id=None):
    """A compute instance in a GPU instance; by default one spanning all of it."""
    if ci_profile_id is None:
        ci_profile_id = default_ci_profile_id(gpu, instance)
    if ci_profile_id not in ci_profile_ids(gpu, instance):
        raise MigError("Invalid Argument")
    compute = CI_SIZES[ci_profile_id]
    taken = instance["compute_instances"]
    start = _free_ci_start(profile_by_id(gpu, instance["profile_id"])["compute"], compute, taken)
    if start is None:
        raise MigError("Insufficient Resources")
    used = {ci["id"] for ci in taken}
    gpu["mig_serial"] = gpu.get("mig_serial", 0) + 1
    ci = {
        "id": min(n for n in range(COMPUTE_SLICES + 1) if n not in used),
        "profile_id": ci_profile_id,
        "start": start,
        "size": compute,
    }
    ci["uuid"] = "MIG-%s" % uuid.uuid5(uuid.NAMESPACE_OID, "%s/%d/%d/%d" % (gpu["uuid"], instance["id"], ci["id"], gpu["mig_serial"]))
    taken.append(ci)
    return ci


def sorted_instances(gpu):
    """The order nvidia-smi lists GPU instances in: larger profile ids first."""
    return sorted(gpu["gpu_instances"], key=lambda i: (-i["profile_id"], i["id"]))


def mig_devices(gpu):
    """(gpu instance, compute instance) pairs in MIG device index order."""
    pairs = []
    for instance in sorted(gpu["gpu_instances"], key=lambda i: i["id"]):
        for ci in sorted(instance["compute_instances"], key=lambda c: c["id"]):
            pairs.append((instance, ci))
    return pairs


def device_by_uuid(state, token):
    """(gpu, gpu instance, compute instance) of the MIG device a modern MIG UUID
    (`MIG-<uuid>`, as nvidia-smi -L shows it) names, or None. Only GPUs whose MIG mode
    is on have MIG devices."""
    for gpu in state["gpus"]:
        if not enabled(gpu):
            continue
        for instance, ci in mig_devices(gpu):
            if ci.get("uuid", "").lower() == token.lower():
                return gpu, instance, ci
    return None
