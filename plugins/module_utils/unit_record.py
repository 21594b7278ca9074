# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A durable record of systemd units a module still owes an action: written before the
disruptive step, removed once the units are back, so that a run killed in between (a lost
SSH session, a cancelled AWX job) is finished by the next run.

The record is a JSON file ``{"units": [unit, ...]}``, written atomically through
managed_files.ensure_content (a kill never leaves half of it).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import read_text, under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import ensure_content, remove_path

STATE_DIR = "/var/lib/gpuops-hardening"
# The GPU clients nvidia_mig stopped around a MIG change and has not started again yet.
MIG_CLIENTS_STOPPED = STATE_DIR + "/mig-clients-stopped.json"
# Units whose new unit file or settings are written but which have not been restarted on them yet.
PERSISTENCED_RESTART_PENDING = STATE_DIR + "/persistenced-restart-pending.json"
MPS_RESTART_PENDING = STATE_DIR + "/mps-restart-pending.json"
CONTAINER_RUNTIME_ACTIONS_PENDING = STATE_DIR + "/container-runtime-actions-pending.json"


class RecordError(Exception):
    """The record exists but is not one this collection wrote; the message names the path."""


def render(units):
    return json.dumps({"units": list(units)}, indent=2, sort_keys=True) + "\n"


def parse(text, path):
    """The units of a record's text; [] when there is none (text None)."""
    if text is None:
        return []
    try:
        units = json.loads(text).get("units")
    except (ValueError, AttributeError):
        units = None
    if not isinstance(units, list) or not all(isinstance(unit, str) and unit for unit in units):
        raise RecordError('%s is not a record of units ({"units": [unit names]}): %r; start the units it meant by hand '
                          "and remove the file" % (path, (text or "")[:200]))
    return units


class UnitRecord(object):
    """The record at ``path`` (a host path, taken below the module's root)."""

    def __init__(self, module, path):
        self.module = module
        self.path = path
        self.host_path = under_root(module.params.get("root"), path)

    def units(self):
        return parse(read_text(self.host_path), self.path)

    def write(self, units):
        """Record units before the step that leaves them owed; nothing in check mode."""
        ensure_content(self.module, self.host_path, render(units), mode=0o644)

    def remove(self):
        if self.module.check_mode or not os.path.lexists(self.host_path):
            return
        remove_path(self.module, self.host_path)
