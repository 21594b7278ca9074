# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of the feature modules that meta/runtime.yml routes here (plugin_utils/prechecked_action.py).

A call the play's precheck (gpuops_precheck) found in sync is answered here, with no call
on the node. nvidia_mig comes here too: its calls are never answered (they are not
recorded), but a change it makes ends the precheck's answers for the rest of the play.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.plugin_utils.prechecked_action import PrecheckedAction


class ActionModule(PrecheckedAction):
    """Answers from the precheck, or runs the module named by the task."""
