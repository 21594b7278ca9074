# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A role's platform values for one node: the ``default`` entry, overridden by more specific ones."""

from __future__ import annotations

DEFAULT_ENTRY = "default"
# The facts that name a node's platform, least specific first (setup's min subset has them all).
PLATFORM_FACTS = ("os_family", "distribution", "distribution_major_version")


def platform_keys(facts):
    """The entry names that apply to a node, least specific first: default, OS family, distribution,
    distribution_major version (RedHat, Rocky, Rocky_9)."""
    missing = [name for name in PLATFORM_FACTS if not (facts or {}).get(name)]
    if missing:
        raise ValueError("platform_values needs the facts %s, and the node has no %s; gather them first "
                         "(ansible.builtin.setup with gather_subset [min], as the set_vars.yml of a role with platform values does)"
                         % (", ".join(PLATFORM_FACTS), ", ".join(missing)))
    distribution = str(facts["distribution"])
    return [DEFAULT_ENTRY, str(facts["os_family"]), distribution,
            "%s_%s" % (distribution, facts["distribution_major_version"])]


def platform_values(entries, facts):
    """{value name: value} for the node: each applicable entry of entries, in platform_keys order, overrides
    the names it sets; an entry that is not there is skipped, and the default entry must be."""
    if not isinstance(entries, dict) or not isinstance(entries.get(DEFAULT_ENTRY), dict):
        raise ValueError("platform_values takes {platform: {name: value}} with a %r entry; got %r"
                         % (DEFAULT_ENTRY, entries))
    values = {}
    for key in platform_keys(facts):
        values.update(entries.get(key) or {})
    return values
