# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of gpuops.hardening.validate_inputs: reads the roles' files and the host's variables."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.errors import AnsibleError
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

from ansible_collections.gpuops.hardening.plugins.plugin_utils.node_plan import (
    PLAN_ROLES,
    PlanContext,
    PlanInputError,
    audit_features,
    node_plan,
    plan_roles,
)
from ansible_collections.gpuops.hardening.plugins.plugin_utils.role_inputs import (
    COLLECTION_ROLE,
    check_collection,
    input_names,
    load_roles,
)

ROLES_DIR = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "roles"))
# Roles that only read: they run the tuning roles in check mode, and a play
# outside check mode would let those roles' handlers act.
READ_ONLY_ROLES = ("audit",)


class ActionModule(ActionBase):
    """Validates every role's inputs set for the host; nothing is sent to the host."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _VALID_ARGS = frozenset(("role", "all_roles"))

    def _given(self, names, task_vars):
        """The host's value of each name it has, templated; and one message per value that cannot be."""
        templar = self._templar.copy_with_new_env(available_variables=task_vars)
        given, errors = {}, []
        for name in sorted(names):
            if name not in task_vars:
                continue
            try:
                given[name] = templar.template(task_vars[name])
            except AnsibleError as exc:
                errors.append("%s: could not be evaluated: %s" % (name, exc.message))
        return given, errors

    def _controller_yaml(self, path):
        """A YAML file on the controller, looked for as the file lookup does (the role's files/, the playbook's)."""
        return self._loader.load_from_file(self._find_needle("files", path))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        task_vars = task_vars or {}
        role = self._task.args.get("role")
        roles = load_roles(ROLES_DIR)
        if role is not None and (role == COLLECTION_ROLE or role not in roles):
            result.update(failed=True, msg="role: got %r; allowed: %s" % (
                role, ", ".join(name for name in roles if name != COLLECTION_ROLE)))
            return result
        if role in READ_ONLY_ROLES and not self._task.check_mode:
            result.update(failed=True, msg="the %s role only reads and must run in a play with check_mode: true "
                                           "(playbooks/audit.yml does); nothing was run" % role)
            return result

        given, errors = self._given(input_names(roles), task_vars)
        more, profile, inputs = check_collection(roles, given)
        errors.extend(more)

        result.update(changed=False, profile=profile)
        all_roles = role is None or boolean(self._task.args.get("all_roles", False), strict=False)
        if all_roles:
            result["roles"] = inputs
        if role is not None:
            result["inputs"] = inputs[role]
        whole_node = role is None or role in READ_ONLY_ROLES
        if not errors and (whole_node or role in PLAN_ROLES):
            # The node call's features: every node role's and those of the host's groups, or this role's alone.
            wanted = plan_roles(task_vars.get("group_names") or []) if whole_node else (role,)
            context = PlanContext(ROLES_DIR, self._controller_yaml, task_vars.get("inventory_hostname"))
            try:
                result["plan"] = node_plan(inputs, roles, context, wanted)
                if role in READ_ONLY_ROLES:
                    result["plan"].extend(audit_features(inputs[role], roles[role].variables, context))
            except PlanInputError as error:
                errors.append(str(error))
        if errors:
            result.update(failed=True, errors=errors,
                          msg="gpuops.hardening inputs are invalid, nothing was changed: " + "; ".join(errors))
        else:
            result["msg"] = "All gpuops.hardening inputs set for this host are valid."
        return result
