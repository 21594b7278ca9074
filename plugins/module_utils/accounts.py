# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A group and its members: read through the host's name service, changed with the shadow tools.

Accounts may come from LDAP or SSSD, so they are read with getpwnam and getgrnam, as
``getent`` does, not from /etc/passwd. Members are added with ``gpasswd -a``, which
accepts such accounts, where ``usermod`` wants them in /etc/passwd.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import grp
import pwd

from ansible_collections.gpuops.hardening.plugins.module_utils.commands import CommandTimeout, run

# groupadd(8): exit status 9, "group name not unique".
GROUPADD_NAME_IN_USE = 9


def read_group(name):
    """The group's entry (gr_gid, gr_mem: its listed members), or None when the host has no such group."""
    try:
        return grp.getgrnam(name)
    except KeyError:
        return None


def group_id(name):
    """The gid of the group name, or None when the host has no such group."""
    entry = read_group(name)
    return None if entry is None else entry.gr_gid


def missing_accounts(users):
    """The users, in order, that the host has no account for."""
    missing = []
    for user in users:
        try:
            pwd.getpwnam(user)
        except KeyError:
            missing.append(user)
    return missing


def members_to_add(entry, users):
    """The users, in order and once each, not yet in the group of entry (read_group): neither listed as
    members nor with it as their primary group. All of them when entry is None (no such group)."""
    wanted = []
    for user in users:
        if user in wanted:
            continue
        if entry is not None and (user in entry.gr_mem or pwd.getpwnam(user).pw_gid == entry.gr_gid):
            continue
        wanted.append(user)
    return wanted


class Accounts(object):
    """The two changes: a system group, and a member added to it."""

    def __init__(self, module, timeout):
        self.module = module
        self.timeout = timeout

    def _tool(self, name, argv):
        try:
            rc, out, err = run(self.module, [self.module.get_bin_path(name, required=True)] + argv, timeout=self.timeout)
        except CommandTimeout as error:
            return None, str(error)
        return rc, (err or out).strip()

    def create_group(self, group):
        """Returns an error text, or None. A group another process added since it was read is no error."""
        rc, text = self._tool("groupadd", ["--system", group])
        if rc == 0 or (rc == GROUPADD_NAME_IN_USE and group_id(group) is not None):
            return None
        return text if rc is None else "groupadd --system %s failed with exit code %s: %s" % (group, rc, text)

    def add_member(self, user, group):
        """Returns an error text, or None."""
        rc, text = self._tool("gpasswd", ["-a", user, group])
        if rc == 0:
            return None
        return text if rc is None else "gpasswd -a %s %s failed with exit code %s: %s" % (user, group, rc, text)
