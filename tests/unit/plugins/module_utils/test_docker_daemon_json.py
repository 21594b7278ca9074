# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Merging the memlock entry into Docker's daemon.json, keeping the file as it is."""

from __future__ import annotations

import json

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import docker_daemon_json

MEMLOCK_UNLIMITED = {"Name": "memlock", "Hard": -1, "Soft": -1}


def test_docker_ulimit_in_bytes():
    assert docker_daemon_json.docker_ulimit("unlimited") == MEMLOCK_UNLIMITED
    assert docker_daemon_json.docker_ulimit(65536) == {"Name": "memlock", "Hard": 67108864, "Soft": 67108864}


def test_merge_into_missing_or_blank_file():
    for before in (None, "", "  \n"):
        text, changed = docker_daemon_json.merge_daemon_json(before, docker_daemon_json.docker_ulimit("unlimited"))
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
    text, changed = docker_daemon_json.merge_daemon_json(before, docker_daemon_json.docker_ulimit("unlimited"))
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
    text, changed = docker_daemon_json.merge_daemon_json(before, docker_daemon_json.docker_ulimit("unlimited"))
    assert changed
    merged = json.loads(text)
    assert list(merged["default-ulimits"]) == ["memlock", "nofile"]
    assert merged["default-ulimits"]["memlock"] == MEMLOCK_UNLIMITED
    assert merged["debug"] is True


def test_merge_is_a_no_op_when_memlock_already_matches_even_in_other_case_or_order():
    before = '{"default-ulimits": {"memlock": {"soft": -1, "name": "memlock", "hard": -1}}, "iptables": false}'
    text, changed = docker_daemon_json.merge_daemon_json(before, docker_daemon_json.docker_ulimit("unlimited"))
    assert not changed
    assert text == before


ENTRY = '{"Name": "memlock", "Hard": -1, "Soft": -1}'


def test_merge_adds_one_line_to_existing_default_ulimits():
    before = (
        '{\n  "log-driver": "json-file",\n  "default-ulimits": {\n    "nofile": {"Name": "nofile", "Hard": 65536, "Soft": 65536}\n  },\n'
        '  "debug": true\n}\n'
    )
    text, dummy = docker_daemon_json.merge_daemon_json(before, docker_daemon_json.docker_ulimit("unlimited"))
    assert text == before.replace("65536}\n", '65536},\n    "memlock": %s\n' % ENTRY)


def test_merge_appends_default_ulimits_after_the_last_key():
    before = '{\n\t"log-driver": "json-file",\n\t"log-opts": {"max-size": "10m"}\n}\n'
    text, dummy = docker_daemon_json.merge_daemon_json(before, docker_daemon_json.docker_ulimit("unlimited"))
    assert text == '{\n\t"log-driver": "json-file",\n\t"log-opts": {"max-size": "10m"},\n\t"default-ulimits": {\n\t\t"memlock": %s\n\t}\n}\n' % ENTRY


def test_merge_continues_a_one_line_file_on_its_line():
    before = '{"debug": true, "default-ulimits": {"nofile": {"Name": "nofile", "Hard": 1, "Soft": 1}}}'
    text, dummy = docker_daemon_json.merge_daemon_json(before, docker_daemon_json.docker_ulimit("unlimited"))
    assert text == '{"debug": true, "default-ulimits": {"nofile": {"Name": "nofile", "Hard": 1, "Soft": 1}, "memlock": %s}}' % ENTRY


def test_merge_replaces_only_the_memlock_value_text():
    before = '{\n  "default-ulimits": {\n    "memlock": {\n      "Name": "memlock", "Hard": 65536, "Soft": 65536\n    }\n  }\n}\n'
    text, dummy = docker_daemon_json.merge_daemon_json(before, docker_daemon_json.docker_ulimit("unlimited"))
    assert text == '{\n  "default-ulimits": {\n    "memlock": %s\n  }\n}\n' % ENTRY


@pytest.mark.parametrize("before", ['{}', '{"default-ulimits": {}}', '{ "default-ulimits" : { } , "a" : 1 }'])
def test_merge_of_empty_objects(before):
    text, changed = docker_daemon_json.merge_daemon_json(before, docker_daemon_json.docker_ulimit("unlimited"))
    assert changed
    merged = json.loads(text)
    assert merged["default-ulimits"] == {"memlock": MEMLOCK_UNLIMITED}
    assert merged.get("a", 1) == 1


def test_merge_with_duplicate_keys_edits_the_last_occurrence():
    before = '{"default-ulimits": {"nofile": {"Name": "nofile", "Hard": 1, "Soft": 1}}, "default-ulimits": {}}'
    text, dummy = docker_daemon_json.merge_daemon_json(before, docker_daemon_json.docker_ulimit("unlimited"))
    assert json.loads(text)["default-ulimits"] == {"memlock": MEMLOCK_UNLIMITED}


@pytest.mark.parametrize("before, pattern", [
    # The JSON error's own words vary between Python versions, and so does where some errors are
    # placed (3.13 puts a trailing comma on the comma itself); a missing comma is placed alike.
    ('{"log-driver": "json-file"\n "live-restore": true}', r"is not valid JSON \(.+: line 2 column 2 \(char 28\)\)"),
    ("{not json", r"is not valid JSON \(.+: line 1 column 2 \(char 1\)\)"),
    ('["default-ulimits"]', "must hold a JSON object, found list"),
    ('{"default-ulimits": ["memlock=-1:-1"]}', '"default-ulimits" must be an object'),
])
def test_merge_refuses_what_it_cannot_merge_safely(before, pattern):
    with pytest.raises(docker_daemon_json.DaemonJsonError, match=pattern):
        docker_daemon_json.merge_daemon_json(before, docker_daemon_json.docker_ulimit("unlimited"))


def test_merge_keeps_non_ascii_text():
    text, dummy = docker_daemon_json.merge_daemon_json('{"labels": ["owner=José"]}', docker_daemon_json.docker_ulimit(1024))
    assert "José" in text


def test_daemon_json_ulimit():
    assert docker_daemon_json.daemon_json_ulimit('{"default-ulimits": {"memlock": {"Name": "memlock"}}}') == {"Name": "memlock"}
    assert docker_daemon_json.daemon_json_ulimit("{}") is None
    assert docker_daemon_json.daemon_json_ulimit("{bad") is None


@pytest.mark.parametrize("text, expected", [("{\n\t\"a\": 1\n}", "\t"), ('{"a": 1}', "  "), ("{\n    \"a\": {\n        \"b\": 1\n    }\n}", "    ")])
def test_detect_indent(text, expected):
    assert docker_daemon_json.detect_indent(text) == expected


def test_top_level_keys_merge_in_place_and_keep_the_rest():
    before = '{\n    "log-driver": "json-file",\n    "default-shm-size": "64m",\n    "debug": true\n}\n'
    text, keys = docker_daemon_json.merge_top_level(
        before, {"default-shm-size": "16g", "runtimes": {"nvidia": {"path": "nvidia-container-runtime", "args": []}}})
    assert keys == ["default-shm-size", "runtimes"]
    assert text.startswith('{\n    "log-driver": "json-file",\n    "default-shm-size": "16g",\n    "debug": true,\n')
    assert list(json.loads(text)) == ["log-driver", "default-shm-size", "debug", "runtimes"]
    assert docker_daemon_json.merge_top_level(text, {"default-shm-size": "16g"}) == (text, [])


def test_top_level_keys_into_a_missing_file_or_an_empty_object():
    text, keys = docker_daemon_json.merge_top_level(None, {"default-shm-size": "1g"})
    assert json.loads(text) == {"default-shm-size": "1g"} and keys == ["default-shm-size"]
    text, keys = docker_daemon_json.merge_top_level("{}\n", {"default-shm-size": "1g"})
    assert json.loads(text) == {"default-shm-size": "1g"}


@pytest.mark.parametrize("before", ["[]", "{ not json"])
def test_top_level_keys_refuse_what_is_not_an_object(before):
    with pytest.raises(docker_daemon_json.DaemonJsonError):
        docker_daemon_json.merge_top_level(before, {"default-shm-size": "1g"})


def test_a_multi_line_runtimes_block_keeps_its_layout_when_nvidia_joins_it():
    before = '{\n  "runtimes": {\n    "x": {"path": "/x"}\n  },\n  "debug": true\n}\n'
    nvidia = {"path": "nvidia-container-runtime", "args": []}
    text, keys = docker_daemon_json.merge_top_level(before, {"runtimes": {"x": {"path": "/x"}, "nvidia": nvidia}})
    assert keys == ["runtimes"]
    assert text == ('{\n  "runtimes": {\n    "x": {"path": "/x"},\n    "nvidia": {\n      "path": '
                    '"nvidia-container-runtime",\n      "args": []\n    }\n  },\n  "debug": true\n}\n')


def test_a_one_line_runtimes_object_gets_nvidia_on_its_line():
    before = '{"runtimes": {"x": {"path": "/x"}}}\n'
    text, dummy = docker_daemon_json.merge_top_level(before, {"runtimes": {"x": {"path": "/x"}, "nvidia": {"path": "n"}}})
    assert text == '{"runtimes": {"x": {"path": "/x"}, "nvidia": {"path": "n"}}}\n'
