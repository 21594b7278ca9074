# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of gpuops.hardening.node: an installed_files feature's sources become content, then one call."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.gpuops.hardening.plugins.plugin_utils.file_sources import FileSources
from ansible_collections.gpuops.hardening.plugins.plugin_utils.node_plan import selected


class ActionModule(FileSources, ActionBase):
    """Keeps the features the play's tags select, then reads each src and renders each template of the plan's
    installed_files and mig_boot features here (the role's files/ and templates/ first), so the node gets the
    whole plan in its one call."""

    TRANSFERS_FILES = False
    _supports_async = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp  # unused: the module gets everything in its arguments
        task_vars = task_vars or {}
        module_args = dict(self._task.args)
        features = module_args.get("features")
        if isinstance(features, list):
            features = selected(features, task_vars.get("ansible_run_tags"), task_vars.get("ansible_skip_tags"))
            module_args["features"] = [self._with_sources(feature, task_vars) for feature in features]
        return self.run_task_module(result, module_args, task_vars)

    def _with_sources(self, feature, task_vars):
        if not isinstance(feature, dict) or not isinstance(feature.get("args"), dict):
            return feature  # the module checks every feature's shape
        if feature.get("engine") == "installed_files":
            return dict(feature, args=self.installed_files_arguments(feature["args"], task_vars))
        if feature.get("engine") == "mig_boot" and feature["args"].get("script_file"):
            files = self.installed_files_arguments(
                {"files": [dict(feature["args"]["script_file"], path="script")] + list(
                    feature["args"].get("engine_files") or [])}, task_vars)["files"]
            script = dict(files[0])
            del script["path"]
            return dict(feature, args=dict(feature["args"], script_file=script, engine_files=files[1:]))
        return feature
