# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller side of a feature module: answer from the play's precheck, or call the node.

gpuops.hardening.precheck, registered as gpuops_precheck at the start of a run (site.yml's first play), has run
every call the node recorded in check mode. A call with exactly a recorded call's arguments,
whose check would change nothing, gets that check's result here, with no call on the node.
The answers stand only while the node is as the precheck saw it: the first feature call
that changes the node or fails sets the fact gpuops_precheck_stale to the precheck's token,
and every later call goes to the node.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.gpuops.hardening.plugins.plugin_utils.plain_data import plain

PRECHECK_VARIABLE = "gpuops_precheck"
STALE_FACT = "gpuops_precheck_stale"
ANSWERED_BY = "gpuops.hardening.precheck: this call's check at the start of the run would change nothing"


def precheck_answer(precheck, stale_token, module_name, module_args):
    """The precheck's result for this call when it can stand in for the call; None when the node must answer."""
    if not isinstance(precheck, dict) or precheck.get("failed") or not precheck.get("token"):
        return None
    if stale_token == precheck["token"]:
        return None
    wanted = plain(module_args)
    for entry in precheck.get("features") or []:
        if entry.get("module") != module_name or plain(entry.get("args")) != wanted:
            continue
        result = entry.get("result") or {}
        if result.get("changed") or result.get("failed"):
            return None
        answer = dict(result, changed=False, precheck=ANSWERED_BY)
        answer.pop("failed", None)
        return answer
    return None


class PrecheckedAction(ActionBase):
    """Runs a feature module, unless the play's precheck already answers the call."""

    TRANSFERS_FILES = False

    def module_arguments(self, task_vars):  # pylint: disable=unused-argument
        """The arguments the module gets; an action plugin that prepares them on the controller overrides this."""
        return dict(self._task.args)

    def run(self, tmp=None, task_vars=None):
        result = super(PrecheckedAction, self).run(tmp, task_vars)
        del tmp  # unused: the module gets everything in its arguments
        task_vars = task_vars or {}
        # The task's own module: meta/runtime.yml routes several modules' action to one plugin,
        # so the resolved action names the plugin, not the module.
        module = self._task.action
        module_args = self.module_arguments(task_vars)
        precheck = task_vars.get(PRECHECK_VARIABLE)
        answer = precheck_answer(precheck, task_vars.get(STALE_FACT), module.split(".")[-1], module_args)
        if answer is not None:
            result.update(answer)
            return result
        result.update(self._execute_module(module_name=module, module_args=module_args, task_vars=task_vars))
        if (result.get("changed") or result.get("failed")) and isinstance(precheck, dict) and precheck.get("token"):
            facts = dict(result.get("ansible_facts") or {})
            facts[STALE_FACT] = precheck["token"]
            result["ansible_facts"] = facts
        return result
