# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils.accounts: reading a group and its members, and the two changes it makes."""

from __future__ import annotations

from unittest import mock

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import accounts
from ansible_collections.gpuops.hardening.tests.unit.plugins.module_utils.fake_accounts import AccountTables


@pytest.fixture
def tables():
    host = AccountTables(users={"root": 0, "alice": 1000, "bob": 1001, "svc": 990},
                         groups={"root": (0, []), "gpu-mps": (990, ["alice"])})
    with host.installed():
        yield host


def _module():
    return mock.Mock(get_bin_path=lambda name, required=False: "/usr/sbin/" + name)


def test_missing_accounts_keeps_the_order_given(tables):
    assert accounts.missing_accounts(["zed", "alice", "amy"]) == ["zed", "amy"]


def test_listed_members_and_primary_group_users_are_not_added_again(tables):
    # svc's primary group is gpu-mps (gid 990): it is in the group without being listed.
    assert accounts.members_to_add(accounts.read_group("gpu-mps"), ["alice", "svc", "bob", "bob"]) == ["bob"]


def test_every_user_is_to_be_added_to_a_group_the_host_lacks(tables):
    assert accounts.read_group("inference") is None
    assert accounts.members_to_add(None, ["alice", "bob"]) == ["alice", "bob"]
    assert accounts.group_id("inference") is None


def test_the_group_is_created_as_a_system_group_and_members_added(tables):
    changer = accounts.Accounts(_module(), timeout=7)
    assert changer.create_group("inference") is None
    assert changer.add_member("bob", "inference") is None
    assert tables.commands == ["groupadd --system inference", "gpasswd -a bob inference"]
    assert accounts.read_group("inference").gr_mem == ["bob"]


def test_a_group_another_process_added_meanwhile_is_no_error(tables):
    tables.added_by_others = "inference"
    assert accounts.Accounts(_module(), timeout=7).create_group("inference") is None


def test_a_taken_name_that_is_still_no_group_is_an_error(tables):
    # groupadd's 9 without the group there: the name clashes with something the name service hides.
    tables.run = lambda module, argv, timeout=30, **kwargs: (9, "", "groupadd: group 'x' already exists\n")
    with tables.installed():
        error = accounts.Accounts(_module(), timeout=7).create_group("x")
    assert error == "groupadd --system x failed with exit code 9: groupadd: group 'x' already exists"


def test_a_failed_or_hung_tool_is_reported_as_text(tables):
    changer = accounts.Accounts(_module(), timeout=7)
    assert changer.add_member("bob", "nogroup") == (
        "gpasswd -a bob nogroup failed with exit code 3: gpasswd: group 'nogroup' does not exist in /etc/group")
    tables.hang = True
    assert changer.create_group("inference") == "groupadd --system inference did not finish within 7 seconds"
