# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The installed_files action plugin: src and template become content on the controller."""

from __future__ import annotations

from unittest import mock

import pytest

from ansible.errors import AnsibleActionFail
from ansible.parsing.dataloader import DataLoader

from ansible_collections.gpuops.hardening.plugins.action.installed_files import ActionModule


class FakeLookup:
    def __init__(self):
        self.calls = []

    def run(self, terms, variables=None):
        self.calls.append((terms, variables))
        return ["rendered %s for %s\n" % (terms[0], variables["inventory_hostname"])]


@pytest.fixture
def action(tmp_path):
    files = tmp_path / "files"
    files.mkdir()
    (files / "helper.py").write_bytes(b"VALUE = '\xc3\xa9'\n\n")
    plugin = ActionModule.__new__(ActionModule)
    plugin._loader = DataLoader()
    plugin._find_needle = lambda folder, name: str(tmp_path / folder / name)
    plugin.lookup = FakeLookup()
    plugin._shared_loader_obj = mock.Mock()
    plugin._shared_loader_obj.lookup_loader.get.return_value = plugin.lookup
    plugin._templar = None
    return plugin


def test_src_is_read_unchanged(action):
    entry = action._with_content({"path": "/opt/helper.py", "src": "helper.py", "mode": "0644"}, {})
    assert entry == {"path": "/opt/helper.py", "content": u"VALUE = '\u00e9'\n\n", "mode": "0644"}


def test_template_is_rendered_with_the_task_variables(action):
    entry = action._with_content({"path": "/etc/x.service", "template": "x.service.j2"}, {"inventory_hostname": "n1"})
    assert entry == {"path": "/etc/x.service", "content": "rendered x.service.j2 for n1\n"}
    assert action._shared_loader_obj.lookup_loader.get.call_args[0] == ("ansible.builtin.template",)


def test_content_passes_through(action):
    entry = {"path": "/usr/local/bin/x", "content": "#!/bin/sh\n", "mode": "0755"}
    assert action._with_content(entry, {}) is entry


@pytest.mark.parametrize("entry, message", [
    ({"path": "/x", "src": "a", "content": "b"}, "give exactly one of content, src and template, got content, src"),
    ({"path": "/x"}, "give exactly one of content, src and template, got none"),
    ("/x", "each item of files must be a dict"),
])
def test_unclear_entries_fail(action, entry, message):
    with pytest.raises(AnsibleActionFail, match=message):
        action._with_content(entry, {})
