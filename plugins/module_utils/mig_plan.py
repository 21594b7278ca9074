# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plans a GPU's MIG layout: from the GPU instances it has to the profile counts it should have.

Pure: the profile table (``mig -lgip``), the placements (``mig -lgipp``) and the
current instances go in; what to keep, destroy and create comes out. Instances the
desired layout still holds are kept wherever the placements allow the rest to fit,
so their UUIDs and the work on them survive; only the others are destroyed.

Profile names mean what they mean to mig-parted (pkg/types/mig_profile.go and
pkg/mig/config): ``3g.40gb`` is a GPU instance with its one default compute
instance (the whole GPU instance); ``1c.3g.40gb`` is a compute instance of one
compute slice on a ``3g.40gb`` GPU instance, and its count counts compute
instances, which fill one GPU instance before the next one is made. Suffixes such
as ``+me`` belong to the GPU instance profile (``1g.10gb+me``). A GPU instance is
kept only when its compute instances are also the ones the layout wants.

Standard library only: a boot-time script loads this file outside Ansible.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import itertools
import re

# NVML_COMPUTE_INSTANCE_PROFILE_<N>_SLICE: the compute-instance profile id of each size.
CI_PROFILE_IDS = {1: 0, 2: 1, 3: 2, 4: 3, 7: 4, 8: 5, 6: 6}
_PROFILE_NAME = re.compile(r"^(?:(\d+)c\.)?((\d+)g\.\d+gb\S*)$")


class LayoutError(ValueError):
    """The desired layout names an unknown profile or cannot fit the GPU."""


def gpu_profiles(profile_rows, placement_rows, gpu):
    """{profile name: {"id", "size", "starts", "max"}} for one GPU, from parse_gpu_instance_profiles
    and parse_gpu_instance_placements rows (profiles without placements are left out)."""
    placements = dict((row["profile_id"], row) for row in placement_rows if row["gpu"] == gpu)
    profiles = {}
    for row in profile_rows:
        if row["gpu"] != gpu or row["id"] not in placements:
            continue
        placement = placements[row["id"]]
        profiles[row["name"]] = {"id": row["id"], "size": placement["size"], "starts": list(placement["starts"]),
                                 "max": row.get("total"), "slices": split_profile(row["name"])[1]}
    return profiles


def split_profile(name):
    """(GPU instance profile, compute slices of one compute instance) of a profile name:
    ``1c.3g.40gb`` -> (``3g.40gb``, 1), ``3g.40gb`` -> (``3g.40gb``, 3); (name, None) when
    the name has no ``Ng.`` part."""
    match = _PROFILE_NAME.match(name)
    if not match:
        return name, None
    return match.group(2), int(match.group(1) or match.group(3))


def ci_name(gpu_instance_profile, slices):
    """The compute-instance profile name, as nvidia-smi and mig-parted print it."""
    if slices == split_profile(gpu_instance_profile)[1]:
        return gpu_instance_profile
    return "%dc.%s" % (slices, gpu_instance_profile)


def shape(instance, profiles):
    """(profile, compute slices of each compute instance, largest first) of a current GPU
    instance; one without a ``compute_instances`` list counts as having its default one."""
    if "compute_instances" not in instance:
        return instance["profile"], (profiles.get(instance["profile"], {}).get("slices"),)
    return instance["profile"], tuple(sorted((ci["size"] for ci in instance["compute_instances"]), reverse=True))


def wanted_shapes(profiles, desired, offers=None):
    """{(GPU instance profile, compute slices...): count} the desired counts make.

    Compute instances of one GPU instance profile fill a GPU instance (largest first)
    before the next one is made, as mig-parted creates them. ``offers`` maps a GPU
    instance profile to the compute slices its GPU instances offer (``mig -lcip``),
    where known. Raises LayoutError on unknown profiles and bad counts.
    """
    by_gi = {}
    for name, count in sorted(desired.items()):
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise LayoutError("MIG profile %s: count %r is not a non-negative integer" % (name, count))
        gi_name, slices = split_profile(name)
        if gi_name not in profiles:
            raise LayoutError("unknown MIG profile %s; allowed: this GPU's profiles %s" % (name, describe_profiles(profiles)))
        capacity = profiles[gi_name]["slices"]
        offered = (offers or {}).get(gi_name)
        if slices > capacity or slices not in CI_PROFILE_IDS or (offered is not None and slices not in offered):
            choices = sorted(offered) if offered is not None else [n for n in sorted(CI_PROFILE_IDS) if n <= capacity]
            raise LayoutError("MIG profile %s: %s GPU instances offer the compute instances %s" % (
                name, gi_name, ", ".join(ci_name(gi_name, n) for n in choices)))
        by_gi.setdefault(gi_name, []).extend([slices] * count)
    shapes = {}
    for gi_name, sizes in sorted(by_gi.items()):
        bins = []
        for size in sorted(sizes, reverse=True):
            for contents in bins:
                if sum(contents) + size <= profiles[gi_name]["slices"]:
                    contents.append(size)
                    break
            else:
                bins.append([size])
        for contents in bins:
            key = (gi_name, tuple(contents))
            shapes[key] = shapes.get(key, 0) + 1
    for gi_name in sorted(by_gi):
        count = sum(n for (name, dummy), n in shapes.items() if name == gi_name)
        limit = profiles[gi_name].get("max")
        if isinstance(limit, int) and count > limit:
            raise LayoutError("MIG profile %s: %d instances asked, this GPU allows %d" % (gi_name, count, limit))
    return shapes


def _span(start, size):
    return ((1 << size) - 1) << start


def describe_profiles(profiles):
    """The valid profiles, for messages: '1g.10gb (ID 19), 2g.20gb (ID 14), ...'."""
    return ", ".join("%s (ID %d)" % (name, profiles[name]["id"])
                     for name in sorted(profiles, key=lambda name: (profiles[name]["size"], profiles[name]["id"])))


def _place(needed, profiles, used):
    """Starts for each needed (profile, compute slices) (largest first) that fit around the used slices, or None."""
    if not needed:
        return []
    key, rest = needed[0], needed[1:]
    profile = profiles[key[0]]
    for start in profile["starts"]:
        span = _span(start, profile["size"])
        if used & span:
            continue
        placed = _place(rest, profiles, used | span)
        if placed is not None:
            return [(key, start)] + placed
    return None


def plan(profiles, current, desired, offers=None):
    """What to do to one GPU: {"keep", "destroy", "create"}.

    current: the GPU instances, each {"id", "profile", "start", ...} (profile by name),
    with their ``compute_instances`` ({"size", ...}) where known; desired: {profile
    name: count}. keep and destroy hold current instances; create holds {"profile",
    "profile_id", "start", "compute_instances"} (each {"profile", "profile_id"}).
    Raises LayoutError when the layout cannot be made.
    """
    wanted = wanted_shapes(profiles, desired, offers)
    candidates = sorted((instance for instance in current if shape(instance, profiles) in wanted),
                        key=lambda instance: (instance["start"], instance["id"]))
    # Most instances kept first; among equals, the lowest starts first (deterministic).
    for keep_count in range(len(candidates), -1, -1):
        for kept in itertools.combinations(candidates, keep_count):
            counts = {}
            for instance in kept:
                key = shape(instance, profiles)
                counts[key] = counts.get(key, 0) + 1
            if any(counts[key] > wanted[key] for key in counts):
                continue
            used = 0
            for instance in kept:
                span = _span(instance["start"], profiles[instance["profile"]]["size"])
                if used & span:
                    break
                used |= span
            else:
                needed = sorted((key for key in wanted for dummy in range(wanted[key] - counts.get(key, 0))),
                                key=lambda key: (-profiles[key[0]]["size"], profiles[key[0]]["id"], key[1]))
                placed = _place(needed, profiles, used)
                if placed is not None:
                    kept_ids = set(instance["id"] for instance in kept)
                    return {
                        "keep": list(kept),
                        "destroy": [instance for instance in current if instance["id"] not in kept_ids],
                        "create": [_creation(profiles, key, start) for key, start in placed],
                    }
    raise LayoutError("the layout %s does not fit this GPU's placements; its profiles: %s" % (
        ", ".join("%s x%d" % (name, desired[name]) for name in sorted(desired) if desired[name]),
        describe_profiles(profiles)))


def _creation(profiles, key, start):
    gi_name, sizes = key
    return {"profile": gi_name, "profile_id": profiles[gi_name]["id"], "start": start,
            "compute_instances": [{"profile": ci_name(gi_name, size), "profile_id": CI_PROFILE_IDS[size]}
                                  for size in sizes]}
