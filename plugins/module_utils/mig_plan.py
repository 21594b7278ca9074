# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plans a GPU's MIG layout: from the GPU instances it has to the profile counts it should have.

Pure: the profile table (``mig -lgip``), the placements (``mig -lgipp``) and the
current instances go in; what to keep, destroy and create comes out. Instances the
desired layout still holds are kept wherever the placements allow the rest to fit,
so their UUIDs and the work on them survive; only the others are destroyed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import itertools


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
                                 "max": row.get("total")}
    return profiles


def _span(start, size):
    return ((1 << size) - 1) << start


def describe_profiles(profiles):
    """The valid profiles, for messages: '1g.10gb (ID 19), 2g.20gb (ID 14), ...'."""
    return ", ".join("%s (ID %d)" % (name, profiles[name]["id"])
                     for name in sorted(profiles, key=lambda name: (profiles[name]["size"], profiles[name]["id"])))


def check_desired(profiles, desired):
    """Raise LayoutError unless every profile is known and every count a non-negative integer."""
    unknown = sorted(name for name in desired if name not in profiles)
    if unknown:
        raise LayoutError("unknown MIG profile %s; this GPU's profiles: %s" % (", ".join(unknown), describe_profiles(profiles)))
    for name, count in sorted(desired.items()):
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise LayoutError("MIG profile %s: count %r is not a non-negative integer" % (name, count))
        limit = profiles[name].get("max")
        if isinstance(limit, int) and count > limit:
            raise LayoutError("MIG profile %s: %d instances asked, this GPU allows %d" % (name, count, limit))


def _place(needed, profiles, used):
    """Starts for each needed profile name (largest first) that fit around the used slices, or None."""
    if not needed:
        return []
    name, rest = needed[0], needed[1:]
    profile = profiles[name]
    for start in profile["starts"]:
        span = _span(start, profile["size"])
        if used & span:
            continue
        placed = _place(rest, profiles, used | span)
        if placed is not None:
            return [(name, start)] + placed
    return None


def plan(profiles, current, desired):
    """What to do to one GPU: {"keep", "destroy", "create"}.

    current: the GPU instances, each {"id", "profile", "start", ...} (profile by name);
    desired: {profile name: count}. keep and destroy hold current instances; create holds
    {"profile", "profile_id", "start"}. Raises LayoutError when the layout cannot be made.
    """
    check_desired(profiles, desired)
    wanted = dict((name, count) for name, count in desired.items() if count)
    candidates = sorted((instance for instance in current if instance["profile"] in wanted),
                        key=lambda instance: (instance["start"], instance["id"]))
    # Most instances kept first; among equals, the lowest starts first (deterministic).
    for keep_count in range(len(candidates), -1, -1):
        for kept in itertools.combinations(candidates, keep_count):
            counts = {}
            for instance in kept:
                counts[instance["profile"]] = counts.get(instance["profile"], 0) + 1
            if any(counts[name] > wanted[name] for name in counts):
                continue
            used = 0
            for instance in kept:
                span = _span(instance["start"], profiles[instance["profile"]]["size"])
                if used & span:
                    break
                used |= span
            else:
                needed = sorted((name for name in wanted for dummy in range(wanted[name] - counts.get(name, 0))),
                                key=lambda name: (-profiles[name]["size"], profiles[name]["id"]))
                placed = _place(needed, profiles, used)
                if placed is not None:
                    kept_ids = set(instance["id"] for instance in kept)
                    return {
                        "keep": list(kept),
                        "destroy": [instance for instance in current if instance["id"] not in kept_ids],
                        "create": [{"profile": name, "profile_id": profiles[name]["id"], "start": start}
                                   for name, start in placed],
                    }
    raise LayoutError("the layout %s does not fit this GPU's placements; its profiles: %s" % (
        ", ".join("%s x%d" % (name, wanted[name]) for name in sorted(wanted)), describe_profiles(profiles)))
