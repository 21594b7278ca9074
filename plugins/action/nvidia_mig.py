# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of gpuops.hardening.nvidia_mig."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.plugin_utils.prechecked_action import PrecheckedAction


class ActionModule(PrecheckedAction):
    """A call the play's precheck found in sync (no GPU to change, no GPU client left stopped by an
    interrupted run) is answered with no call on the node; a change it makes ends the answers."""
