# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checks the built collection tarball: what ships, what stays out, and the README's links.

usage: check_artifact.py ARTIFACT.tar.gz

- every file git tracks ships, unless galaxy.yml's build_ignore leaves it out;
  nothing else ships (MANIFEST.json and FILES.json aside);
- the development files never ship: the lab inventory, the lint config, tests,
  the lab and CI tooling;
- what users run is there: roles, playbooks, plugins, the runtime and
  execution-environment metadata, the changelog;
- every relative link or image in a shipped Markdown file points at a file in
  the artifact, so Galaxy and Automation Hub render the README without holes.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import subprocess
import sys
import tarfile

import yaml

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

NEVER_SHIPPED = ["inventory/lab.yml", ".config/ansible-lint.yml", "tests/", "molecule/", "scripts/", ".ci/",
                 "Makefile", "requirements.txt", "ansible.cfg", "bench/", "changelogs/fragments/"]
ALWAYS_SHIPPED = ["README.md", "LICENSE", "CHANGELOG.rst", "changelogs/changelog.yaml", "meta/runtime.yml",
                  "meta/execution-environment.yml", "playbooks/site.yml", "playbooks/audit.yml",
                  "inventory/example.yml", "extras/monitoring/gpuops-alerts.yml",
                  "extras/monitoring/gpuops-dashboard.json"]
ADDED_BY_BUILD = {"MANIFEST.json", "FILES.json"}
# ansible-galaxy turns galaxy.yml into MANIFEST.json.
REPLACED_BY_BUILD = {"galaxy.yml"}
MARKDOWN_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def ignored(path, patterns):
    """ansible-galaxy's build_ignore: a pattern matches the path or one of its parent folders."""
    parts = path.split("/")
    prefixes = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
    return any(fnmatch.fnmatch(prefix, pattern) for prefix in prefixes for pattern in patterns)


def tracked_files():
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=REPO_ROOT,
                         check=True, capture_output=True, text=True).stdout
    return {line for line in out.splitlines() if os.path.isfile(os.path.join(REPO_ROOT, line))}


def artifact_files(artifact):
    with tarfile.open(artifact) as tar:
        files = {member.name: member for member in tar.getmembers() if member.isfile()}
        manifest = json.load(tar.extractfile(files["MANIFEST.json"]))
        texts = {name: tar.extractfile(member).read().decode("utf-8")
                 for name, member in files.items() if name.endswith(".md")}
    return set(files), manifest, texts


def broken_links(name, text, shipped):
    folder = os.path.dirname(name)
    for target in MARKDOWN_LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        path = os.path.normpath(os.path.join(folder, target.split("#", 1)[0]))
        if path not in shipped and not any(f.startswith(path + "/") for f in shipped):
            yield "%s links to %s, which the artifact does not carry" % (name, target)


def problems(artifact):
    with open(os.path.join(REPO_ROOT, "galaxy.yml"), encoding="utf-8") as handle:
        galaxy = yaml.safe_load(handle)
    shipped, manifest, markdown = artifact_files(artifact)
    expected = {f for f in tracked_files() if not ignored(f, galaxy.get("build_ignore", []))}
    for path in sorted(expected - shipped - REPLACED_BY_BUILD):
        yield "%s is tracked and not in build_ignore, but did not ship" % path
    for path in sorted(shipped - expected - ADDED_BY_BUILD):
        yield "%s shipped but is not a tracked file" % path
    for path in NEVER_SHIPPED:
        if path in shipped or (path.endswith("/") and any(f.startswith(path) for f in shipped)):
            yield "%s is a development file and must not ship" % path
    for path in ALWAYS_SHIPPED:
        if path not in shipped:
            yield "%s must ship" % path
    for role in sorted(os.listdir(os.path.join(REPO_ROOT, "roles"))):
        if "roles/%s/meta/argument_specs.yml" % role not in shipped:
            yield "role %s ships without its argument specs" % role
    if manifest["collection_info"]["version"] != galaxy["version"]:
        yield "MANIFEST.json has version %s, galaxy.yml %s" % (manifest["collection_info"]["version"], galaxy["version"])
    for name, text in sorted(markdown.items()):
        yield from broken_links(name, text, shipped)


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    found = list(problems(argv[1]))
    for problem in found:
        print("artifact: " + problem, file=sys.stderr)
    if found:
        sys.exit(1)
    print("artifact: %s ships what users need and nothing else; every Markdown link resolves" % os.path.basename(argv[1]))


if __name__ == "__main__":
    main(sys.argv)
