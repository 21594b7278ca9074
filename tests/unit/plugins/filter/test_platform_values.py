# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The platform_values filter, and every role's platform table read through it."""

from __future__ import annotations

import glob
import os

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.hardening.plugins.filter import platform_values

PLATFORM_VALUES = platform_values.FilterModule().filters()["platform_values"]
ROLES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles")

# The facts setup's min subset gives on the platforms the roles' meta/main.yml declare.
DEBIAN_12 = {"os_family": "Debian", "distribution": "Debian", "distribution_major_version": "12"}
UBUNTU_24 = {"os_family": "Debian", "distribution": "Ubuntu", "distribution_major_version": "24"}
ROCKY_8 = {"os_family": "RedHat", "distribution": "Rocky", "distribution_major_version": "8"}
RHEL_9 = {"os_family": "RedHat", "distribution": "RedHat", "distribution_major_version": "9"}

TABLE = {
    "default": {"python": "/usr/bin/python3", "packages": ["numactl"]},
    "RedHat": {"python": "/usr/libexec/platform-python"},
    "Rocky_8": {"packages": ["numactl", "numactl-libs"]},
}


def test_the_file_registers_the_filter_it_is_named_after():
    assert list(platform_values.FilterModule().filters()) == ["platform_values"]


def test_a_platform_without_an_entry_gets_the_default_entry():
    assert PLATFORM_VALUES(TABLE, DEBIAN_12) == TABLE["default"]


def test_the_os_family_entry_overrides_only_the_names_it_sets():
    assert PLATFORM_VALUES(TABLE, RHEL_9) == {"python": "/usr/libexec/platform-python", "packages": ["numactl"]}


def test_the_distribution_and_major_version_entry_is_the_most_specific():
    assert PLATFORM_VALUES(TABLE, ROCKY_8) == {"python": "/usr/libexec/platform-python",
                                               "packages": ["numactl", "numactl-libs"]}


def test_a_distribution_entry_outranks_the_os_family_one():
    table = {"default": {"unit": "a"}, "Debian": {"unit": "b"}, "Ubuntu": {"unit": "c"}}
    assert PLATFORM_VALUES(table, UBUNTU_24) == {"unit": "c"}
    assert PLATFORM_VALUES(table, DEBIAN_12) == {"unit": "b"}


def test_the_table_is_left_as_it_was():
    before = yaml.safe_dump(TABLE)
    PLATFORM_VALUES(TABLE, ROCKY_8)
    assert yaml.safe_dump(TABLE) == before


@pytest.mark.parametrize("facts, missing", [
    ({}, "os_family, distribution, distribution_major_version"),
    ({"os_family": "Debian", "distribution": "Debian"}, "no distribution_major_version"),
    (None, "no os_family"),
])
def test_missing_facts_fail_naming_them_and_the_way_to_gather_them(facts, missing):
    with pytest.raises(AnsibleFilterError, match=missing) as raised:
        PLATFORM_VALUES(TABLE, facts)
    assert "gather_subset [min]" in str(raised.value)


@pytest.mark.parametrize("table", [{"RedHat": {"python": "x"}}, ["default"], None, {"default": ["numactl"]}])
def test_a_table_without_a_default_entry_fails(table):
    with pytest.raises(AnsibleFilterError, match="with a 'default' entry"):
        PLATFORM_VALUES(table, DEBIAN_12)


def _role_platform_tables():
    tables = {}
    for path in sorted(glob.glob(os.path.join(ROLES, "*", "vars", "main.yml"))):
        role = path.split(os.sep)[-3]
        with open(path, encoding="utf-8") as handle:
            role_vars = yaml.safe_load(handle) or {}
        if "__%s_platforms" % role in role_vars:
            tables[role] = role_vars["__%s_platforms" % role]
    return tables


def test_no_role_needs_facts_for_platform_values():
    """The node plan needs no facts (docs/design.md: Values that differ by platform): the filter stays for plays of
    your own, and no role keeps a platform table."""
    assert _role_platform_tables() == {}


def test_no_role_keeps_per_platform_vars_files_any_more():
    leftovers = [path for path in glob.glob(os.path.join(ROLES, "*", "vars", "*.yml"))
                 if os.path.basename(path) != "main.yml"]
    assert leftovers == []


def test_a_role_gathers_facts_exactly_when_it_has_platform_values():
    gathering = set()
    for path in glob.glob(os.path.join(ROLES, "*", "tasks", "set_vars.yml")):
        with open(path, encoding="utf-8") as handle:
            tasks = yaml.safe_load(handle) or []
        if any("ansible.builtin.setup" in task for task in tasks):
            gathering.add(path.split(os.sep)[-3])
    assert gathering == set(_role_platform_tables())
