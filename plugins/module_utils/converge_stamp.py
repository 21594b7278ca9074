# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""When the node was last converged: the modification time of one small file.

gpuops.hardening.node touches it at the end of every call outside check mode in which no feature failed;
the audit's metrics read its time. The content never changes (only the time does), so two nodes converged
alike hold the same bytes, and the file is the run's bookkeeping, not a change the call reports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import tempfile
import time

from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import under_root

STAMP_PATH = "/var/lib/gpuops-hardening/last-converge"
CONTENT = ("# gpuops.hardening: this file's modification time is the end of the last node call that converged "
           "this node\n# outside check mode without a failed feature. The audit's metrics read it.\n")


def record(root, now=None):
    """Touch the stamp at now (Unix time, default the clock); an OSError propagates, nothing half-written."""
    path = under_root(root, STAMP_PATH)
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o755)
    if not os.path.isfile(path):
        fd, temporary = tempfile.mkstemp(prefix=".gpuops-", dir=directory)
        try:
            with os.fdopen(fd, "w") as handle:
                handle.write(CONTENT)
            os.chmod(temporary, 0o644)
            os.rename(temporary, path)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
    stamp = time.time() if now is None else now
    os.utime(path, (stamp, stamp))


def last_converged(root):
    """The Unix time of the last converge, or None when no call has recorded one."""
    try:
        return os.stat(under_root(root, STAMP_PATH)).st_mtime
    except OSError:
        return None
