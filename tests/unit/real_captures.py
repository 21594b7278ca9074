# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Access to the real NVIDIA tool captures that live outside this repository.

The captures sit in ``shared/fixtures/real`` beside the checkout. They are read at
test time and never copied into the project. Each file starts with ``#`` lines
that name its source, hardware and command; :func:`load` strips them.

When ``CI`` is set the folder must exist: a missing folder fails the run instead
of silently skipping the conformance tests.
"""

from __future__ import annotations

import fnmatch
import json
import os

import pytest

ENV_VAR = "GPUOPS_REAL_FIXTURES"
RELATIVE = os.path.join("shared", "fixtures", "real")
# ansible-test runs the tests on a copy of the collection with a filtered
# environment; scripts/ansible-test.sh records the location and the CI flag here.
RUN_SETTINGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".run-settings.json")


def _run_settings():
    try:
        with open(RUN_SETTINGS, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return {}


def _candidates():
    explicit = os.environ.get(ENV_VAR) or _run_settings().get("real_fixtures")
    if explicit:
        yield explicit
    for start in (os.path.dirname(os.path.abspath(__file__)), os.getcwd()):
        path = start
        while True:
            yield os.path.join(path, RELATIVE)
            parent = os.path.dirname(path)
            if parent == path:
                break
            path = parent


def real_dir():
    """Return the captures folder, or fail (CI) / skip (elsewhere) when absent."""
    for candidate in _candidates():
        if os.path.isdir(candidate):
            return candidate
    message = "real captures not found: set %s or place them at ../%s" % (ENV_VAR, RELATIVE)
    if os.environ.get("CI") or _run_settings().get("ci"):
        pytest.fail(message)
    pytest.skip(message)
    return None  # pragma: no cover


def names(pattern="*"):
    """Sorted capture file names matching a glob pattern."""
    return sorted(n for n in os.listdir(real_dir()) if fnmatch.fnmatch(n, pattern))


def header(name):
    """The ``#`` header lines of a capture, without the leading ``# ``."""
    lines = []
    with open(os.path.join(real_dir(), name), encoding="utf-8") as handle:
        for line in handle:
            if not line.startswith("#"):
                break
            lines.append(line[1:].strip())
    return lines


def body(text):
    """A capture without its leading ``#`` header lines (source, hardware, command)."""
    lines = text.splitlines(True)
    index = 0
    while index < len(lines) and lines[index].startswith("#"):
        index += 1
    return "".join(lines[index:])


def load(name):
    """The capture's body: everything after the leading ``#`` header lines."""
    with open(os.path.join(real_dir(), name), encoding="utf-8") as handle:
        return body(handle.read())


def command_of(name):
    """The command line recorded in the capture's header (``command: ...``)."""
    for line in header(name):
        if line.startswith("command:"):
            return line.split(":", 1)[1].strip()
    return ""
