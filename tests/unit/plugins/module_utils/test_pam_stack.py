# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a PAM service's session stack runs pam_limits."""

from __future__ import annotations

from ansible_collections.gpuops.hardening.plugins.module_utils.pam_stack import pam_stack_has_limits


def _pam(files):
    return files.get


def test_pam_limits_found_through_debian_include():
    files = {"su-l": "auth include su\nsession include su\n", "su": "@include common-session\nsession required pam_limits.so\n"}
    assert pam_stack_has_limits("su-l", _pam(files)) is True


def test_pam_limits_found_through_redhat_include():
    files = {
        "sshd": "session include password-auth\n",
        "password-auth": "-session optional pam_systemd.so\nsession required /usr/lib64/security/pam_limits.so\n",
    }
    assert pam_stack_has_limits("sshd", _pam(files)) is True


def test_pam_limits_commented_out_or_auth_only_is_missing():
    files = {
        "login": "# session required pam_limits.so\nauth required pam_limits.so\n@include common-session\n",
        "common-session": "session required pam_unix.so\n",
    }
    assert pam_stack_has_limits("login", _pam(files)) is False


def test_pam_service_not_installed_is_none():
    assert pam_stack_has_limits("sshd", _pam({})) is None


def test_pam_include_loop_terminates():
    files = {"a": "@include b\n", "b": "@include a\n"}
    assert pam_stack_has_limits("a", _pam(files)) is False
