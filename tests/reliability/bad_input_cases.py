# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bad-input matrix of bad_inputs.yml: its cases, their runs, and its table in docs/reliability.md.

Usage: python tests/reliability/bad_input_cases.py   rewrites the "## Bad input" table.
"""

from __future__ import annotations

import json
import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
CASES_FILE = os.path.join(HERE, "bad_inputs.yml")
DOC = os.path.join(REPO_ROOT, "docs", "reliability.md")
MODES = ("site", "role", "own_play")
HEADING = "## Bad input"
REPO_MARK = "@repo/"


def load_cases(path=CASES_FILE):
    with open(path, encoding="utf-8") as handle:
        cases = yaml.safe_load(handle)
    for case in cases:
        case.setdefault("modes", list(MODES))
        case.setdefault("extra", {})
        case.setdefault("group", "%s.%s" % (case["role"], case["variable"]))
        case.setdefault("alone", False)
        case.setdefault("on_host", False)
        case.setdefault("argument_spec", False)
    return cases


def _in_checkout(value):
    if isinstance(value, str) and value.startswith(REPO_MARK):
        return os.path.join(REPO_ROOT, value[len(REPO_MARK):])
    return value


def case_vars(case):
    """The extra vars of one case, paths in the checkout resolved."""
    found = dict((name, _in_checkout(value)) for name, value in case["extra"].items())
    found[case["variable"]] = _in_checkout(case["value"])
    return found


def _fits(run, case, by_stage):
    if case["alone"] or any(other["alone"] or other["group"] == case["group"] for other in run):
        return False
    if by_stage and any(other["argument_spec"] != case["argument_spec"] for other in run):
        return False
    merged = {}
    for other in run:
        merged.update(case_vars(other))
    return all(merged.get(name, value) == value for name, value in case_vars(case).items())


def bundle(cases, by_stage=False):
    """Runs (lists of cases) that share no group and no variable with another value; alone cases run alone.

    by_stage: argument-spec cases and the others in separate runs (a role alone reports only the former)."""
    runs = []
    for case in cases:
        for run in runs:
            if _fits(run, case, by_stage):
                run.append(case)
                break
        else:
            runs.append([case])
    return runs


def runs_of(cases, mode):
    """[(role or None, [cases])]: the runs of a mode; a role alone takes its own cases only."""
    chosen = [case for case in cases if mode in case["modes"]]
    if mode != "role":
        return [(None, run) for run in bundle(chosen)]
    roles = sorted(set(case["role"] for case in chosen))
    return [(role, run) for role in roles for run in bundle([case for case in chosen if case["role"] == role], by_stage=True)]


def _cell(text):
    return text.replace("|", "\\|")


def table(cases):
    """The markdown table of the cases."""
    lines = ["| Case | Role | Variable | Value | The message contains | Modes |",
             "| --- | --- | --- | --- | --- | --- |"]
    for case in cases:
        value = json.dumps(case["value"], sort_keys=True)
        if case["extra"]:
            value += " with " + json.dumps(case["extra"], sort_keys=True)
        lines.append("| %s |" % " | ".join(_cell(cell) for cell in (
            case["id"], case["role"], "`%s`" % case["variable"], "`%s`" % value,
            ", ".join("`%s`" % fragment for fragment in case["message"]), ", ".join(case["modes"]))))
    return "\n".join(lines) + "\n"


def section(cases):
    return ("%s\n\nEvery case stops the run before anything changes: the node's fingerprint (managed files, live "
            "values, GPU state) is the same after it. Generated from tests/reliability/bad_inputs.yml by "
            "`python tests/reliability/bad_input_cases.py`; do not edit by hand.\n\n%s" % (HEADING, table(cases)))


def with_section(document, cases):
    """document with its bad-input section replaced (or added at the end)."""
    start = document.find("\n%s\n" % HEADING)
    if start < 0:
        return document.rstrip("\n") + "\n\n" + section(cases)
    end = document.find("\n## ", start + 1)
    rest = document[end:] if end >= 0 else ""
    return document[:start + 1] + section(cases) + rest


def main():
    text = open(DOC, encoding="utf-8").read() if os.path.exists(DOC) else "# Reliability\n"
    with open(DOC, "w", encoding="utf-8") as handle:
        handle.write(with_section(text, load_cases()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
