# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Facts about where a module runs: container or not, and which kernel
interfaces it may write.

Inside containers /proc/sys and /sys are read-only (and belong to the host
kernel anyway); roles then persist their configuration and skip the live apply,
saying so.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

CONTAINER_MARKERS = (
    ("/run/.containerenv", "podman"),
    ("/.dockerenv", "docker"),
)


def container_type(root="/"):
    """The container manager's name when running in a container, else None."""
    marker = os.path.join(root, "run/systemd/container")
    try:
        with open(marker) as handle:
            value = handle.read().strip()
        if value:
            return value
    except (IOError, OSError):
        pass
    for path, name in CONTAINER_MARKERS:
        if os.path.exists(os.path.join(root, path.lstrip("/"))):
            return name
    return None


def is_writable(path):
    """True when path exists and may be written; access(2) reports EROFS for
    read-only mounts, which is exactly the container case."""
    return os.path.exists(path) and os.access(path, os.W_OK)


def live_apply_blocker(path):
    """Why live kernel settings under path cannot be applied here, or None."""
    if not os.path.exists(path):
        return "%s does not exist on this kernel" % path
    if is_writable(path):
        return None
    where = container_type()
    if where:
        return "%s is read-only inside this %s container" % (path, where)
    return "%s is read-only" % path
