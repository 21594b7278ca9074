# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""installed_files' sources on the controller: each src read and each template rendered into content, so the
node gets every file in its module call (the installed_files and node action plugins); and that module call."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleActionFail, AnsibleError
from ansible.module_utils.common.text.converters import to_text


class FileSources(object):
    """Mixed into an ActionBase: turns an installed_files argument dict's files into content."""

    def installed_files_arguments(self, module_args, task_vars):
        """module_args with every files entry's src or template replaced by its content."""
        module_args = dict(module_args)
        try:
            module_args["files"] = [self._with_content(entry, task_vars) for entry in module_args.get("files") or []]
        except AnsibleError as error:
            raise AnsibleActionFail(to_text(error))
        return module_args

    def run_task_module(self, result, module_args, task_vars):
        """The task's module run with module_args, as Ansible's normal action runs it (async too)."""
        wrap_async = self._task.async_val and not self._connection.has_native_async
        result.update(self._execute_module(module_name=self._task.action, module_args=module_args,
                                           task_vars=task_vars, wrap_async=wrap_async))
        if not wrap_async:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        return result

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
