# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the collection's filters and tests share: plain functions whose bad input becomes an Ansible error."""

from __future__ import annotations

import functools


def raising(error_class, function):
    """function, with the ValueError it raises for a bad or unknown input turned into error_class, same message."""
    @functools.wraps(function)
    def plugin(*args):
        try:
            return function(*args)
        except ValueError as error:
            raise error_class(str(error)) from error
    return plugin
