# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Facts as ansible.builtin.setup gathers them, from Ansible's own collectors, for a module
that returns them with its own result and so spares the play a call of setup on the node."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.facts import ansible_collector, default_collectors
from ansible.module_utils.facts.collector import CollectorNotFoundError, CycleFoundInFactDeps, UnresolvedFactDep
from ansible.module_utils.facts.namespace import PrefixFactNamespace

# What setup always gathers, and what gather_subset "min" names: setup's own list
# (ansible/modules/setup.py, minimal_gather_subset), which Ansible keeps in the module, out of
# reach of other modules. molecule/default/tests/test_precheck.py compares the result with
# setup's on a lab node, key for key, so that a change there shows.
MINIMAL_GATHER_SUBSET = frozenset(["apparmor", "caps", "cmdline", "date_time", "distribution", "dns", "env", "fips",
                                   "local", "lsb", "pkg_mgr", "platform", "python", "selinux", "service_mgr",
                                   "ssh_pub_keys", "user"])
# setup's gather_timeout default, in seconds.
GATHER_TIMEOUT = 10


def gather(module, gather_subset):
    """The facts of gather_subset (setup's meaning), keyed as setup returns them (ansible_os_family, ...);
    a subset Ansible does not know fails the module, naming it, as setup does."""
    try:
        collector = ansible_collector.get_ansible_collector(
            all_collector_classes=default_collectors.collectors,
            namespace=PrefixFactNamespace(namespace_name="ansible", prefix="ansible_"),
            filter_spec=[], gather_subset=list(gather_subset), gather_timeout=GATHER_TIMEOUT,
            minimal_gather_subset=MINIMAL_GATHER_SUBSET)
    except (TypeError, CollectorNotFoundError, CycleFoundInFactDeps, UnresolvedFactDep) as error:
        module.fail_json(msg="gather_subset: %s" % error)
    return collector.collect(module=module)
