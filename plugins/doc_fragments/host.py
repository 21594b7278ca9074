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
  timeout_variable:
    description:
      - The name of the variable that sets O(timeout), such as a role's C(mig_timeout). A message about a command
        that ran past its timeout names it, so the operator knows what to raise.
    type: str
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

    LOCK = r"""
options:
  lock_timeout:
    description:
      - Seconds to wait for the node lock C(/run/gpuops-hardening/node.lock) (below O(root)) while another
        gpuops.hardening run holds it. Every module that changes the node holds that lock from its first read to
        its last write, so that two runs at once never interleave their changes.
      - When the wait runs out, the module fails before it has read or changed anything, with a message that names
        the holder (module, pid, since when, and its command line while it runs). A wait of a second or more is
        reported as a warning.
      - Only the running user (root) may reach the lock. Its folder is created mode 0700, and a module refuses it,
        before changing anything, when it is a symbolic link, not a directory, not that user's, or writable by group
        or others; a symbolic link in place of the lock file is refused too.
      - V(0) fails at once when the lock is held.
      - To set it for every module of a play, use C(module_defaults) with the action group
        C(group/gpuops.hardening.node).
      - In check mode the lock is neither taken nor created.
    type: int
    default: 300
"""
