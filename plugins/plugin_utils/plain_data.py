# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plain Python data from what Ansible hands an action plugin (its own mapping and string types)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping


def plain(value):
    """dicts, lists, str, int, float, bool and None only, so json.dumps and comparisons behave."""
    if isinstance(value, Mapping):
        return dict((str(key), plain(item)) for key, item in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(item) for item in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)
