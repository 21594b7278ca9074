# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of gpuops.hardening.installed_files: files and templates become content, then one module call."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleActionFail, AnsibleError
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    """Reads each src and renders each template here, so the node gets every file in a single module call."""

    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp  # unused: the module gets every file in its arguments
        task_vars = task_vars or {}
        result.update(self._execute_module(module_name=self._task.action, module_args=self.module_arguments(task_vars),
                                           task_vars=task_vars))
        return result

    def module_arguments(self, task_vars):
        module_args = dict(self._task.args)
        try:
            module_args["files"] = [self._with_content(entry, task_vars) for entry in module_args.get("files") or []]
        except AnsibleError as error:
            raise AnsibleActionFail(to_text(error))
        return module_args

    def _with_content(self, entry, task_vars):
        """The entry with src or template replaced by the content they give; other entries unchanged."""
        if not isinstance(entry, dict):
            raise AnsibleActionFail("each item of files must be a dict with path and content, src or template, "
                                    "got %r" % (entry,))
        given = [key for key in ("content", "src", "template") if entry.get(key) is not None]
        if len(given) != 1:
            raise AnsibleActionFail("files item %s: give exactly one of content, src and template, got %s"
                                    % (entry.get("path"), ", ".join(given) or "none"))
        if given[0] == "content":
            return entry
        resolved = dict((key, value) for key, value in entry.items() if key not in ("src", "template"))
        if given[0] == "src":
            resolved["content"] = self._read_source(entry["src"])
        else:
            resolved["content"] = self._render_template(entry["template"], task_vars)
        return resolved

    def _read_source(self, source):
        """The bytes of a controller file, found as copy's src is (the role's files/ first), as text."""
        path = self._loader.get_real_file(self._find_needle("files", source), decrypt=True)
        try:
            with open(path, "rb") as handle:
                return to_text(handle.read(), errors="surrogate_or_strict")
        finally:
            self._loader.cleanup_tmp_file(path)

    def _render_template(self, source, task_vars):
        """A controller template rendered as the ansible.builtin.template lookup does (the role's templates/ first,
        with ansible_managed and the template_* variables)."""
        lookup = self._shared_loader_obj.lookup_loader.get("ansible.builtin.template", loader=self._loader,
                                                           templar=self._templar)
        return to_text(lookup.run([source], variables=task_vars)[0])
