# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's fleet report: one self-contained HTML file from the per-node documents.

Inline CSS and JavaScript only, and a Content-Security-Policy that forbids every fetch and
allows only those two blocks, by their hashes, so the file works offline (file://), leaks
nothing when opened, and runs no script or style that got into it through the data. The same inputs give
the same bytes. Hooks for tests: rows ``tr[data-node]``, cells ``td[data-verdict][data-check]``,
readiness cells ``td[data-readiness]`` and panels ``div.readiness-view``, drill-downs
``section#node-<name>`` (see node_anchor) and the topology picture's own hooks (see topology_svg).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import hashlib
import html
import re

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_hardware_checks import READINESS
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_html_assets import SCRIPT, STYLE, UNKNOWN_READINESS
from ansible_collections.gpuops.hardening.plugins.plugin_utils.topology_svg import render_topology_svg

VERDICTS = ("FAIL", "WARN", "PASS", "SKIP")


def source_hash(text):
    """The CSP source that allows one inline block: the sha256 of its exact text, base64 (CSP Level 2 hashes)."""
    return "'sha256-%s'" % base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


# Hashes, not 'unsafe-inline': markup that slipped through the escaping could not run or style anything.
# They allow no style="" attribute either, so the page has none (the topology picture sizes itself by CSS).
CSP = ("default-src 'none'; style-src %s; script-src %s; img-src data:; base-uri 'none'; form-action 'none'"
       % (source_hash(STYLE), source_hash(SCRIPT)))


def _esc(value):
    return html.escape("" if value is None else "%s" % (value,), quote=True)


def _verdict(check):
    return ("%s" % (check.get("verdict") or "")).upper()


def node_anchor(name, taken=None):
    """The drill-down's id: ``node-`` and the name with anything but letters, digits, ``_ . -`` as ``-``.

    With taken (a set of ids already used), a clash gets ``-2``, ``-3``... and the id is added to it.
    """
    anchor = "node-" + (re.sub(r"[^A-Za-z0-9_.-]", "-", "%s" % (name,)) or "-")
    if taken is not None:
        base, count = anchor, 1
        while anchor in taken:
            count += 1
            anchor = "%s-%d" % (base, count)
        taken.add(anchor)
    return anchor


def _checks(node):
    return [check for check in node.get("checks") or [] if isinstance(check, dict) and check.get("id")]


def summary_of(node):
    """{verdict: count}: the document's summary, else counted from its checks."""
    summary = node.get("summary")
    if isinstance(summary, dict):
        return dict((verdict, int(summary.get(verdict) or 0)) for verdict in VERDICTS)
    counts = dict((verdict, 0) for verdict in VERDICTS)
    for check in _checks(node):
        if _verdict(check) in counts:
            counts[_verdict(check)] += 1
    return counts


def readiness_of(node):
    """(verdict, reasons): the document's readiness; verdict UNKNOWN_READINESS when it is null, not one of
    READINESS, or absent (documents written before the audit judged readiness, such as an old baseline's)."""
    entry = node.get("readiness")
    entry = entry if isinstance(entry, dict) else {}
    verdict = entry.get("verdict")
    reasons = entry.get("reasons")
    reasons = [reason for reason in reasons if reason not in (None, "")] if isinstance(reasons, list) else []
    return (verdict if verdict in READINESS else UNKNOWN_READINESS), reasons


def readiness_rank(verdict):
    """The verdict's severity: its place in READINESS, mildest first. Unknown ranks after the worst: a node
    whose GPUs nobody read cannot be trusted with work either, and it needs a person's look first, so a
    worst-first sort shows it with the nodes to pull rather than hiding it among the ready ones."""
    return READINESS.index(verdict) if verdict in READINESS else len(READINESS)


def check_columns(nodes):
    """[(area, [(check id, title)])], areas and checks in the order the documents first list them.

    The audit lists every node's checks in the tuning guide's order, so that is the table's order.
    """
    areas, order = {}, []
    for node in nodes:
        for check in _checks(node):
            area = check.get("area") or "other"
            if area not in areas:
                areas[area] = []
                order.append(area)
            if check["id"] not in [column[0] for column in areas[area]]:
                areas[area].append((check["id"], check.get("title") or check["id"]))
    return [(area, areas[area]) for area in order]


def _baseline_nodes(comparison):
    return (comparison or {}).get("nodes") or {}


def _changes(comparison, name):
    """{check id: change} of one node since the baseline."""
    entry = _baseline_nodes(comparison).get(name) or {}
    return dict((change.get("id"), change) for change in entry.get("checks") or [] if isinstance(change, dict))


def _state(side):
    if not side:
        return "absent"
    actual = side.get("actual")
    return "%s (%s)" % (side.get("verdict"), actual) if actual not in (None, "") else "%s" % side.get("verdict")


# ------------------------------------------------------------------ header

def _header(nodes, comparison, generated_at, title):
    totals = dict((verdict, 0) for verdict in VERDICTS)
    for node in nodes:
        for verdict, count in summary_of(node).items():
            totals[verdict] += count
    failed = len([node for node in nodes if node.get("error")])
    cards = ['<div class="card"><span class="n">%d</span> node%s%s</div>' % (
        len(nodes), "" if len(nodes) == 1 else "s", " (%d not audited)" % failed if failed else "")]
    cards += ['<div class="card v-%s"><span class="n">%d</span> %s</div>' % (verdict, totals[verdict], verdict)
              for verdict in VERDICTS]
    lines = ["Generated %s" % _esc(generated_at) if generated_at else ""]
    if comparison:
        statuses = {}
        for entry in _baseline_nodes(comparison).values():
            statuses[entry.get("status")] = statuses.get(entry.get("status"), 0) + 1
        lines.append('Compared with baseline <b class="baseline">%s</b>%s: %s' % (
            _esc(comparison.get("baseline")), " saved %s" % _esc(comparison["saved_at"]) if comparison.get("saved_at") else "",
            ", ".join("%d %s" % (statuses[status], _esc(status)) for status in ("changed", "unchanged", "new", "gone")
                      if statuses.get(status))))
    return ('<header id="fleet"><h1>%s</h1><p class="meta">%s</p><div class="cards">%s</div></header>'
            % (_esc(title), " \u00b7 ".join(line for line in lines if line), "".join(cards)))


# ------------------------------------------------------------------ the fleet table

def _table_head(columns, comparison):
    baseline = '<th rowspan="2" class="sortable" data-sort="baseline" title="Since the baseline">Baseline</th>' \
        if comparison else ""
    counts = "".join('<th rowspan="2" class="sortable count v-%s" data-sort="count:%s">%s</th>' % (verdict, verdict, verdict)
                     for verdict in VERDICTS)
    areas = "".join('<th class="area" data-area="%s" colspan="%d" title="%s"><div>%s</div></th>' % (
        _esc(area), len(checks), _esc(area), _esc(area)) for area, checks in columns)
    checks = "".join('<th class="sortable check" data-sort="check:%s" data-check="%s" data-area="%s" data-search="%s" '
                     'title="%s (%s)"><span>%s</span></th>' % (
                         _esc(check_id), _esc(check_id), _esc(area), _esc(("%s %s %s" % (check_id, check_title, area)).lower()),
                         _esc(check_title), _esc(check_id), _esc(check_title))
                     for area, checks in columns for check_id, check_title in checks)
    readiness = ('<th rowspan="2" class="sortable readiness-head" data-sort="readiness" '
                 'title="What the node\'s GPUs need before they take work, worst first when sorted">Readiness</th>')
    return ('<thead><tr><th rowspan="2" class="sortable node" data-sort="node">Node</th>%s%s%s%s</tr><tr>%s</tr></thead>'
            % (baseline, readiness, counts, areas, checks))


def _cell(check_id, check, change):
    if check is None:
        return '<td class="cell v-none" data-verdict="" data-check="%s" title="not checked on this node">\u2013</td>' % (
            _esc(check_id))
    verdict = _verdict(check)
    tip = check.get("reason") or ""
    if check.get("expected") not in (None, "") or check.get("actual") not in (None, ""):
        tip += "\nexpected %s, actual %s" % (check.get("expected"), check.get("actual"))
    if change:
        tip += "\nbefore the baseline: %s" % _state(change.get("before"))
    return '<td class="cell v-%s%s" data-verdict="%s" data-check="%s" title="%s">%s</td>' % (
        _esc(verdict), " changed" if change else "", _esc(verdict), _esc(check_id), _esc(tip.strip()), _esc(verdict))


def _readiness_cell(verdict, reasons):
    return '<td class="readiness r-%s" data-readiness="%s" title="%s">%s</td>' % (
        _esc(verdict), _esc(verdict), _esc("\n".join(reasons)), _esc(verdict))


def _row(node, anchor, columns, comparison):
    name = node.get("node") or ""
    summary = summary_of(node)
    attributes = "".join(' data-%s="%d"' % (verdict.lower(), summary[verdict]) for verdict in VERDICTS)
    status = (_baseline_nodes(comparison).get(name) or {}).get("status") or ""
    cells = ['<th class="node"><a href="#%s">%s</a><span class="profile">%s</span></th>' % (
        anchor, _esc(name), _esc(node.get("profile")))]
    if comparison:
        changed = len(_changes(comparison, name))
        cells.append('<td class="status s-%s" data-status="%s">%s</td>' % (
            _esc(status or "none"), _esc(status), _esc(status or "\u2013") + (" (%d)" % changed if changed else "")))
    readiness, reasons = readiness_of(node)
    cells.append(_readiness_cell(readiness, reasons))
    cells += ['<td class="count v-%s" data-count="%s">%d</td>' % (verdict, verdict, summary[verdict]) for verdict in VERDICTS]
    width = sum(len(checks) for _area, checks in columns)
    if node.get("error"):
        cells.append('<td class="error" colspan="%d">not audited: %s</td>' % (max(width, 1), _esc(node["error"])))
    else:
        by_id = dict((check["id"], check) for check in _checks(node))
        changes = _changes(comparison, name)
        for _area, checks in columns:
            for check_id, _title in checks:
                cells.append(_cell(check_id, by_id.get(check_id), changes.get(check_id)))
    # The verdict is searchable text too: typing "replace" keeps the nodes to pull.
    return '<tr data-node="%s" data-search="%s" data-readiness="%s" data-readiness-rank="%d"%s%s>%s</tr>' % (
        _esc(name), _esc(("%s %s %s" % (name, node.get("profile") or "", readiness)).lower()), _esc(readiness),
        readiness_rank(readiness), attributes,
        ' data-error="1"' if node.get("error") else "", "".join(cells))


def _readiness_toggles():
    return '<span class="toggles-label">Readiness:</span>' + "".join(
        '<label class="toggle readiness r-%s"><input type="checkbox" data-readiness-toggle value="%s" checked> %s</label>'
        % (verdict, verdict, verdict) for verdict in READINESS + (UNKNOWN_READINESS,))


def _controls():
    toggles = "".join('<label class="toggle v-%s"><input type="checkbox" data-verdict-toggle value="%s" checked> %s</label>'
                      % (verdict, verdict, verdict) for verdict in VERDICTS) + _readiness_toggles()
    return ('<div class="controls"><input type="search" id="filter" placeholder="Filter nodes and checks\u2026" '
            'aria-label="Filter nodes and checks" autocomplete="off">%s'
            '<button type="button" id="only-problems">Only FAIL/WARN</button>'
            '<button type="button" id="show-all">Show all</button><span id="shown" aria-live="polite"></span></div>'
            % toggles)


def _fleet_table(nodes, anchors, columns, comparison):
    rows = "".join(_row(node, anchor, columns, comparison) for node, anchor in zip(nodes, anchors))
    note = ('<p class="note"><span class="cell changed"></span> changed since baseline %s; hover a cell for its reason, '
            'click a node for its details.</p>' % _esc(comparison.get("baseline")) if comparison else
            '<p class="note">Hover a cell for its reason, click a node for its details.</p>')
    return ('<section id="matrix"><h2>Nodes by check</h2>%s<div class="scroll"><table id="fleet-table">%s<tbody>%s</tbody>'
            '</table></div><p id="nothing" hidden>Nothing matches the filter.</p>%s</section>'
            % (_controls(), _table_head(columns, comparison), rows, note))


# ------------------------------------------------------------------ one node's drill-down

def _facts(node):
    driver = node.get("driver") or {}
    summary = summary_of(node)
    rows = [("Profile", _esc(node.get("profile") or "\u2013")),
            ("Driver", _esc(driver.get("driver_version") or "\u2013")),
            ("CUDA", _esc(driver.get("cuda_version") or "\u2013")),
            ("Summary", " ".join('<span class="badge v-%s">%d %s</span>' % (verdict, summary[verdict], verdict)
                                 for verdict in VERDICTS))]
    return '<dl class="facts">%s</dl>' % "".join("<dt>%s</dt><dd>%s</dd>" % row for row in rows)


def _readiness_panel(node):
    verdict, reasons = readiness_of(node)
    if reasons:
        body = '<ul class="reasons">%s</ul>' % "".join("<li>%s</li>" % _esc(reason) for reason in reasons)
    elif verdict == UNKNOWN_READINESS:
        body = '<p class="reasons-none">This document says nothing of the GPUs\' readiness.</p>'
    else:
        body = '<p class="reasons-none">No finding holds the GPUs back.</p>'
    return ('<div class="readiness-view" data-readiness="%s"><h3>Readiness <span class="badge readiness r-%s">%s</span>'
            '</h3>%s</div>' % (_esc(verdict), _esc(verdict), _esc(verdict), body))


def _check_table(node, columns, changes):
    by_id = dict((check["id"], check) for check in _checks(node))
    rows = []
    for area, checks in columns:
        present = [by_id[check_id] for check_id, _title in checks if check_id in by_id]
        if present:
            rows.append('<tr class="area-row"><th colspan="5">%s</th></tr>' % _esc(area))
        for check in present:
            verdict = _verdict(check)
            rows.append('<tr data-check="%s" data-verdict="%s"%s><td class="cell v-%s">%s</td>'
                        '<td>%s<code>%s</code></td><td><code>%s</code></td><td><code>%s</code></td><td>%s</td></tr>' % (
                            _esc(check["id"]), _esc(verdict), ' class="changed"' if check["id"] in changes else "",
                            _esc(verdict), _esc(verdict), _esc(check.get("title") or check["id"]), _esc(check["id"]),
                            _esc(check.get("expected")), _esc(check.get("actual")), _esc(check.get("reason"))))
    return ('<table class="checks"><thead><tr><th>Verdict</th><th>Check</th><th>Expected</th><th>Actual</th>'
            '<th>Reason</th></tr></thead><tbody>%s</tbody></table>' % "".join(rows))


def _changed_list(comparison, name):
    entry = _baseline_nodes(comparison).get(name)
    if not entry:
        return ""
    changes = [change for change in entry.get("checks") or [] if isinstance(change, dict)]
    items = "".join('<li data-check="%s"><b>%s</b>: <span class="was">%s</span> \u2192 <span class="now">%s</span></li>' % (
        _esc(change.get("id")), _esc(change.get("title") or change.get("id")), _esc(_state(change.get("before"))),
        _esc(_state(change.get("after")))) for change in changes)
    body = "<ul>%s</ul>" % items if items else "<p>No check changed.</p>"
    return '<div class="since" data-status="%s"><h3>Changed since baseline %s <span class="status s-%s">%s</span></h3>%s</div>' % (
        _esc(entry.get("status")), _esc(comparison.get("baseline")), _esc(entry.get("status")), _esc(entry.get("status")), body)


def _topology(node):
    topology = node.get("topology") or {}
    warnings = "".join("<li>%s</li>" % _esc(warning) for warning in topology.get("warnings") or [])
    return '<div class="topology-view"><h3>GPU topology</h3>%s%s</div>' % (
        render_topology_svg(topology, node.get("node") or ""),
        '<h4>Topology warnings</h4><ul class="warnings">%s</ul>' % warnings if warnings else "")


def _node_section(node, anchor, columns, comparison):
    name = node.get("node") or ""
    if node.get("error"):
        body = '<p class="error">This node could not be audited: %s</p>' % _esc(node["error"])
    else:
        body = _check_table(node, columns, _changes(comparison, name))
    return ('<section class="node-detail" id="%s" data-node="%s"><p class="back"><a href="#fleet">\u2191 fleet table</a></p>'
            '<h2>%s</h2>%s%s%s%s%s</section>' % (
                anchor, _esc(name), _esc(name), _facts(node), _readiness_panel(node),
                _changed_list(comparison, name) if comparison else "", body, _topology(node)))


def _gone(comparison, nodes):
    present = set(node.get("node") for node in nodes)
    gone = sorted(name for name, entry in _baseline_nodes(comparison).items()
                  if entry.get("status") == "gone" or name not in present)
    if not gone:
        return ""
    return '<section id="gone"><h2>Gone since baseline %s</h2><ul>%s</ul></section>' % (
        _esc(comparison.get("baseline")), "".join('<li data-node="%s">%s</li>' % (_esc(name), _esc(name)) for name in gone))


def render_fleet_report(nodes, comparison=None, generated_at="", title="GPU fleet audit"):
    """One self-contained HTML page: fleet totals, the node-by-check table, a drill-down per node."""
    nodes = [node for node in nodes or [] if isinstance(node, dict)]
    taken = set()
    anchors = [node_anchor(node.get("node") or "", taken) for node in nodes]
    columns = check_columns(nodes)
    sections = "".join(_node_section(node, anchor, columns, comparison) for node, anchor in zip(nodes, anchors))
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta http-equiv="Content-Security-Policy" content="%s">'
            '<meta name="viewport" content="width=device-width, initial-scale=1"><title>%s</title><style>%s</style></head>'
            '<body>%s<main>%s%s<div id="details">%s</div></main><script>%s</script></body></html>\n' % (
                CSP, _esc(title), STYLE, _header(nodes, comparison, generated_at, title),
                _fleet_table(nodes, anchors, columns, comparison), _gone(comparison, nodes) if comparison else "",
                sections, SCRIPT))
