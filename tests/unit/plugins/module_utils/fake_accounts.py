# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host's accounts as tables, for module_utils.accounts: getpwnam and getgrnam read them,
and groupadd and gpasswd, run through its run(), change them.

The exit statuses follow the shadow tools' manual pages: groupadd(8) exits 9 when the group
name is taken; gpasswd(1) exits non-zero, naming the group, when it does not exist.
"""

from __future__ import annotations

import contextlib
import os
from collections import namedtuple
from unittest import mock

from ansible_collections.gpuops.hardening.plugins.module_utils import accounts

GroupEntry = namedtuple("GroupEntry", "gr_name gr_gid gr_mem")
UserEntry = namedtuple("UserEntry", "pw_name pw_gid")
FIRST_SYSTEM_GID = 999


class AccountTables:
    """users: name to primary gid; groups: name to [gid, members]. commands: what the tools were asked."""

    def __init__(self, users=None, groups=None):
        self.users = dict(users or {"root": 0})
        self.groups = dict((name, list(entry)) for name, entry in (groups or {"root": (0, [])}).items())
        self.commands = []
        # A group another process adds between the read and groupadd.
        self.added_by_others = None
        self.hang = False

    def getpwnam(self, name):
        if name not in self.users:
            raise KeyError("getpwnam(): name not found: %r" % name)
        return UserEntry(name, self.users[name])

    def getgrnam(self, name):
        if name not in self.groups:
            raise KeyError("getgrnam(): name not found: %r" % name)
        gid, members = self.groups[name]
        return GroupEntry(name, gid, list(members))

    def run(self, module, argv, timeout=30, **kwargs):
        tool, args = os.path.basename(argv[0]), list(argv[1:])
        self.commands.append(" ".join([tool] + args))
        if self.hang:
            raise accounts.CommandTimeout("%s did not finish within %s seconds" % (" ".join([tool] + args), timeout))
        if tool == "groupadd":
            assert args[0] == "--system", args
            if self.added_by_others:
                self.groups[self.added_by_others] = [FIRST_SYSTEM_GID - 1, []]
            if args[1] in self.groups:
                return 9, "", "groupadd: group '%s' already exists\n" % args[1]
            self.groups[args[1]] = [FIRST_SYSTEM_GID - len(self.groups), []]
            return 0, "", ""
        assert tool == "gpasswd" and args[0] == "-a", argv
        user, group = args[1], args[2]
        if group not in self.groups:
            return 3, "", "gpasswd: group '%s' does not exist in /etc/group\n" % group
        if user not in self.groups[group][1]:
            self.groups[group][1].append(user)
        return 0, "Adding user %s to group %s\n" % (user, group), ""

    @contextlib.contextmanager
    def installed(self):
        names = mock.Mock(getpwnam=self.getpwnam, getgrnam=self.getgrnam)
        with mock.patch.object(accounts, "pwd", names), mock.patch.object(accounts, "grp", names), \
                mock.patch.object(accounts, "run", self.run):
            yield self
