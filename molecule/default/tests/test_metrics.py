# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's metrics on a lab node, served by Debian's real node_exporter (prometheus-node-exporter).

The lab image carries the package with its service off; this test starts it on gpu-infer, where its
textfile collector reads Debian's default folder, /var/lib/prometheus/node-exporter. An audit with
--check writes no file there; the audit without it writes gpuops_hardening.prom, which node_exporter
then serves on 127.0.0.1:9100 next to its own series (the lab has no network: the request runs in the
container). The converge stamp the lab's converge left shows as the time of the last converge.
"""

from __future__ import annotations

import subprocess
import time

import pytest

from lab_playbook import run_playbook, task_status

NODE = "gpu-infer"
TEXTFILE = "/var/lib/prometheus/node-exporter/gpuops_hardening.prom"
METRICS_TASK = "gpuops.hardening.audit : Write the node's metrics for node_exporter's textfile collector"
FETCH = ("import urllib.request; "
         "print(urllib.request.urlopen('http://127.0.0.1:9100/metrics', timeout=10).read().decode())")


def _docker(*argv, check=True):
    return subprocess.run(["docker", "exec", NODE] + list(argv), capture_output=True, text=True, check=check)


def _audit(*flags):
    return run_playbook("playbooks/audit.yml", NODE, {"audit_metrics": True, "audit_report_dir": "/tmp/metrics-audit"},
                        flags=list(flags))


def _served():
    """node_exporter's /metrics, once it answers."""
    for _attempt in range(30):
        fetched = _docker("python3", "-c", FETCH, check=False)
        if fetched.returncode == 0:
            return fetched.stdout
        time.sleep(1)
    pytest.fail("node_exporter did not answer on 127.0.0.1:9100: %s" % fetched.stderr)


@pytest.fixture(scope="module")
def node_exporter():
    _docker("rm", "-f", TEXTFILE)
    _docker("systemctl", "start", "prometheus-node-exporter.service")
    yield
    _docker("systemctl", "stop", "prometheus-node-exporter.service")
    _docker("rm", "-f", TEXTFILE)


def test_an_audit_with_check_writes_no_file(node_exporter):
    rc, output = _audit("--check")
    assert rc == 0, output[-6000:]
    # It says it would write the file (changed), and writes none.
    assert task_status(output, METRICS_TASK, NODE) == "changed", output[-6000:]
    assert _docker("test", "-e", TEXTFILE, check=False).returncode != 0, "--check wrote the metrics file"


def test_the_audit_writes_the_file_and_node_exporter_serves_it_with_its_own(node_exporter):
    rc, output = _audit()
    assert rc == 0, output[-6000:]
    assert task_status(output, METRICS_TASK, NODE) == "changed", output[-6000:]
    assert _docker("stat", "-c", "%a %U", TEXTFILE).stdout.split() == ["644", "root"]
    served = _served()
    # node_exporter's own series, and its textfile collector read ours without an error.
    assert "node_exporter_build_info{" in served and "node_load1 " in served
    assert "node_textfile_scrape_error 0" in served
    assert 'node_textfile_mtime_seconds{file="%s"}' % TEXTFILE in served
    for series in ('gpuops_build_info{version="', "gpuops_audit_last_run_timestamp_seconds ",
                   "gpuops_converge_last_run_timestamp_seconds ", 'gpuops_node_readiness{verdict="ready"} 1',
                   'gpuops_audit_info{profile="inference"} 1'):
        assert series in served, (series, [line for line in served.splitlines() if line.startswith("gpuops_")][:40])
    # One series per verdict for each check, node_exporter's label order (sorted).
    thp_boot = [line for line in served.splitlines() if line.startswith('gpuops_check_status{area="thp",check="thp.boot",')]
    assert sorted(line.split('verdict="')[1].split('"')[0] for line in thp_boot) == ["FAIL", "PASS", "SKIP", "WARN"]
    assert sum(float(line.rsplit(" ", 1)[1]) for line in thp_boot) == 1


def test_an_audit_with_the_same_results_is_no_change(node_exporter):
    rc, output = _audit()
    assert rc == 0, output[-6000:]
    assert task_status(output, METRICS_TASK, NODE) == "ok", output[-6000:]
