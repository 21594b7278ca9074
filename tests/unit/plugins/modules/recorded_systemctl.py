# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stand-in for module_utils.systemd.Systemctl that records what a module asks of systemd.

It keeps the real helper's contract: enable and disable return whether anything changed,
and in check mode they report without changing or recording anything.
"""

from __future__ import annotations

import contextlib
from unittest import mock


class UnitEnablement:
    """enable, disable and daemon-reload, kept in the enabled set and calls list of the object that
    ``books`` returns (a test's host, or the class itself)."""

    def __init__(self, module, timeout=60):
        self.module = module

    @property
    def books(self):
        raise NotImplementedError

    def is_enabled(self, unit):
        return unit in self.books.enabled

    def daemon_reload(self):
        if not self.module.check_mode:
            self.books.calls.append("daemon-reload")

    def enable(self, unit):
        return self._set(unit, True)

    def disable(self, unit):
        return self._set(unit, False)

    def _set(self, unit, wanted):
        if (unit in self.books.enabled) == wanted:
            return False
        if not self.module.check_mode:
            (self.books.enabled.add if wanted else self.books.enabled.discard)(unit)
            self.books.calls.append(("enable " if wanted else "disable ") + unit)
        return True


class RecordedSystemctl(UnitEnablement):
    """Enabled units and the calls made, kept on the class so a test can read them after the module ran."""

    enabled = set()
    calls = []

    @property
    def books(self):
        return RecordedSystemctl


@contextlib.contextmanager
def recorded_systemctl(module_code):
    """Replace Systemctl in a module's code for the block; yields the class, emptied."""
    RecordedSystemctl.enabled = set()
    RecordedSystemctl.calls = []
    with mock.patch.object(module_code, "Systemctl", RecordedSystemctl):
        yield RecordedSystemctl
