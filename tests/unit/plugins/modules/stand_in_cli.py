# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stand-in command-line tool alone on PATH (with the timeout the engines' runner uses), for the engine tests
that read a container runtime's CLI."""

from __future__ import annotations

import os
import shutil
import sys


def write_file(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def stand_in(tmp_path, monkeypatch, name, script, fixtures):
    """tmp_path/bin/<name> running script (a %-template of python and fixtures), the only tool on PATH; every call is
    logged to tmp_path/<name>.log, which FAKE_<NAME>_LOG names."""
    tools = tmp_path / "bin"
    write_file(str(tools / name), script % {"python": sys.executable, "fixtures": os.path.abspath(fixtures)})
    os.chmod(str(tools / name), 0o755)
    os.symlink(shutil.which("timeout"), str(tools / "timeout"))
    monkeypatch.setenv("PATH", str(tools))
    monkeypatch.setenv("FAKE_%s_LOG" % name.upper(), str(tmp_path / ("%s.log" % name)))
