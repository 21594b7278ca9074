# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""pam_limits files: rendering, parsing, and which line a login session gets."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import pam_limits

CONF = "/etc/security/limits.conf"
OURS = "/etc/security/limits.d/90-gpuops-memlock.conf"
OUR_TEXT = "*  soft  memlock  unlimited\n*  hard  memlock  unlimited\n"


def _values(entries):
    return [(e.domain, e.kind, e.value) for e in entries]


def test_parse_limits_reads_memlock_lines_only():
    text = (
        "# a comment\n"
        "*  soft  memlock  unlimited  # trailing comment\n"
        "@gpu  -  memlock  65536\n"
        "alice  hard  nofile  4096\n"
        "root  hard  memlock  -1\n"
        "broken line\n"
        "bob  hard  memlock  lots\n"
        "%gpu  hard  memlock  1\n"
    )
    entries = pam_limits.parse_limits(text, "/x.conf")
    assert _values(entries) == [
        ("*", "soft", "unlimited"),
        ("@gpu", "soft", 65536),
        ("@gpu", "hard", 65536),
        ("root", "hard", "unlimited"),
    ]
    assert [e.line for e in entries] == [2, 3, 3, 5] and all(e.path == "/x.conf" for e in entries)


@pytest.mark.parametrize("domain, with_root, expected", [
    ("*", True, [("*", "soft"), ("*", "hard"), ("root", "soft"), ("root", "hard")]),
    ("@gpu", True, [("@gpu", "soft"), ("@gpu", "hard"), ("root", "soft"), ("root", "hard")]),
    ("*", False, [("*", "soft"), ("*", "hard")]),
    ("root", True, [("root", "soft"), ("root", "hard")]),
])
def test_rendered_file_parses_back(domain, with_root, expected):
    text = pam_limits.render_limits(domain, 65536, with_root)
    assert text.startswith("# Managed by gpuops.hardening")
    entries = pam_limits.parse_limits(text)
    assert [(e.domain, e.kind) for e in entries] == expected
    assert all(e.value == 65536 for e in entries)
    assert ("hence root's own lines" in text) is (with_root and domain != "root")


@pytest.mark.parametrize("domain, valid", [
    ("*", True), ("alice", True), ("@gpu", True), ("1000:", True), ("@1000:2000", True), (":0", True), ("svc$", True),
    ("", False), ("a b", False), ("*\nroot", False), ("@", False), ("%gpu", False), ("../x", False),
])
def test_valid_domain(domain, valid):
    assert pam_limits.valid_domain(domain) is valid


def test_effective_login_limits_last_file_wins_per_domain():
    files = [
        (CONF, "*  hard  memlock  64\nroot - memlock 128\n"),
        ("/etc/security/limits.d/10-site.conf", "*  soft  memlock  32\n"),
        (OURS, OUR_TEXT),
    ]
    found = pam_limits.effective_login_limits(files, ["*", "root"])
    assert found["*"] == {"soft": "unlimited", "hard": "unlimited", "soft_source": OURS, "hard_source": OURS}
    # "*" never reaches root: root keeps its own line.
    assert found["root"]["hard"] == 128 and found["root"]["hard_source"] == CONF


def test_group_line_beats_default_whatever_the_file_order():
    files = [(CONF, "@gpu hard memlock 65536\n"), (OURS, OUR_TEXT)]
    overrides = pam_limits.overriding_domains(files, "*")
    assert overrides == {"@gpu": {"soft": 65536, "hard": 65536, "soft_source": CONF, "hard_source": CONF,
                                  "takes_precedence_over": "*"}}


def test_user_line_beats_group_and_default():
    files = [(CONF, "alice - memlock 1024\n@gpu - memlock 4096\n"), (OURS, "@gpu - memlock unlimited\n")]
    assert list(pam_limits.overriding_domains(files, "@gpu")) == ["alice"]
    assert sorted(pam_limits.overriding_domains(files, "*")) == ["@gpu", "alice"]


def test_lines_of_the_same_precedence_or_for_root_are_not_overrides():
    files = [(CONF, "root - memlock 64\n* - memlock 64\n@other - memlock 64\n"), (OURS, "@gpu - memlock unlimited\n")]
    assert pam_limits.overriding_domains(files, "@gpu") == {}


@pytest.mark.parametrize("domain", ["*", "@gpu", "1000:", "@1000:"])
def test_precedence_kinds(domain):
    assert pam_limits.precedence(domain) == {"*": "default", "@gpu": "group", "1000:": "user", "@1000:": "group"}[domain]


def test_login_report_names_a_capping_group_line_as_a_conflict():
    files = [(CONF, "@gpu hard memlock 65536\nbob - memlock unlimited\n"), (OURS, OUR_TEXT)]
    report, conflicts = pam_limits.login_report(files, ["*"], OURS, "unlimited")
    assert list(report) == ["*", "@gpu"]
    assert report["*"]["hard"] == "unlimited"
    assert report["@gpu"]["hard"] == 65536
    assert conflicts == [
        "@gpu hard memlock 65536 in /etc/security/limits.conf takes precedence over * in %s for members of @gpu "
        "(a group line beats a default line in any file order), so they stay below unlimited" % OURS]


def test_login_report_higher_specific_limit_is_no_conflict():
    files = [(CONF, "bob - memlock unlimited\n"), (OURS, "* - memlock 65536\n")]
    report, conflicts = pam_limits.login_report(files, ["*"], OURS, 65536)
    assert report["bob"]["soft"] == "unlimited" and conflicts == []


def test_login_report_later_file_for_our_domain_wins():
    files = [(OURS, OUR_TEXT), ("/etc/security/limits.d/99-site.conf", "* hard memlock 64\n")]
    report, conflicts = pam_limits.login_report(files, ["*"], OURS, "unlimited")
    # The soft limit above the hard one is lowered to it.
    assert report["*"]["hard"] == 64 and report["*"]["soft"] == 64
    assert conflicts == ["* hard memlock 64 in /etc/security/limits.d/99-site.conf wins over %s" % OURS]


def test_login_report_without_our_file_reports_only():
    files = [(CONF, "@gpu hard memlock 65536\n")]
    report, conflicts = pam_limits.login_report(files, ["*", "root"], None, "unlimited")
    assert report["*"]["hard"] is None and report["@gpu"]["hard"] == 65536
    assert conflicts == []
