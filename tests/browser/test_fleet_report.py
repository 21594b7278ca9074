# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report opened in a real headless Chromium: what a person sees, and that nothing leaves the page.

The report folder is GPUOPS_AUDIT_REPORT_DIR (``fleet.html`` and ``nodes/<node>.json``);
without it a sample folder is rendered (sample_fleet). The screenshot goes to
GPUOPS_AUDIT_SCREENSHOT, else to the test's temporary folder. Run it with
scripts/browser-test.sh.
"""

from __future__ import annotations

import glob
import json
import os
import struct
import sys

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# The machine may have no network: Chromium must not try to reach anything on its own.
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic",
         "--hide-scrollbars", "--window-size=1400,1000")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
UNKNOWN = "unknown"


def _collection_on_path():
    path = os.path.join(REPO_ROOT, "playbooks", "collections")
    if path not in sys.path:
        sys.path.insert(0, path)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """(fleet.html path, node documents by name)."""
    folder = os.environ.get("GPUOPS_AUDIT_REPORT_DIR")
    if not folder:
        _collection_on_path()
        from ansible_collections.gpuops.hardening.tests.browser import sample_fleet  # pylint: disable=import-outside-toplevel

        folder = str(tmp_path_factory.mktemp("report"))
        sample_fleet.build(folder, tmp_path_factory.mktemp("hosts"))
    page = os.path.join(os.path.abspath(folder), "fleet.html")
    assert os.path.isfile(page), "no fleet.html in %s" % folder
    nodes = {}
    for path in sorted(glob.glob(os.path.join(folder, "nodes", "*.json"))):
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
        nodes[document["node"]] = document
    assert nodes, "no node documents in %s/nodes" % folder
    return page, nodes


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    # Selenium Manager stays out of it: the driver and browser paths are given.
    os.environ["SE_AVOID_STATS"] = "true"
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument("--user-data-dir=%s" % tmp_path_factory.mktemp("chromium-profile"))
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


@pytest.fixture
def page(browser, report):
    """The report freshly loaded (no filter, sort or open drill-down left from another test)."""
    browser.get("about:blank")
    browser.get_log("performance")
    browser.get("file://" + report[0])
    return browser


def _rows(page):
    return page.find_elements(By.CSS_SELECTOR, "#fleet-table tbody tr[data-node]")


def _shown_rows(page):
    return [row.get_attribute("data-node") for row in _rows(page) if row.is_displayed()]


def _sort(page, key):
    (head,) = [head for head in page.find_elements(By.CSS_SELECTOR, "#fleet-table thead th[data-sort]")
               if head.get_attribute("data-sort") == key]
    head.click()


def _section(page, name):
    """The drill-down of a node (ids are sanitised names, so look it up by data-node)."""
    (section,) = [section for section in page.find_elements(By.CSS_SELECTOR, "section.node-detail")
                  if section.get_attribute("data-node") == name]
    return section


def _failures(nodes):
    return sorted((name, check["id"]) for name, node in nodes.items() if not node.get("error")
                  for check in node.get("checks") or [] if check.get("verdict") == "FAIL")


def _png_size(data):
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_screenshot_of_the_fleet_and_the_largest_node(page, report, tmp_path):
    nodes = report[1]
    largest = max(sorted(nodes), key=lambda name: len((nodes[name].get("topology") or {}).get("gpus") or []))
    (link,) = [row.find_element(By.CSS_SELECTOR, "th.node a") for row in _rows(page)
               if row.get_attribute("data-node") == largest]
    link.click()
    page.execute_script("window.scrollTo(0, 0)")
    # The whole page in one picture; twice, as losing the scroll bar widens the page and grows the pictures.
    for _attempt in range(2):
        height = page.execute_script("return document.documentElement.scrollHeight + window.outerHeight - window.innerHeight")
        page.set_window_size(1400, min(max(height, 1000), 8000))
        # Two animation frames: the page is laid out and painted at the new size before the shot.
        page.execute_async_script("requestAnimationFrame(() => requestAnimationFrame(arguments[0]))")
    try:
        data = page.get_screenshot_as_png()
    finally:
        page.set_window_size(1400, 1000)
    width, shot_height = _png_size(data)
    assert width >= 1000 and shot_height >= 1000 and len(data) > 20000
    target = os.environ.get("GPUOPS_AUDIT_SCREENSHOT") or str(tmp_path / "fleet-report.png")
    with open(target, "wb") as handle:
        handle.write(data)


def test_the_table_lists_every_node(page, report):
    nodes = report[1]
    assert sorted(_shown_rows(page)) == sorted(nodes)
    for row in _rows(page):
        assert row.find_element(By.CSS_SELECTOR, "th.node a").text == row.get_attribute("data-node")


def test_fail_cells_are_shown_red_under_their_check(page, report):
    nodes = report[1]
    shown = []
    for row in _rows(page):
        for cell in row.find_elements(By.CSS_SELECTOR, 'td[data-verdict="FAIL"]'):
            assert cell.is_displayed() and cell.text == "FAIL"
            red, green, blue = [int(part) for part in cell.value_of_css_property("background-color")
                                .split("(")[1].split(")")[0].split(",")[:3]]
            assert red > 150 and green < 100 and blue < 100
            shown.append((row.get_attribute("data-node"), cell.get_attribute("data-check")))
    assert sorted(shown) == _failures(nodes)
    titles = dict((check["id"], check["title"]) for node in nodes.values() for check in node.get("checks") or [])
    heads = dict((head.get_attribute("data-check"), head) for head in page.find_elements(By.CSS_SELECTOR, "th.check"))
    for _name, check_id in shown:
        assert heads[check_id].is_displayed() and heads[check_id].text == titles[check_id]


def test_each_drill_down_opens_with_its_topology_picture(page, report):
    for name, node in sorted(report[1].items()):
        section = _section(page, name)
        assert not section.is_displayed()
        (link,) = [row.find_element(By.CSS_SELECTOR, "th.node a") for row in _rows(page)
                   if row.get_attribute("data-node") == name]
        link.click()
        assert section.is_displayed() and section.find_element(By.TAG_NAME, "h2").text == name
        topology = node.get("topology") or {}
        picture = section.find_element(By.CSS_SELECTOR, "svg.topology")
        assert picture.is_displayed() and picture.size["width"] > 300
        assert len(picture.find_elements(By.CSS_SELECTOR, "g.gpu")) == len(topology.get("gpus") or [])
        assert len(picture.find_elements(By.CSS_SELECTOR, "g.numa-node")) == len(topology.get("numa_nodes") or [])
        if node.get("error"):
            assert node["error"] in section.find_element(By.CSS_SELECTOR, "p.error").text
        else:
            rows = section.find_elements(By.CSS_SELECTOR, "table.checks tbody tr[data-check]")
            assert len(rows) == len(node.get("checks") or [])


def test_sorting_by_fail_count_and_by_name(page, report):
    nodes = report[1]
    fails = dict((name, int((node.get("summary") or {}).get("FAIL") or 0)) for name, node in nodes.items())
    _sort(page, "count:FAIL")
    order = _shown_rows(page)
    assert [fails[name] for name in order] == sorted(fails.values(), reverse=True)
    _sort(page, "count:FAIL")
    assert [fails[name] for name in _shown_rows(page)] == sorted(fails.values())
    _sort(page, "node")
    assert _shown_rows(page) == sorted(nodes, key=str.lower)
    failures = _failures(nodes)
    if failures:
        name, check_id = failures[0]
        _sort(page, "check:" + check_id)
        first = _rows(page)[0]
        assert [cell.get_attribute("data-verdict") for cell in first.find_elements(By.CSS_SELECTOR, "td[data-check]")
                if cell.get_attribute("data-check") == check_id] == ["FAIL"]


def _type(box, text):
    """Replace the box's text the way a person does, so the page sees input events."""
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.BACKSPACE)
    if text:
        box.send_keys(text)


def test_filtering_by_node_by_check_and_by_verdict(page, report):
    nodes = report[1]
    box = page.find_element(By.ID, "filter")
    name = sorted(nodes)[-1]
    _type(box, name)
    assert _shown_rows(page) == [row.get_attribute("data-node") for row in _rows(page)
                                 if name.lower() in row.get_attribute("data-node").lower()]
    _type(box, "")
    assert sorted(_shown_rows(page)) == sorted(nodes)

    heads = page.find_elements(By.CSS_SELECTOR, "#fleet-table th.check")
    wanted = (_failures(nodes) or [(None, heads[0].get_attribute("data-check"))])[0][1]
    _type(box, wanted)
    shown = [head.get_attribute("data-check") for head in heads if head.is_displayed()]
    assert wanted in shown
    assert all(wanted.lower() in head.get_attribute("data-search") for head in heads if head.is_displayed())
    for row in _rows(page):
        if row.is_displayed() and row.get_attribute("data-error") != "1":
            assert [cell.get_attribute("data-check") for cell in row.find_elements(By.CSS_SELECTOR, "td[data-check]")
                    if cell.is_displayed()] == shown

    page.find_element(By.ID, "show-all").click()
    page.find_element(By.ID, "only-problems").click()
    for row in _rows(page):
        if row.is_displayed() and row.get_attribute("data-error") != "1":
            assert {"FAIL", "WARN"} & set(cell.get_attribute("data-verdict") for cell in
                                          row.find_elements(By.CSS_SELECTOR, "td[data-check]") if cell.is_displayed())
    with_problems = [name for name, node in nodes.items() if node.get("error") or any(
        check.get("verdict") in ("FAIL", "WARN") for check in node.get("checks") or [])]
    assert sorted(_shown_rows(page)) == sorted(with_problems)


def test_nothing_leaves_the_page(page, report):
    policy = page.find_element(By.CSS_SELECTOR, 'meta[http-equiv="Content-Security-Policy"]').get_attribute("content")
    assert "default-src 'none'" in policy and "img-src data:" in policy
    # Open every drill-down, sort and filter: whatever the page does, it fetches nothing.
    for row in _rows(page):
        row.find_element(By.CSS_SELECTOR, "th.node a").click()
    _sort(page, "count:FAIL")
    page.find_element(By.ID, "filter").send_keys("a")
    requests = []
    for entry in page.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            requests.append(message["params"]["request"]["url"])
    address = "file://" + report[0]
    assert address in requests
    assert [url for url in requests if url.split("#")[0] != address and not url.startswith("data:")] == []
    # The policy blocked nothing either: a blocked inline style or script would be a console error.
    assert [entry["message"] for entry in page.get_log("browser") if entry["level"] == "SEVERE"] == []


# ------------------------------------------------------------------ readiness


@pytest.fixture(scope="module")
def readiness_order():
    """The verdicts mildest first, as the audit defines them."""
    _collection_on_path()
    from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_hardware_checks import READINESS  # pylint: disable=import-outside-toplevel

    return READINESS


def _readiness(node):
    """(verdict as the page shows it, reasons)."""
    entry = node.get("readiness") or {}
    return entry.get("verdict") or UNKNOWN, entry.get("reasons") or []


def _rank(verdict, order):
    # Unknown after the worst: the report sorts a node nobody could read with the ones to pull.
    return order.index(verdict) if verdict in order else len(order)


def _readiness_cell(row):
    return row.find_element(By.CSS_SELECTOR, "td[data-readiness]")


def _rgb(element, name):
    return [int(part) for part in element.value_of_css_property(name).split("(")[1].split(")")[0].split(",")[:3]]


def test_the_readiness_column_shows_each_nodes_verdict(page, report, readiness_order):
    nodes = report[1]
    (head,) = [head for head in page.find_elements(By.CSS_SELECTOR, "#fleet-table thead th[data-sort]")
               if head.get_attribute("data-sort") == "readiness"]
    assert head.is_displayed() and head.text == "Readiness"
    shown = {}
    for row in _rows(page):
        cell = _readiness_cell(row)
        assert cell.is_displayed()
        shown[row.get_attribute("data-node")] = cell.text
        red, green, _blue = _rgb(cell, "background-color")
        if cell.text == readiness_order[0]:
            assert green > red, cell.text
        if cell.text == readiness_order[-1]:
            assert red > green, cell.text
    assert shown == dict((name, _readiness(node)[0]) for name, node in nodes.items())
    if not os.environ.get("GPUOPS_AUDIT_REPORT_DIR"):
        assert {"ready", "degraded", "reset", "replace", UNKNOWN} <= set(shown.values())


def test_sorting_by_readiness_puts_the_worst_first(page, readiness_order):
    def ranks():
        return [_rank(_readiness_cell(row).text, readiness_order) for row in _rows(page)]

    _sort(page, "readiness")
    assert ranks() == sorted(ranks(), reverse=True)
    if not os.environ.get("GPUOPS_AUDIT_REPORT_DIR"):
        assert len(set(ranks())) > 1  # the sample holds every verdict; a converged lab is all ready
    head = page.find_element(By.CSS_SELECTOR, 'th[data-sort="readiness"]')
    assert head.get_attribute("aria-sort") == "descending"
    _sort(page, "readiness")
    assert ranks() == sorted(ranks())
    assert head.get_attribute("aria-sort") == "ascending"


def test_filtering_by_readiness(page, report, readiness_order):
    nodes = report[1]
    verdicts = dict((name, _readiness(node)[0]) for name, node in nodes.items())
    mildest = readiness_order[0]
    (toggle,) = [toggle for toggle in page.find_elements(By.CSS_SELECTOR, "input[data-readiness-toggle]")
                 if toggle.get_attribute("value") == mildest]
    assert [box.get_attribute("value") for box in page.find_elements(By.CSS_SELECTOR, "input[data-readiness-toggle]")] \
        == list(readiness_order) + [UNKNOWN]
    toggle.click()
    assert sorted(_shown_rows(page)) == sorted(name for name, verdict in verdicts.items() if verdict != mildest)
    page.find_element(By.ID, "show-all").click()
    assert sorted(_shown_rows(page)) == sorted(nodes)
    # The verdict is text the filter box finds, as a node's name is.
    for wanted in sorted(set(verdicts.values())):
        _type(page.find_element(By.ID, "filter"), wanted)
        assert sorted(_shown_rows(page)) == sorted(name for name, verdict in verdicts.items() if verdict == wanted)


def test_each_drill_down_shows_the_readiness_and_its_reasons(page, report):
    for name, node in sorted(report[1].items()):
        (link,) = [row.find_element(By.CSS_SELECTOR, "th.node a") for row in _rows(page)
                   if row.get_attribute("data-node") == name]
        link.click()
        panel = _section(page, name).find_element(By.CSS_SELECTOR, "div.readiness-view")
        verdict, reasons = _readiness(node)
        assert panel.is_displayed()
        assert panel.find_element(By.CSS_SELECTOR, "h3 .badge").text == verdict
        assert [item.text for item in panel.find_elements(By.CSS_SELECTOR, "ul.reasons li")] == reasons
