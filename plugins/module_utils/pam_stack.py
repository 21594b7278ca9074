# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PAM service stacks: does a service's session stack run pam_limits?

Sessions a service opens ignore limits.conf and limits.d unless pam_limits.so
runs in its session stack, directly or through an included stack.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def pam_stack_has_limits(service, read_service, depth=0):
    """True when the PAM service's session stack runs pam_limits, following
    ``@include`` (Debian) and ``include``/``substack`` (Red Hat). None when the
    service file does not exist. read_service(name) returns its text or None.
    """
    text = read_service(service)
    if text is None:
        return None
    if depth > 8:
        return False
    for raw in text.splitlines():
        fields = raw.split("#", 1)[0].split()
        if not fields:
            continue
        if fields[0] == "@include" and len(fields) > 1:
            if pam_stack_has_limits(fields[1], read_service, depth + 1):
                return True
            continue
        if len(fields) < 3 or fields[0].lstrip("-") != "session":
            continue
        if fields[1] in ("include", "substack"):
            if pam_stack_has_limits(fields[2], read_service, depth + 1):
                return True
        elif fields[2].rsplit("/", 1)[-1] == "pam_limits.so":
            return True
    return False
