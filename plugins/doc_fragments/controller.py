# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """Attributes of the collection's controller-side tasks: action plugins that send nothing to the host."""

    DOCUMENTATION = r"""
attributes:
  check_mode:
    description: Runs the same in check mode; it never changes the host.
    support: full
  diff_mode:
    description: Has no diff.
    support: none
  action:
    description: Runs on the controller.
    support: full
"""
