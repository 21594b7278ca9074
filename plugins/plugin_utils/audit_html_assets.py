# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report's inline stylesheet and script (see audit_html).

The script sorts and filters the node-by-check table; the drill-downs need none of it:
a node's section shows when the page's address names it (CSS ``:target``). The readiness
colours come from READINESS (see readiness_style), so a new verdict gets its own.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_hardware_checks import READINESS

# A node whose GPUs' health was not read, or whose document predates readiness.
UNKNOWN_READINESS = "unknown"
# Hues from green (the mildest verdict) to red (the worst); each verdict takes its place between them.
MILDEST_HUE, WORST_HUE = 130, 0


def readiness_hue(position, count=len(READINESS)):
    """The hue of the verdict at position in READINESS: evenly spaced from green to red."""
    if count < 2:
        return MILDEST_HUE
    return int(round(MILDEST_HUE + (WORST_HUE - MILDEST_HUE) * float(position) / (count - 1)))


def readiness_style(verdicts=READINESS):
    """One rule per verdict for the table's cells, the drill-down's badge and the filter's toggles."""
    rules = [".r-%s { --r-hue: %d; }" % (verdict, readiness_hue(position, len(verdicts)))
             for position, verdict in enumerate(verdicts)]
    return "\n".join(rules) + """
.readiness { font-weight: 700; }
td.readiness, .badge.readiness { background: hsl(var(--r-hue) 75% 90%); color: hsl(var(--r-hue) 85% 24%); }
.toggle.readiness { color: hsl(var(--r-hue) 85% 28%); }
td.readiness.r-UNKNOWN, .badge.readiness.r-UNKNOWN { background: var(--skip-bg); color: var(--skip); font-style: italic; }
.toggle.readiness.r-UNKNOWN { color: var(--skip); font-style: italic; }
#fleet-table td.readiness { min-width: 76px; font-size: 12px; border-left: 2px solid var(--line); }
.toggles-label { margin-left: 6px; color: var(--muted); font-size: 12px; }
.readiness-view .reasons { margin: 0; padding-left: 20px; }
.readiness-view .reasons li { margin: 2px 0; }
""".replace("UNKNOWN", UNKNOWN_READINESS)


BASE_STYLE = """
:root { --ink: #1f2328; --muted: #57606a; --line: #d0d7de; --page: #f3f5f8;
  --fail: #cf222e; --warn: #f2c744; --warn-ink: #4d3800; --pass: #1a7f37; --pass-bg: #dcf5e3;
  --skip: #6e7781; --skip-bg: #eaeef2; --accent: #0969da; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: var(--page);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", Arial, sans-serif; }
header { background: #fff; border-bottom: 1px solid var(--line); padding: 18px 28px 16px; }
h1 { margin: 0 0 2px; font-size: 22px; }
h2 { margin: 0 0 12px; font-size: 17px; }
h3 { margin: 18px 0 8px; font-size: 15px; }
h4 { margin: 12px 0 6px; font-size: 13px; }
.meta { margin: 0 0 12px; color: var(--muted); }
.cards { display: flex; flex-wrap: wrap; gap: 10px; }
.card { min-width: 104px; padding: 8px 14px; background: #fff; border: 1px solid var(--line);
  border-left-width: 5px; border-radius: 8px; color: var(--muted); }
.card .n { display: block; font-size: 24px; font-weight: 700; color: var(--ink); }
.card.v-FAIL { border-left-color: var(--fail); } .card.v-FAIL .n { color: var(--fail); }
.card.v-WARN { border-left-color: var(--warn); } .card.v-WARN .n { color: #9a6700; }
.card.v-PASS { border-left-color: var(--pass); } .card.v-PASS .n { color: var(--pass); }
.card.v-SKIP { border-left-color: var(--skip); }
main { padding: 16px 28px 40px; }
main > section, .node-detail { margin-bottom: 18px; padding: 16px 20px; background: #fff; border: 1px solid var(--line); border-radius: 10px; }
.controls { display: flex; flex-wrap: wrap; align-items: center; gap: 8px; margin-bottom: 12px; }
#filter { flex: 0 1 320px; padding: 6px 10px; font: inherit; border: 1px solid var(--line); border-radius: 6px; }
.toggle { display: inline-flex; align-items: center; gap: 4px; padding: 4px 10px; font-size: 12px; font-weight: 700;
  border: 1px solid var(--line); border-radius: 999px; cursor: pointer; user-select: none; }
.toggle.v-FAIL { color: var(--fail); } .toggle.v-WARN { color: #9a6700; }
.toggle.v-PASS { color: var(--pass); } .toggle.v-SKIP { color: var(--skip); }
button { padding: 5px 12px; font: inherit; font-size: 13px; background: #f6f8fa; border: 1px solid var(--line);
  border-radius: 6px; cursor: pointer; }
button:hover, .toggle:hover { border-color: var(--accent); }
#shown { margin-left: auto; color: var(--muted); font-size: 13px; }
.scroll { overflow-x: auto; }
table { border-collapse: separate; border-spacing: 0; }
#fleet-table th, #fleet-table td { padding: 4px 6px; text-align: center; white-space: nowrap; border-bottom: 1px solid var(--line); }
#fleet-table thead th { background: #fff; font-size: 12px; }
#fleet-table th.node { position: sticky; left: 0; z-index: 1; min-width: 130px; text-align: left; background: #fff; }
#fleet-table tbody th.node a { font-weight: 700; }
#fleet-table .profile { display: block; color: var(--muted); font-size: 11px; font-weight: 400; }
#fleet-table th.area { color: var(--muted); font-size: 11px; font-weight: 600; border-left: 2px solid var(--line); }
/* The area's name never widens its columns: it is clipped to what the checks below need. */
#fleet-table th.area div { width: 0; min-width: 100%; overflow: hidden; text-overflow: ellipsis; }
#fleet-table th.check { height: 200px; vertical-align: bottom; font-weight: 500; }
#fleet-table th.check span { display: inline-block; max-height: 190px; overflow: hidden; text-overflow: ellipsis;
  writing-mode: vertical-rl; transform: rotate(180deg); }
#fleet-table th.count { min-width: 42px; }
#fleet-table td.count { font-variant-numeric: tabular-nums; color: var(--muted); }
#fleet-table td.count.v-FAIL:not([data-count="0"]) { color: var(--fail); font-weight: 700; }
#fleet-table td.count.v-FAIL, #fleet-table th.count.v-FAIL { border-left: 2px solid var(--line); }
.sortable { cursor: pointer; }
.sortable:hover { background: #eef4fb !important; }
.sortable[aria-sort] { background: #ddf4ff !important; box-shadow: inset 0 -3px 0 var(--accent); }
td.cell { min-width: 46px; font-size: 10.5px; font-weight: 700; letter-spacing: .03em; }
.cell.v-FAIL { background: var(--fail); color: #fff; }
.cell.v-WARN { background: var(--warn); color: var(--warn-ink); }
.cell.v-PASS { background: var(--pass-bg); color: var(--pass); }
.cell.v-SKIP { background: var(--skip-bg); color: var(--skip); }
.cell.v-none { color: #afb8c1; }
.cell.dim { opacity: .18; }
.cell.changed { box-shadow: inset 0 0 0 2px var(--accent); }
td.error { color: var(--fail); font-weight: 600; text-align: left !important; background: #fff5f5; }
.status { font-size: 12px; font-weight: 600; }
.s-changed { color: var(--accent); } .s-new { color: var(--pass); } .s-gone { color: var(--fail); } .s-unchanged { color: var(--muted); }
.node-detail { display: none; }
.node-detail:target { display: block; }
.note { margin: 10px 0 0; color: var(--muted); font-size: 12px; }
.note .cell { display: inline-block; width: 22px; height: 12px; vertical-align: middle; }
.back { float: right; margin: 0; font-size: 13px; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0 0 8px; }
.facts dt { color: var(--muted); } .facts dd { margin: 0; }
.badge { display: inline-block; margin-right: 6px; padding: 1px 8px; font-size: 12px; font-weight: 700; border-radius: 999px; }
.badge.v-FAIL { background: var(--fail); color: #fff; } .badge.v-WARN { background: var(--warn); color: var(--warn-ink); }
.badge.v-PASS { background: var(--pass-bg); color: var(--pass); } .badge.v-SKIP { background: var(--skip-bg); color: var(--skip); }
table.checks { width: 100%; }
table.checks th, table.checks td { padding: 5px 8px; text-align: left; vertical-align: top; border-bottom: 1px solid var(--line); }
table.checks td.cell { width: 60px; text-align: center; vertical-align: middle; }
table.checks td code { display: block; color: var(--muted); font-size: 11px; }
table.checks td:nth-child(3) code, table.checks td:nth-child(4) code { color: var(--ink); font-size: 12px; }
table.checks tr.area-row th { padding-top: 12px; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .05em; }
table.checks tr.changed td:nth-child(2) { box-shadow: inset 3px 0 0 var(--accent); }
.since ul, .warnings { margin: 0; padding-left: 20px; }
.since .was { color: var(--muted); } .since .now { font-weight: 700; }
.warnings li { color: #9a6700; }
p.error { padding: 10px 14px; color: var(--fail); font-weight: 600; background: #fff5f5; border: 1px solid #ffcecb; border-radius: 8px; }
/* The picture at its natural width (its width attribute), shrunk to fit: the page has no style attributes. */
.topology-view svg { display: block; max-width: 100%; height: auto; margin: 4px 0; }
"""

STYLE = BASE_STYLE + readiness_style()

SCRIPT = """
(function () {
  "use strict";
  var table = document.getElementById("fleet-table");
  if (!table) { return; }
  var tbody = table.tBodies[0];
  var rows = Array.prototype.slice.call(tbody.rows);
  var checkHeads = Array.prototype.slice.call(table.querySelectorAll("thead th.check"));
  var areaHeads = Array.prototype.slice.call(table.querySelectorAll("thead th.area"));
  var sortHeads = Array.prototype.slice.call(table.querySelectorAll("thead th.sortable"));
  var toggles = Array.prototype.slice.call(document.querySelectorAll("input[data-verdict-toggle]"));
  var readinessToggles = Array.prototype.slice.call(document.querySelectorAll("input[data-readiness-toggle]"));
  var filter = document.getElementById("filter");
  var SEVERITY = {FAIL: 0, WARN: 1, SKIP: 2, PASS: 3};
  var STATUS = {changed: 0, "new": 1, unchanged: 2, gone: 3};
  var cells = new Map();
  var order = new Map();
  rows.forEach(function (row, index) {
    var byCheck = new Map();
    row.querySelectorAll("td[data-check]").forEach(function (cell) { byCheck.set(cell.dataset.check, cell); });
    cells.set(row, byCheck);
    order.set(row, index);
  });

  function verdictOf(row, check) {
    var cell = cells.get(row).get(check);
    return cell ? cell.dataset.verdict : "";
  }

  function apply() {
    var query = filter.value.trim().toLowerCase();
    var wanted = {};
    toggles.forEach(function (toggle) { wanted[toggle.value] = toggle.checked; });
    var everyVerdict = toggles.every(function (toggle) { return toggle.checked; });
    var readinessWanted = {};
    readinessToggles.forEach(function (toggle) { readinessWanted[toggle.value] = toggle.checked; });
    var nodeHits = rows.filter(function (row) { return query && row.dataset.search.indexOf(query) >= 0; });
    var checkHits = checkHeads.filter(function (head) { return query && head.dataset.search.indexOf(query) >= 0; });
    var rowOn = new Map();
    var columnOn = new Map();
    rows.forEach(function (row) {
      rowOn.set(row, (!query || (nodeHits.length ? nodeHits.indexOf(row) >= 0 : checkHits.length > 0)) &&
        readinessWanted[row.dataset.readiness] !== false);
    });
    checkHeads.forEach(function (head) {
      columnOn.set(head.dataset.check, !query || (checkHits.length ? checkHits.indexOf(head) >= 0 : nodeHits.length > 0));
    });
    if (!everyVerdict) {
      // A check column stays when a shown node has a wanted verdict in it; a node when one of its shown checks has.
      checkHeads.forEach(function (head) {
        var check = head.dataset.check;
        columnOn.set(check, columnOn.get(check) && rows.some(function (row) {
          return rowOn.get(row) && wanted[verdictOf(row, check)];
        }));
      });
      rows.forEach(function (row) {
        rowOn.set(row, rowOn.get(row) && (row.dataset.error === "1" || checkHeads.some(function (head) {
          return columnOn.get(head.dataset.check) && wanted[verdictOf(row, head.dataset.check)];
        })));
      });
    }
    var shownChecks = 0;
    checkHeads.forEach(function (head) {
      head.hidden = !columnOn.get(head.dataset.check);
      if (!head.hidden) { shownChecks += 1; }
    });
    areaHeads.forEach(function (head) {
      var span = checkHeads.filter(function (check) {
        return check.dataset.area === head.dataset.area && !check.hidden;
      }).length;
      head.hidden = span === 0;
      head.colSpan = Math.max(span, 1);
    });
    var shownRows = 0;
    rows.forEach(function (row) {
      row.hidden = !rowOn.get(row);
      if (!row.hidden) { shownRows += 1; }
      cells.get(row).forEach(function (cell, check) {
        cell.hidden = !columnOn.get(check);
        cell.classList.toggle("dim", cell.dataset.verdict in SEVERITY && !wanted[cell.dataset.verdict]);
      });
      var error = row.querySelector("td.error");
      if (error) { error.colSpan = Math.max(shownChecks, 1); }
    });
    document.getElementById("nothing").hidden = shownRows > 0;
    document.getElementById("shown").textContent = shownRows + " of " + rows.length + " nodes \\u00b7 " +
      shownChecks + " of " + checkHeads.length + " checks";
  }

  function sortValue(row, key) {
    if (key === "node") { return row.dataset.node.toLowerCase(); }
    if (key === "baseline") {
      var status = row.querySelector("td[data-status]");
      return status && status.dataset.status in STATUS ? STATUS[status.dataset.status] : 9;
    }
    if (key.indexOf("count:") === 0) { return -Number(row.dataset[key.slice(6).toLowerCase()] || 0); }
    // The rank is the verdict's place in READINESS (unknown after the worst): worst first.
    if (key === "readiness") { return -Number(row.dataset.readinessRank); }
    var verdict = verdictOf(row, key.slice(6));
    return verdict in SEVERITY ? SEVERITY[verdict] : 9;
  }

  var sortKey = null;
  var sortDirection = 1;
  function sortBy(head) {
    var key = head.dataset.sort;
    sortDirection = key === sortKey ? -sortDirection : 1;
    sortKey = key;
    var values = new Map();
    rows.forEach(function (row) { values.set(row, sortValue(row, key)); });
    rows.slice().sort(function (a, b) {
      var x = values.get(a);
      var y = values.get(b);
      return (x < y ? -1 : x > y ? 1 : 0) * sortDirection || order.get(a) - order.get(b);
    }).forEach(function (row) { tbody.appendChild(row); });
    // Counts sort most first, checks and readiness worst first: that first order is the "natural" one.
    var natural = key.indexOf("count:") === 0 || key === "readiness" ? "descending" : "ascending";
    var reversed = natural === "ascending" ? "descending" : "ascending";
    sortHeads.forEach(function (each) { each.removeAttribute("aria-sort"); });
    head.setAttribute("aria-sort", sortDirection === 1 ? natural : reversed);
  }

  sortHeads.forEach(function (head) {
    head.tabIndex = 0;
    head.addEventListener("click", function () { sortBy(head); });
    head.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortBy(head); }
    });
  });
  filter.addEventListener("input", apply);
  toggles.concat(readinessToggles).forEach(function (toggle) { toggle.addEventListener("change", apply); });
  document.getElementById("only-problems").addEventListener("click", function () {
    toggles.forEach(function (toggle) { toggle.checked = toggle.value === "FAIL" || toggle.value === "WARN"; });
    apply();
  });
  document.getElementById("show-all").addEventListener("click", function () {
    toggles.concat(readinessToggles).forEach(function (toggle) { toggle.checked = true; });
    filter.value = "";
    apply();
  });
  apply();
}());
"""
