# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit_metrics task as the audit role runs it, and Debian's node_exporter serving what it wrote.

A play with check_mode: true runs gpuops.hardening.audit_metrics on localhost with the role's
check_mode: "{{ ansible_check_mode }}": plainly it writes the file (the audit's own check mode does
not stop it), with --check it writes none. Debian's prometheus-node-exporter, on a free loopback
port with its textfile collector on that folder, then serves our series next to its own without a
scrape error. The Molecule lab proves the same through the role on a lab node (test_metrics.py).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
DOCUMENT = {"node": "localhost", "profile": "training", "error": None, "readiness": {"verdict": "degraded", "reasons": []},
            "summary": {"PASS": 1, "FAIL": 1, "WARN": 0, "SKIP": 0},
            "checks": [{"id": "thp.boot", "area": "thp", "verdict": "PASS"}, {"id": "swap.live", "area": "swap", "verdict": "FAIL"}]}
PLAY = """
- hosts: localhost
  gather_facts: false
  check_mode: true
  tasks:
    - name: Write the metrics as the audit role does
      gpuops.hardening.audit_metrics:
        document: "{{ document }}"
        directory: "{{ directory }}"
      check_mode: "{{ ansible_check_mode }}"
"""


def play(tmp_path, directory, *flags):
    playbook = tmp_path / "metrics.yml"
    playbook.write_text(PLAY)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO_ROOT, "playbooks", "collections"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="0", ANSIBLE_INVENTORY_UNPARSED_WARNING="0")
    run = subprocess.run(["ansible-playbook", "-i", "localhost,", "-c", "local"] + list(flags) + [
        "-e", json.dumps({"document": DOCUMENT, "directory": str(directory),
                          "ansible_python_interpreter": shutil.which("python3") or "python3"}),
        str(playbook)], capture_output=True, text=True, timeout=300, check=False, env=env)
    return run.returncode, run.stdout + run.stderr


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_check_writes_nothing_and_the_audit_s_own_check_mode_writes(tmp_path):
    folder = tmp_path / "textfiles"
    folder.mkdir()
    rc, output = play(tmp_path, folder, "--check")
    assert rc == 0 and "changed: [localhost]" in output, output
    assert os.listdir(str(folder)) == []
    rc, output = play(tmp_path, folder)
    assert rc == 0 and "changed: [localhost]" in output, output
    assert os.listdir(str(folder)) == ["gpuops_hardening.prom"]
    rc, output = play(tmp_path, folder)
    assert rc == 0 and "ok: [localhost]" in output, output


def test_node_exporter_serves_the_written_file_next_to_its_own_series(tmp_path):
    binary = shutil.which("prometheus-node-exporter")
    if not binary:
        pytest.fail("prometheus-node-exporter not found: apt-get install prometheus-node-exporter (or run: make deps)")
    folder = tmp_path / "textfiles"
    folder.mkdir()
    rc, output = play(tmp_path, folder)
    assert rc == 0, output
    port = free_port()
    server = subprocess.Popen([binary, "--web.listen-address=127.0.0.1:%d" % port,
                               "--collector.textfile.directory=%s" % folder],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        served = None
        for _attempt in range(50):
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as answer:
                    served = answer.read().decode()
                break
            except OSError:
                time.sleep(0.2)
        assert served is not None, "node_exporter did not answer"
    finally:
        server.terminate()
        server.wait(timeout=20)
    assert "node_exporter_build_info{" in served and "node_textfile_scrape_error 0" in served
    assert 'node_textfile_mtime_seconds{file="%s"}' % (folder / "gpuops_hardening.prom") in served
    # node_exporter prints labels sorted by name.
    for series in ('gpuops_check_status{area="swap",check="swap.live",verdict="FAIL"} 1',
                   'gpuops_node_readiness{verdict="degraded"} 1', 'gpuops_build_info{version="',
                   "gpuops_audit_last_run_timestamp_seconds "):
        assert series in served, series
