# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's node document as node_exporter textfile metrics: pure rendering.

Format: Prometheus' text exposition format 0.0.4, which node_exporter's textfile
collector reads from *.prom files (prometheus/node_exporter, collector/textfile.go;
prometheus.io/docs/instrumenting/exposition_formats). Names follow
prometheus.io/docs/practices/naming: the gpuops_ prefix, base units (seconds,
bytes per second), _info for series that carry only labels, _timestamp_seconds for
Unix times. An enumeration is one series per value, 1 for the current one and 0 for
the others (the pattern of node_systemd_unit_state), so a check's series stays when
its verdict changes. A check's id may itself change with what the node shows (a row
remap check reads row_remap, row_remap_pending or row_remap_failure; NVLink and fabric
checks exist only where the GPUs report them), and then the old id's series stop: a
dashboard sees a gap there, and the rules judge verdicts, never ids. Every label value is an id, a number or one of a fixed list:
no reason or other free text.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.hardening.plugins.module_utils.baseline_stats import figure_median

# The audit's check verdicts (plugins/plugin_utils/audit_checks.py VERDICTS) and readiness verdicts
# (plugins/plugin_utils/audit_hardware_checks.py READINESS); a unit test holds these to them.
CHECK_VERDICTS = ("FAIL", "WARN", "PASS", "SKIP")
READINESS_VERDICTS = ("ready", "degraded", "reset", "reboot", "replace")
# The one series whose value moves on every audit: the module leaves it out when it decides whether the file
# changed.
AUDIT_TIME_METRIC = "gpuops_audit_last_run_timestamp_seconds"

# Baseline figure ids (plugins/module_utils/gpu_baseline.py copy_checks, startup_check) and their units there.
_COPY_ID = re.compile(r"^baseline\.gpu(\d+)\.(h2d|d2h)\.(pinned|pageable)\.(\d+)MiB$")
_STARTUP_ID = re.compile(r"^baseline\.gpu(\d+)\.startup$")
_MIB = 1024 * 1024


def _label_value(value):
    """A label value escaped as the exposition format asks: backslash, double quote and line feed."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


def _series(name, labels, value):
    inner = ",".join('%s="%s"' % (key, _label_value(text)) for key, text in labels)
    return "%s{%s} %s" % (name, inner, _number(value)) if labels else "%s %s" % (name, _number(value))


def _family(name, help_text, samples):
    """One metric family (HELP, TYPE gauge, its samples), or nothing when it has no sample."""
    if not samples:
        return []
    return ["# HELP %s %s" % (name, help_text), "# TYPE %s gauge" % name] + [
        _series(name, labels, value) for labels, value in samples]


def _check_samples(document):
    samples = []
    for item in document.get("checks") or []:
        for verdict in CHECK_VERDICTS:
            samples.append(((("check", item["id"]), ("area", item["area"]), ("verdict", verdict)),
                            1 if item.get("verdict") == verdict else 0))
    return samples


def _readiness_samples(document):
    current = (document.get("readiness") or {}).get("verdict")
    return [((("verdict", verdict),), 1 if current == verdict else 0) for verdict in READINESS_VERDICTS]


def _baseline_samples(baseline):
    """(copies, start-ups): the measured medians (PASS figures) of a baseline document, in base units."""
    copies, startups = [], []
    for item in (baseline or {}).get("checks") or []:
        if item.get("verdict") != "PASS":
            continue
        copy = _COPY_ID.match(item.get("id") or "")
        startup = _STARTUP_ID.match(item.get("id") or "")
        if copy:
            gb_per_second = figure_median(item.get("actual"), "GB/s")
            if gb_per_second is not None:
                gpu, direction, memory, size_mib = copy.groups()
                copies.append(((("gpu", gpu), ("direction", direction), ("memory", memory),
                                ("size_bytes", int(size_mib) * _MIB)), gb_per_second * 1e9))
        elif startup:
            seconds = figure_median(item.get("actual"), "ms", scale=1000.0)
            if seconds is not None:
                startups.append(((("gpu", startup.group(1)),), seconds))
    return copies, startups


def render(document, version, audited_at, converged_at=None, baseline=None):
    """The textfile's text for one node's audit document (the gpuops_audit fact).

    version: the collection's; audited_at: the audit's Unix time; converged_at: the Unix time of the last
    converge (None: never, or not known); baseline: the node's baseline document (gpu_baseline.document), or
    None.
    """
    summary = document.get("summary") or {}
    copies, startups = _baseline_samples(baseline)
    lines = []
    lines += _family("gpuops_build_info", "The gpuops.hardening collection that wrote these metrics.",
                     [((("version", version),), 1)])
    lines += _family(AUDIT_TIME_METRIC, "When the gpuops.hardening audit last judged this node, Unix time.",
                     [((), audited_at)])
    lines += _family("gpuops_converge_last_run_timestamp_seconds",
                     "When a gpuops.hardening node call last converged this node without a failed feature, Unix time.",
                     [((), converged_at)] if converged_at is not None else [])
    lines += _family("gpuops_audit_info", "The node's gpuops_profile as the audit read it.",
                     [((("profile", document["profile"]),), 1)] if document.get("profile") else [])
    lines += _family("gpuops_audit_error", "1 when the node could not be audited (its checks are missing).",
                     [((), 1 if document.get("error") else 0)])
    lines += _family("gpuops_audit_checks", "How many of the node's checks have each verdict.",
                     [((("verdict", verdict),), int(summary.get(verdict) or 0)) for verdict in CHECK_VERDICTS])
    lines += _family("gpuops_check_status", "1 for the check's verdict, 0 for the other verdicts.",
                     _check_samples(document))
    lines += _family("gpuops_node_readiness", "1 for the node's readiness verdict, 0 for the others; all 0 when "
                     "the GPUs' health was not read.", _readiness_samples(document))
    lines += _family("gpuops_baseline_copy_bytes_per_second", "Median host-device copy bandwidth the baseline "
                     "measured, per GPU, direction, host memory kind and copy size.", copies)
    lines += _family("gpuops_baseline_context_startup_seconds", "Median time to the first CUDA context the "
                     "baseline measured, per GPU.", startups)
    return "\n".join(lines) + "\n"


def without_audit_time(text):
    """The text less the audit time's sample: what the node's results are, to tell a change from a new audit."""
    return "\n".join(line for line in (text or "").splitlines() if not line.startswith(AUDIT_TIME_METRIC + " "))
