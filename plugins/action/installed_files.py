# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of gpuops.hardening.installed_files: files and templates become content, then one module call."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.gpuops.hardening.plugins.plugin_utils.file_sources import FileSources


class ActionModule(FileSources, ActionBase):
    """Reads each src and renders each template here, so the node gets every file in a single module call."""

    TRANSFERS_FILES = False
    _supports_async = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp  # unused: the module gets every file in its arguments
        return self.run_task_module(result, self.installed_files_arguments(self._task.args, task_vars or {}), task_vars)
