# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """Options every host-converging module of the collection shares.

    The argument spec that matches lives once, in module_utils/host_options.py.
    """

    DOCUMENTATION = r"""
options:
  root:
    description:
      - The directory the host's file system is read and written under; every absolute path the module uses
        (C(/etc), C(/proc), C(/sys), C(/run)) is taken below it.
      - Tests point it at a prepared tree; on a real host leave it at C(/).
    type: path
    default: /
  timeout:
    description:
      - Seconds each external command (C(systemctl), C(nvidia-smi), C(swapoff), ...) may run. A command that runs
        longer is stopped, and the module fails with a message that names it.
    type: int
    default: 60
"""

    LIVE = r"""
options:
  apply_live:
    description:
      - Also apply the values to the running kernel. When false, only the files are converged.
      - Where the kernel's files cannot be written (inside a container), the live part is skipped with a warning
        whatever this says.
    type: bool
    default: true
"""
