# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Finds installed copies of this collection that would shadow the checkout.

Usage: python scripts/collection_copies.py snapshot FILE
       python scripts/collection_copies.py check FILE

A copy in ~/.ansible/collections (or in ansible-compat's cache, which Molecule
fills when it installs the project) wins over the checkout in later runs
outside the project. `snapshot` records the copies present before a run;
`check` fails if the run left a new or rewritten one.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ansible_compat.prerun import get_cache_dir

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLECTION = os.path.join("ansible_collections", "gpuops", "hardening")


def collection_roots():
    """Where Ansible looks for collections by default, and the cache Molecule's ansible-compat installs into.

    ansible-lint's project-local cache (.ansible/ in the checkout) is left out: it shadows nothing outside.
    """
    roots = [os.path.expanduser("~/.ansible/collections"), "/usr/share/ansible/collections",
             os.path.join(str(get_cache_dir(Path(REPO_ROOT), isolated=False)), "collections")]
    return sorted(set(roots))


def copies():
    """path -> mtime of MANIFEST.json (or of the directory) for each copy that is not the checkout."""
    found = {}
    for root in collection_roots():
        path = os.path.join(root, COLLECTION)
        if os.path.isdir(path) and os.path.realpath(path) != REPO_ROOT:
            manifest = os.path.join(path, "MANIFEST.json")
            found[path] = os.stat(manifest if os.path.exists(manifest) else path).st_mtime
    return found


def main(argv):
    if len(argv) != 3 or argv[1] not in ("snapshot", "check"):
        raise SystemExit(__doc__)
    if argv[1] == "snapshot":
        with open(argv[2], "w", encoding="utf-8") as handle:
            json.dump(copies(), handle)
        return 0
    with open(argv[2], encoding="utf-8") as handle:
        before = json.load(handle)
    left = sorted(path for path, mtime in copies().items() if before.get(path) != mtime)
    if left:
        sys.stderr.write("ERROR: this run left an installed copy of gpuops.hardening that shadows the checkout: %s\n"
                         % ", ".join(left))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
