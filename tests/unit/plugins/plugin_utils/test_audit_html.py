# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report page: structure, escaping, the baseline comparison, readiness, determinism, no network."""

from __future__ import annotations

import base64
import copy
import hashlib
import re

import pytest

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_hardware_checks import READINESS
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_html import (
    check_columns,
    node_anchor,
    readiness_of,
    readiness_rank,
    render_fleet_report,
    summary_of,
)
from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_html_assets import STYLE, readiness_hue
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.emulated_host import emulated_topology
from ansible_collections.gpuops.hardening.tests.unit.plugins.plugin_utils.html_page import parse

NASTY = '<img src=x onerror="alert(1)"> & \'q\''


def _check(check_id, area, verdict, reason="as expected", expected="0", actual="0"):
    return {"id": check_id, "area": area, "title": check_id.split(".", 1)[1].replace("_", " "), "verdict": verdict,
            "expected": expected, "actual": actual, "reason": reason}


def _node(name, checks, topology=None, error=None, profile="training"):
    return {"schema_version": 1, "node": name, "profile": profile, "error": error,
            "summary": dict((v, sum(1 for c in checks if c["verdict"] == v)) for v in ("PASS", "FAIL", "WARN", "SKIP")),
            "checks": checks, "driver": {"driver_version": "570.124.06", "cuda_version": "12.8"}, "topology": topology or {}}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """Three nodes: one failing with an 8-GPU topology, one passing, one not audited."""
    topology = emulated_topology(tmp_path_factory.mktemp("dgx"), "dgx_h100")
    return [
        _node("gpu-a", [_check("sysctl.swappiness", "sysctl", "FAIL", reason="60 > 0", actual="60"),
                        _check("thp.enabled", "thp", "PASS"), _check("driver.version", "driver", "WARN"),
                        _check("mig.layout", "mig", "SKIP")], topology),
        _node("gpu-b", [_check("thp.enabled", "thp", "PASS"), _check("sysctl.swappiness", "sysctl", "PASS"),
                        _check("custom.thing", "zzz", "PASS")], profile="inference"),
        _node("gpu-c", [], error="ssh: connection timed out"),
    ]


COMPARISON = {"baseline": "before-thp", "saved_at": "2026-12-01T20:00:00Z", "nodes": {
    "gpu-a": {"status": "changed", "checks": [{"id": "sysctl.swappiness", "title": "swappiness",
                                               "before": {"verdict": "PASS", "actual": "0"},
                                               "after": {"verdict": "FAIL", "actual": "60"}}]},
    "gpu-b": {"status": "unchanged", "checks": []},
    "gpu-old": {"status": "gone", "checks": [{"id": "thp.enabled", "title": "THP", "before": {"verdict": "PASS"},
                                              "after": None}]},
}}


def test_every_node_and_check_is_in_the_table(fleet):
    page = parse(render_fleet_report(fleet, generated_at="2026-12-02T09:30:00Z"))
    (table,) = page.find_all("table", id="fleet-table")
    rows = [row for row in table.iter("tr") if "data-node" in row.attrs]
    assert [row.attrs["data-node"] for row in rows] == ["gpu-a", "gpu-b", "gpu-c"]
    cells = dict((cell.attrs["data-check"], cell) for cell in rows[0].iter("td") if "data-check" in cell.attrs)
    assert cells["sysctl.swappiness"].attrs["data-verdict"] == "FAIL"
    assert cells["sysctl.swappiness"].attrs["title"].startswith("60 > 0")
    assert cells["custom.thing"].attrs["data-verdict"] == ""  # not checked on gpu-a
    # Columns grouped by area, in the order the documents first list them.
    heads = [th.attrs["data-check"] for th in table.find_all("th", class_="check")]
    assert heads == ["sysctl.swappiness", "thp.enabled", "driver.version", "mig.layout", "custom.thing"]
    assert [(th.attrs["data-area"], th.attrs["colspan"]) for th in table.find_all("th", class_="area")] == [
        ("sysctl", "1"), ("thp", "1"), ("driver", "1"), ("mig", "1"), ("zzz", "1")]
    assert [section.attrs["id"] for section in page.find_all("section", class_="node-detail")] == \
        ["node-gpu-a", "node-gpu-b", "node-gpu-c"]
    assert "2026-12-02T09:30:00Z" in page.find_all("header")[0].all_text()


def test_header_totals(fleet):
    header = parse(render_fleet_report(fleet)).find_all("header")[0]
    cards = dict((card.attrs["class"].split()[-1], card.all_text()) for card in header.find_all("div", class_="card"))
    assert cards["v-FAIL"].startswith("1") and cards["v-PASS"].startswith("4") and cards["v-SKIP"].startswith("1")
    assert cards["card"].startswith("3") and "1 not audited" in cards["card"]


def test_a_node_that_could_not_be_audited_shows_its_error(fleet):
    page = parse(render_fleet_report(fleet))
    (row,) = [row for row in page.iter("tr") if row.attrs.get("data-node") == "gpu-c"]
    assert row.attrs["data-error"] == "1"
    assert [td.all_text() for td in row.find_all("td", class_="error")] == ["not audited: ssh: connection timed out"]
    (section,) = page.find_all("section", id="node-gpu-c")
    assert not section.find_all("table", class_="checks")
    assert "could not be audited: ssh: connection timed out" in section.all_text()
    assert "No GPU topology was collected for gpu-c." in section.all_text()


def test_drill_down_has_every_check_and_the_topology_picture(fleet):
    (section,) = parse(render_fleet_report(fleet)).find_all("section", id="node-gpu-a")
    rows = section.find_all("tr", class_=None)
    assert [row.attrs["data-check"] for row in rows if "data-check" in row.attrs] == [
        "sysctl.swappiness", "thp.enabled", "driver.version", "mig.layout"]
    assert "60 > 0" in section.all_text()
    (svg,) = section.find_all("svg")
    assert len(svg.find_all("g", class_="gpu")) == 8 and len(svg.find_all("g", class_="numa-node")) == 2


def test_text_from_the_data_is_escaped(fleet):
    nodes = copy.deepcopy(fleet)
    nodes[0]["node"] = NASTY
    nodes[0]["checks"][0]["reason"] = NASTY
    nodes[0]["checks"][0]["title"] = NASTY
    nodes[2]["error"] = NASTY
    text = render_fleet_report(nodes, comparison={"baseline": NASTY, "nodes": {NASTY: {"status": "changed", "checks": []}}},
                               title=NASTY, generated_at=NASTY)
    assert "<img" not in text and "onerror=\"" not in text
    page = parse(text)
    assert page.find_all("title")[0].all_text() == NASTY
    (row,) = [row for row in page.iter("tr") if row.attrs.get("data-node") == NASTY]
    (section,) = page.find_all("section", class_="node-detail", data_node=NASTY)
    assert re.match(r"^node-[A-Za-z0-9_.-]+$", section.attrs["id"])
    assert row.find_all("a")[0].attrs["href"] == "#" + section.attrs["id"]
    assert NASTY in section.all_text()


def test_comparison_with_a_baseline(fleet):
    page = parse(render_fleet_report(fleet, comparison=COMPARISON))
    header = page.find_all("header")[0].all_text()
    assert "before-thp" in header and "2026-12-01T20:00:00Z" in header and "1 changed" in header and "1 gone" in header
    (row,) = [row for row in page.iter("tr") if row.attrs.get("data-node") == "gpu-a"]
    changed = row.find_all("td", class_="changed")
    assert [cell.attrs["data-check"] for cell in changed] == ["sysctl.swappiness"]
    assert "before the baseline: PASS (0)" in changed[0].attrs["title"]
    assert row.find_all("td", class_="status")[0].attrs["data-status"] == "changed"
    (since,) = page.find_all("section", id="node-gpu-a")[0].find_all("div", class_="since")
    assert "Changed since baseline before-thp" in since.all_text()
    assert since.find_all("li")[0].all_text() == "swappiness: PASS (0) \u2192 FAIL (60)"
    assert [item.attrs["data-node"] for item in page.find_all("section", id="gone")[0].find_all("li")] == ["gpu-old"]
    # Without a comparison, nothing of it shows.
    plain = render_fleet_report(fleet)
    assert "baseline" not in parse(plain).find_all("main")[0].all_text().lower()


def test_same_inputs_same_bytes(fleet):
    first = render_fleet_report(fleet, COMPARISON, "t")
    assert first == render_fleet_report(copy.deepcopy(fleet), copy.deepcopy(COMPARISON), "t")


def _policy(page):
    (meta,) = [meta for meta in page.iter("meta") if meta.attrs.get("http-equiv") == "Content-Security-Policy"]
    return dict((part.split()[0], part.split()[1:]) for part in meta.attrs["content"].split(";") if part.strip())


def test_nothing_is_fetched(fleet):
    text = render_fleet_report(fleet, COMPARISON)
    page = parse(text)
    directives = _policy(page)
    assert directives["default-src"] == ["'none'"] and directives["img-src"] == ["data:"]
    for element in page.iter():
        for name in ("src", "href", "action", "data", "poster"):
            value = (element.attrs.get(name) or "").strip().lower()
            assert not value.startswith(("http:", "https:", "//")), (element.tag, name, value)
    assert not page.find_all("link") and not page.find_all("img") and not page.find_all("iframe")
    assert "@import" not in text and "url(" not in text


def _source_hash(text):
    return "'sha256-%s'" % base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def test_the_policy_allows_exactly_the_pages_own_inline_blocks(fleet):
    text = render_fleet_report(fleet, COMPARISON, "t")
    assert "unsafe-inline" not in text
    page = parse(text)
    directives = _policy(page)
    for tag, directive in (("style", "style-src"), ("script", "script-src")):
        blocks = page.find_all(tag)
        assert blocks, tag
        # The browser hashes the block's text exactly as it stands between the tags.
        assert sorted(set(_source_hash(block.all_text()) for block in blocks)) == sorted(directives[directive])
    # Hashes cover blocks only: a style attribute or an on* handler would be blocked.
    for element in page.iter():
        assert not [name for name in element.attrs if name == "style" or name.startswith("on")], element.tag


def test_node_anchor():
    taken = set()
    assert node_anchor("gpu-01.dc1", taken) == "node-gpu-01.dc1"
    assert node_anchor("a b", taken) == "node-a-b"
    assert node_anchor("a/b", taken) == "node-a-b-2"
    assert node_anchor("", taken) == "node--"


def test_summary_counted_when_the_document_has_none():
    node = _node("x", [_check("thp.enabled", "thp", "FAIL"), _check("mig.layout", "mig", "pass")])
    del node["summary"]
    assert summary_of(node) == {"FAIL": 1, "WARN": 0, "PASS": 1, "SKIP": 0}
    other = _node("y", [_check("mig.layout", "mig", "PASS"), _check("sysctl.swappiness", "sysctl", "PASS")])
    assert check_columns([node, other]) == [("thp", [("thp.enabled", "enabled")]), ("mig", [("mig.layout", "layout")]),
                                            ("sysctl", [("sysctl.swappiness", "swappiness")])]


def test_no_nodes_is_still_a_page():
    page = parse(render_fleet_report([]))
    assert page.find_all("table", id="fleet-table") and not [row for row in page.iter("tr") if "data-node" in row.attrs]


# ------------------------------------------------------------------ readiness

def _ready_node(name, verdict, reasons):
    node = _node(name, [_check("thp.enabled", "thp", "PASS")])
    node["readiness"] = {"verdict": verdict, "reasons": reasons}
    return node


def _readiness_row(page, name):
    (row,) = [row for row in page.iter("tr") if row.attrs.get("data-node") == name]
    (cell,) = row.find_all("td", class_="readiness")
    return row, cell


def _readiness_panel(page, name):
    (section,) = page.find_all("section", class_="node-detail", data_node=name)
    (panel,) = section.find_all("div", class_="readiness-view")
    return panel


def test_each_verdict_has_its_cell_rank_and_panel():
    nodes = [_ready_node("n-%s" % verdict, verdict, ["why %s" % verdict] if verdict != "ready" else [])
             for verdict in READINESS] + [_ready_node("n-null", None, ["the GPUs' health was not read"])]
    page = parse(render_fleet_report(nodes))
    (head,) = page.find_all("th", data_sort="readiness")
    assert head.all_text() == "Readiness" and "sortable" in head.attrs["class"].split()
    for position, verdict in enumerate(READINESS + ("unknown",)):
        name = "n-%s" % ("null" if verdict == "unknown" else verdict)
        row, cell = _readiness_row(page, name)
        assert (cell.all_text(), cell.attrs["data-readiness"], row.attrs["data-readiness"]) == (verdict,) * 3
        assert "r-%s" % verdict in cell.attrs["class"].split()
        assert int(row.attrs["data-readiness-rank"]) == position  # unknown after the worst
        assert verdict in row.attrs["data-search"]
        panel = _readiness_panel(page, name)
        assert panel.find_all("span", class_="badge")[0].all_text() == verdict
        assert [item.all_text() for item in panel.find_all("li")] == readiness_of(nodes[position])[1]
    assert "No finding holds the GPUs back." in _readiness_panel(page, "n-ready").all_text()
    assert [item.all_text() for item in _readiness_panel(page, "n-null").find_all("li")] == [
        "the GPUs' health was not read"]


def test_the_readiness_toggles_and_colours_come_from_readiness():
    page = parse(render_fleet_report([]))
    assert [box.attrs["value"] for box in page.iter("input") if "data-readiness-toggle" in box.attrs] == \
        list(READINESS) + ["unknown"]
    for position, verdict in enumerate(READINESS):
        assert ".r-%s { --r-hue: %d; }" % (verdict, readiness_hue(position)) in STYLE
    hues = [readiness_hue(position) for position in range(len(READINESS))]
    assert hues == sorted(hues, reverse=True) and hues[0] > 90 and hues[-1] == 0  # green to red


def test_readiness_reasons_are_escaped():
    text = render_fleet_report([_ready_node("n", "replace", [NASTY, "plain"])])
    assert "<img" not in text and 'onerror="' not in text
    page = parse(text)
    _row, cell = _readiness_row(page, "n")
    assert cell.attrs["title"] == NASTY + "\nplain"
    assert [item.all_text() for item in _readiness_panel(page, "n").find_all("li")] == [NASTY, "plain"]


@pytest.mark.parametrize("readiness", [
    "absent", None, "replace", {"verdict": "on fire", "reasons": "not a list"}, {"reasons": [None, ""]}])
def test_a_document_without_a_readiness_renders_as_unknown(fleet, readiness):
    """Documents written before the audit judged readiness (an old baseline's) or with one this page cannot read."""
    node = copy.deepcopy(fleet[0])
    if readiness != "absent":
        node["readiness"] = readiness
    assert readiness_of(node) == ("unknown", [])
    page = parse(render_fleet_report([node]))
    row, cell = _readiness_row(page, "gpu-a")
    assert cell.all_text() == "unknown" and int(row.attrs["data-readiness-rank"]) == len(READINESS)
    panel = _readiness_panel(page, "gpu-a")
    assert not panel.find_all("li") and "says nothing of the GPUs' readiness" in panel.all_text()


def test_readiness_rank_follows_readiness():
    assert [readiness_rank(verdict) for verdict in READINESS] == list(range(len(READINESS)))
    assert readiness_rank("unknown") == readiness_rank(None) == len(READINESS)
