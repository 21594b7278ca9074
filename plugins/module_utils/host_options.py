# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared module options (doc fragment gpuops.hardening.host) and the one file reader."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os


# The lock_timeout default; documented in the doc fragment gpuops.hardening.host.lock.
LOCK_TIMEOUT = 300


def host_argument_spec(live=False, lock=True):
    """Argument spec entries for the host doc fragment (and its LIVE and LOCK parts)."""
    spec = dict(
        root=dict(type="path", default="/"),
        timeout=dict(type="int", default=60),
        timeout_variable=dict(type="str"),
    )
    if live:
        spec["apply_live"] = dict(type="bool", default=True)
    if lock:
        spec["lock_timeout"] = dict(type="int", default=LOCK_TIMEOUT)
    return spec


def under_root(root, path):
    """An absolute host path taken below root (root "/" leaves it as it is)."""
    return os.path.join(root or "/", path.lstrip("/"))


def read_text(path, strip=False):
    """A file's content as text, or None when it does not exist or cannot be read.

    Undecodable bytes become surrogate escapes rather than an error: a stray
    byte in an administrator's file must not stop a run, and survives being
    written back. Standard library only: the gpu-numa-exec launcher loads this
    file outside Ansible.
    """
    try:
        with open(path, "rb") as handle:
            # As to_text(errors="surrogate_then_replace") does on Python 3.
            text = handle.read().decode("utf-8", "surrogateescape")
    except (IOError, OSError):
        return None
    return text.strip() if strip else text
