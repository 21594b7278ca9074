# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure memlock helpers: the limit's dialects, pam_limits files, PAM stacks, daemon.json."""

from __future__ import annotations

import json

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import memlock
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import dropin_files, last_setting, parse_show

MEMLOCK_UNLIMITED = {"Name": "memlock", "Hard": -1, "Soft": -1}


# --- the limit ---------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    ("unlimited", "unlimited"),
    (" unlimited ", "unlimited"),
    (65536, 65536),
    ("65536", 65536),
    (memlock.MAX_KIB, memlock.MAX_KIB),
])
def test_parse_limit_accepts(value, expected):
    assert memlock.parse_limit(value) == expected


@pytest.mark.parametrize("value", ["abc", "0", 0, -5, "-1", "1.5", 1.5, True, "", "infinity", "64K", memlock.MAX_KIB + 1, "007"])
def test_parse_limit_rejects_with_what_is_allowed(value):
    with pytest.raises(ValueError, match="allowed: unlimited or a positive integer"):
        memlock.parse_limit(value)


def test_dialects_of_unlimited_and_kib():
    assert memlock.systemd_value("unlimited") == "infinity"
    assert memlock.systemd_value(65536) == "65536K"
    assert memlock.docker_ulimit("unlimited") == MEMLOCK_UNLIMITED
    assert memlock.docker_ulimit(65536) == {"Name": "memlock", "Hard": 67108864, "Soft": 67108864}
    assert memlock.limit_bytes("unlimited") is None
    assert memlock.limit_bytes(8) == 8192


@pytest.mark.parametrize("text, expected", [("infinity", "unlimited"), ("8388608", 8192), ("", None), (None, None), ("x", None)])
def test_from_systemd_bytes(text, expected):
    assert memlock.from_systemd_bytes(text) == expected


@pytest.mark.parametrize("have, wanted, expected", [
    ("unlimited", "unlimited", True), ("unlimited", 10, True), (8192, "unlimited", False),
    (8192, 8192, True), (8192, 8193, False), (None, 1, False),
])
def test_covers(have, wanted, expected):
    assert memlock.covers(have, wanted) is expected


# --- pam_limits files --------------------------------------------------------

def test_parse_limits_reads_memlock_lines_only():
    text = (
        "# a comment\n"
        "*  soft  memlock  unlimited  # trailing comment\n"
        "@gpu  -  memlock  65536\n"
        "alice  hard  nofile  4096\n"
        "root  hard  memlock  -1\n"
        "broken line\n"
    )
    assert memlock.parse_limits(text) == [
        ("*", "soft", "unlimited"),
        ("@gpu", "soft", 65536),
        ("@gpu", "hard", 65536),
        ("root", "hard", "unlimited"),
    ]


def test_effective_login_limits_last_file_wins_per_domain():
    files = [
        ("/etc/security/limits.conf", "*  hard  memlock  64\nroot - memlock 128\n"),
        ("/etc/security/limits.d/10-site.conf", "*  soft  memlock  32\n"),
        ("/etc/security/limits.d/90-gpuops-memlock.conf", "*  soft  memlock  unlimited\n*  hard  memlock  unlimited\n"),
    ]
    found = memlock.effective_login_limits(files, ["*", "root"])
    assert found["*"] == {
        "soft": "unlimited", "hard": "unlimited",
        "soft_source": "/etc/security/limits.d/90-gpuops-memlock.conf",
        "hard_source": "/etc/security/limits.d/90-gpuops-memlock.conf",
    }
    # "*" never reaches root: root keeps its own line.
    assert found["root"]["hard"] == 128 and found["root"]["hard_source"] == "/etc/security/limits.conf"


def test_limits_domains_in_order():
    assert memlock.limits_domains("* soft memlock 1\n* hard memlock 1\nroot - memlock 1\n") == ["*", "root"]


# --- PAM stacks --------------------------------------------------------------

def _pam(files):
    return files.get


def test_pam_limits_found_through_debian_include():
    files = {"su-l": "auth include su\nsession include su\n", "su": "@include common-session\nsession required pam_limits.so\n"}
    assert memlock.pam_stack_has_limits("su-l", _pam(files)) is True


def test_pam_limits_found_through_redhat_include():
    files = {
        "sshd": "session include password-auth\n",
        "password-auth": "-session optional pam_systemd.so\nsession required /usr/lib64/security/pam_limits.so\n",
    }
    assert memlock.pam_stack_has_limits("sshd", _pam(files)) is True


def test_pam_limits_commented_out_or_auth_only_is_missing():
    files = {
        "login": "# session required pam_limits.so\nauth required pam_limits.so\n@include common-session\n",
        "common-session": "session required pam_unix.so\n",
    }
    assert memlock.pam_stack_has_limits("login", _pam(files)) is False


def test_pam_service_not_installed_is_none():
    assert memlock.pam_stack_has_limits("sshd", _pam({})) is None


def test_pam_include_loop_terminates():
    files = {"a": "@include b\n", "b": "@include a\n"}
    assert memlock.pam_stack_has_limits("a", _pam(files)) is False


# --- daemon.json -------------------------------------------------------------

def test_merge_into_missing_or_blank_file():
    for before in (None, "", "  \n"):
        text, changed = memlock.merge_daemon_json(before, memlock.docker_ulimit("unlimited"))
        assert changed
        assert json.loads(text) == {"default-ulimits": {"memlock": MEMLOCK_UNLIMITED}}
        assert text.endswith("}\n")


def test_merge_keeps_every_other_key_in_order_and_indent():
    before = (
        '{\n'
        '    "log-driver": "json-file",\n'
        '    "default-ulimits": {\n'
        '        "nofile": {"Name": "nofile", "Hard": 65536, "Soft": 65536}\n'
        '    },\n'
        '    "runtimes": {"nvidia": {"path": "nvidia-container-runtime", "runtimeArgs": []}},\n'
        '    "data-root": "/srv/docker"\n'
        '}\n'
    )
    text, changed = memlock.merge_daemon_json(before, memlock.docker_ulimit("unlimited"))
    assert changed
    merged = json.loads(text)
    assert list(merged) == ["log-driver", "default-ulimits", "runtimes", "data-root"]
    assert list(merged["default-ulimits"]) == ["nofile", "memlock"]
    assert merged["default-ulimits"]["nofile"] == {"Name": "nofile", "Hard": 65536, "Soft": 65536}
    assert merged["default-ulimits"]["memlock"] == MEMLOCK_UNLIMITED
    assert merged["runtimes"] == {"nvidia": {"path": "nvidia-container-runtime", "runtimeArgs": []}}
    assert text.splitlines()[1].startswith('    "log-driver"')


def test_merge_replaces_other_memlock_in_place():
    ulimits = {"memlock": {"Name": "memlock", "Hard": 67108864, "Soft": 65536}, "nofile": {"Name": "nofile", "Hard": 1, "Soft": 1}}
    before = json.dumps({"default-ulimits": ulimits, "debug": True}, indent=2)
    text, changed = memlock.merge_daemon_json(before, memlock.docker_ulimit("unlimited"))
    assert changed
    merged = json.loads(text)
    assert list(merged["default-ulimits"]) == ["memlock", "nofile"]
    assert merged["default-ulimits"]["memlock"] == MEMLOCK_UNLIMITED
    assert merged["debug"] is True


def test_merge_is_a_no_op_when_memlock_already_matches_even_in_other_case_or_order():
    before = '{"default-ulimits": {"memlock": {"soft": -1, "name": "memlock", "hard": -1}}, "iptables": false}'
    text, changed = memlock.merge_daemon_json(before, memlock.docker_ulimit("unlimited"))
    assert not changed
    assert text == before


ENTRY = '{"Name": "memlock", "Hard": -1, "Soft": -1}'


def test_merge_adds_one_line_to_existing_default_ulimits():
    before = (
        '{\n  "log-driver": "json-file",\n  "default-ulimits": {\n    "nofile": {"Name": "nofile", "Hard": 65536, "Soft": 65536}\n  },\n'
        '  "debug": true\n}\n'
    )
    text, dummy = memlock.merge_daemon_json(before, memlock.docker_ulimit("unlimited"))
    assert text == before.replace("65536}\n", '65536},\n    "memlock": %s\n' % ENTRY)


def test_merge_appends_default_ulimits_after_the_last_key():
    before = '{\n\t"log-driver": "json-file",\n\t"log-opts": {"max-size": "10m"}\n}\n'
    text, dummy = memlock.merge_daemon_json(before, memlock.docker_ulimit("unlimited"))
    assert text == '{\n\t"log-driver": "json-file",\n\t"log-opts": {"max-size": "10m"},\n\t"default-ulimits": {\n\t\t"memlock": %s\n\t}\n}\n' % ENTRY


def test_merge_continues_a_one_line_file_on_its_line():
    before = '{"debug": true, "default-ulimits": {"nofile": {"Name": "nofile", "Hard": 1, "Soft": 1}}}'
    text, dummy = memlock.merge_daemon_json(before, memlock.docker_ulimit("unlimited"))
    assert text == '{"debug": true, "default-ulimits": {"nofile": {"Name": "nofile", "Hard": 1, "Soft": 1}, "memlock": %s}}' % ENTRY


def test_merge_replaces_only_the_memlock_value_text():
    before = '{\n  "default-ulimits": {\n    "memlock": {\n      "Name": "memlock", "Hard": 65536, "Soft": 65536\n    }\n  }\n}\n'
    text, dummy = memlock.merge_daemon_json(before, memlock.docker_ulimit("unlimited"))
    assert text == '{\n  "default-ulimits": {\n    "memlock": %s\n  }\n}\n' % ENTRY


@pytest.mark.parametrize("before", ['{}', '{"default-ulimits": {}}', '{ "default-ulimits" : { } , "a" : 1 }'])
def test_merge_of_empty_objects(before):
    text, changed = memlock.merge_daemon_json(before, memlock.docker_ulimit("unlimited"))
    assert changed
    merged = json.loads(text)
    assert merged["default-ulimits"] == {"memlock": MEMLOCK_UNLIMITED}
    assert merged.get("a", 1) == 1


def test_merge_with_duplicate_keys_edits_the_last_occurrence():
    before = '{"default-ulimits": {"nofile": {"Name": "nofile", "Hard": 1, "Soft": 1}}, "default-ulimits": {}}'
    text, dummy = memlock.merge_daemon_json(before, memlock.docker_ulimit("unlimited"))
    assert json.loads(text)["default-ulimits"] == {"memlock": MEMLOCK_UNLIMITED}


@pytest.mark.parametrize("before, fragment", [
    ('{"log-driver": "json-file",}', "is not valid JSON"),
    ("{not json", "is not valid JSON"),
    ('["default-ulimits"]', "must hold a JSON object, found list"),
    ('{"default-ulimits": ["memlock=-1:-1"]}', '"default-ulimits" must be an object'),
])
def test_merge_refuses_what_it_cannot_merge_safely(before, fragment):
    with pytest.raises(memlock.DaemonJsonError, match=fragment.replace("[", r"\[")):
        memlock.merge_daemon_json(before, memlock.docker_ulimit("unlimited"))


def test_merge_keeps_non_ascii_text():
    text, dummy = memlock.merge_daemon_json('{"labels": ["owner=José"]}', memlock.docker_ulimit(1024))
    assert "José" in text


def test_daemon_json_ulimit():
    assert memlock.daemon_json_ulimit('{"default-ulimits": {"memlock": {"Name": "memlock"}}}') == {"Name": "memlock"}
    assert memlock.daemon_json_ulimit("{}") is None
    assert memlock.daemon_json_ulimit("{bad") is None


@pytest.mark.parametrize("text, expected", [("{\n\t\"a\": 1\n}", "\t"), ('{"a": 1}', "  "), ("{\n    \"a\": {\n        \"b\": 1\n    }\n}", "    ")])
def test_detect_indent(text, expected):
    assert memlock.detect_indent(text) == expected


# --- the running system ------------------------------------------------------

LIMITS_8M = (
    "Limit                     Soft Limit           Hard Limit           Units     \n"
    "Max open files            1048576              1048576              files     \n"
    "Max locked memory         8388608              8388608              bytes     \n"
)


def test_proc_memlock_hard():
    assert memlock.proc_memlock_hard(LIMITS_8M) == 8192
    assert memlock.proc_memlock_hard(LIMITS_8M.replace("8388608              bytes", "unlimited            bytes")) == "unlimited"
    assert memlock.proc_memlock_hard("") is None


def test_has_capability():
    assert not memlock.has_capability("CapEff:\t00000000a80425fb\n", memlock.CAP_SYS_RESOURCE)
    assert memlock.has_capability("CapEff:\t000001ffffffffff\n", memlock.CAP_SYS_RESOURCE)


def test_process_start_epoch_handles_spaces_in_the_name():
    stat = "42 (my (odd) daemon) S 1 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 500 1000 10\n"
    assert memlock.process_start_epoch(stat, 1000, 100) == 1005.0
    assert memlock.boot_epoch("cpu 1 2 3\nbtime 1700000000\n") == 1700000000


# --- systemd helpers this module added ---------------------------------------

def test_last_setting_takes_the_last_value_in_the_section():
    text = "[Manager]\n#DefaultLimitMEMLOCK=8M\nDefaultLimitMEMLOCK=64K\n[Other]\nDefaultLimitMEMLOCK=1\n[Manager]\nDefaultLimitMEMLOCK=infinity\n"
    assert last_setting(text, "Manager", "DefaultLimitMEMLOCK") == "infinity"
    assert last_setting("[Manager]\nDefaultLimitMEMLOCK=\n", "Manager", "DefaultLimitMEMLOCK") == ""
    assert last_setting("", "Manager", "DefaultLimitMEMLOCK") is None


def test_dropin_files_order_and_masking(tmp_path):
    etc, lib = tmp_path / "etc", tmp_path / "lib"
    etc.mkdir()
    lib.mkdir()
    for directory, name in ((etc, "90-a.conf"), (lib, "90-a.conf"), (lib, "10-b.conf"), (etc, "50-c.conf"), (etc, "x.txt")):
        (directory / name).write_text("")
    assert dropin_files([str(etc), str(lib), str(tmp_path / "absent")]) == [str(lib / "10-b.conf"), str(etc / "50-c.conf"), str(etc / "90-a.conf")]


def test_parse_show_blocks():
    text = "Id=docker.service\nLimitMEMLOCK=infinity\n\nId=slurmd.service\nExecStart={ path=/x ; argv[]=/x --a=b }\n"
    assert parse_show(text) == [{"Id": "docker.service", "LimitMEMLOCK": "infinity"}, {"Id": "slurmd.service", "ExecStart": "{ path=/x ; argv[]=/x --a=b }"}]
