# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The main() of a feature module: its engine, under the node lock, as one Ansible module call."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.module_utils.node_host import FeatureFailed, NodeHost
from ansible_collections.gpuops.hardening.plugins.module_utils.run_lock import hold_node_lock


def run_engine(module, engine):
    """Converge one engine under the node lock and exit with its result (fail_json on its failure)."""
    hold_node_lock(module, "gpuops.hardening.%s" % engine.NAME)
    host = NodeHost(module)
    legacy_record = host.remove_legacy_record(module.params["root"], module.check_mode)
    try:
        result = engine.converge(module.params, host, module.check_mode)
    except FeatureFailed as failure:
        _warn(module, host)
        module.fail_json(msg=failure.msg, **failure.result)
    _warn(module, host)
    if legacy_record:
        result.update(changed=True, legacy_record_removed=legacy_record)
    if not module._diff:
        result.pop("diff", None)
    module.exit_json(**result)


def _warn(module, host):
    for warning in host.warnings:
        module.warn(warning)
