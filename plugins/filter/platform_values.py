# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: platform_values
author: gpuops.hardening developers
version_added: 1.1.0
short_description: A role's values for the node's platform
description:
  - Takes a role's platform values, keyed by platform, and returns those that apply to the node.
  - The V(default) entry comes first; the node's OS family (V(RedHat)), distribution (V(Rocky)) and
    distribution with major version (V(Rocky_9)) entries follow, each overriding the names it sets.
    An entry the table lacks is skipped.
  - Fails, naming the missing facts, when the node's facts lack O(facts)' C(os_family), C(distribution)
    or C(distribution_major_version); and when O(_input) has no V(default) entry.
positional: facts
options:
  _input:
    description: "The values by platform, C({platform: {name: value}}), with a V(default) entry."
    type: dict
    required: true
  facts:
    description: The node's facts, C(ansible_facts); the C(min) subset is enough.
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Show the launcher's interpreter on this node
  ansible.builtin.debug:
    # /usr/libexec/platform-python on a Red Hat family node, /usr/bin/python3 elsewhere
    msg: "{{ (platforms | gpuops.hardening.platform_values(ansible_facts)).python }}"
  vars:
    platforms:
      default: {python: /usr/bin/python3}
      RedHat: {python: /usr/libexec/platform-python}
'''

RETURN = r'''
_value:
  description: "The values that apply to the node, C({name: value})."
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.hardening.plugins.plugin_utils import platform_values
from ansible_collections.gpuops.hardening.plugins.plugin_utils.jinja_plugins import raising


class FilterModule:
    """A role's values for the node's platform."""

    def filters(self):
        return {"platform_values": raising(AnsibleFilterError, platform_values.platform_values)}
