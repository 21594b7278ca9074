# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of gpuops.hardening.audit_metrics: the collection's version, then the module on the node."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.gpuops.hardening.plugins.plugin_utils.collection_version import collection_version


class ActionModule(ActionBase):
    """Fills version from galaxy.yml's (MANIFEST.json once installed) unless the task sets it."""

    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp  # unused: the module gets everything in its arguments
        module_args = dict(self._task.args)
        module_args.setdefault("version", collection_version())
        result.update(self._execute_module(module_name=self._task.action, module_args=module_args, task_vars=task_vars))
        self._remove_tmp_path(self._connection._shell.tmpdir)
        return result
