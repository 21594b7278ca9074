# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Builds the device check's bundle: all that `make device-check` needs on a GPU machine with nothing installed.

usage: python scripts/device_check_bundle.py BUNDLE_DIR     (with ansible-core importable: the checkout's .venv)

BUNDLE_DIR (build/device-check for `make device-check`; it must stay under 64 MiB, the most a
device machine is sent) holds:

- device_check.py and device-check.sh: the check and its entry point, which checks for Python;
- collections/ansible_collections/gpuops/hardening/: the collection's galaxy.yml, meta, plugins,
  roles and playbooks: the parsers the check imports (plain Python) and what the audit runs;
- payloads/AnsiballZ_gpu_numa_facts.py and AnsiballZ_gpu_baseline.py: each module as Ansible
  ships it to a node, made by this ansible-core from one ad-hoc call kept with
  ANSIBLE_KEEP_REMOTE_FILES. The call's interpreter is /bin/true, so the module never runs here.
  They carry the ansible.module_utils they import, so they run on the GPU machine's own Python
  (3.8 or later) without Ansible installed; the check sets their arguments there;
- controller/: ansible-core and the distributions its controller imports (CONTROLLER_DISTRIBUTIONS),
  copied file by file from their installed records, for the audit (ansible-playbook), which runs
  where the machine's Python is 3.11 or later. Compiled extensions come along but load only on the
  Python they were built for; jinja2's MarkupSafe and PyYAML fall back to pure Python elsewhere;
- bundle.json: when and from what it was built.
"""

from __future__ import annotations

import datetime
import glob
import hashlib
import importlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

MAX_BYTES = 64 * 1024 * 1024
COLLECTION_PARTS = ("galaxy.yml", "LICENSE", "meta", "plugins", "roles", "playbooks")
# Not needed on the node: the checkout's collection path (a link back to the checkout) and the AWX set-up.
COLLECTION_LEFT_OUT = ("playbooks/collections", "playbooks/awx")
# (distribution, its top-level packages): ansible-core's controller and what it imports.
CONTROLLER_DISTRIBUTIONS = (("ansible-core", ("ansible",)), ("jinja2", ("jinja2",)), ("MarkupSafe", ("markupsafe",)),
                            ("PyYAML", ("yaml", "_yaml")), ("packaging", ("packaging",)), ("resolvelib", ("resolvelib",)))
# ansible-core's wheel also holds ansible-test, which the audit does not use.
DISTRIBUTION_LEFT_OUT = ("ansible_test",)
# What each payload is built with; device_check.py sets the arguments it runs with.
PAYLOAD_ARGS = {"gpu_numa_facts": {"require_gpu": True}, "gpu_baseline": {"node": "bundle", "topology": {}}}


def load_check():
    """scripts/device_check.py, loaded by path (scripts/ is no package)."""
    spec = importlib.util.spec_from_file_location("device_check", os.path.join(HERE, "device_check.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ignored(relative):
    parts = relative.split(os.sep)
    return "__pycache__" in parts or relative.endswith(".pyc") or any(
        relative == left or relative.startswith(left + os.sep) for left in COLLECTION_LEFT_OUT)


def copy_collection(target):
    for part in COLLECTION_PARTS:
        source = os.path.join(REPO, part)
        if os.path.isfile(source):
            shutil.copy2(source, os.path.join(target, part))
            continue
        for folder, _dirs, names in os.walk(source):
            for name in names:
                path = os.path.join(folder, name)
                relative = os.path.relpath(path, REPO)
                if ignored(relative) or os.path.islink(path):
                    continue
                os.makedirs(os.path.join(target, os.path.dirname(relative)), exist_ok=True)
                shutil.copy2(path, os.path.join(target, relative))


def copy_distribution(name, packages, target):
    """Copy an installed distribution into target; its version."""
    try:
        distribution = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        distribution = None
    if distribution is not None and distribution.files:
        for entry in distribution.files:
            relative = str(entry)
            source = str(distribution.locate_file(entry))
            if relative.startswith("..") or entry.parts[0] in DISTRIBUTION_LEFT_OUT or ignored(relative) or not os.path.isfile(source):
                continue
            os.makedirs(os.path.join(target, os.path.dirname(relative)), exist_ok=True)
            shutil.copy2(source, os.path.join(target, relative))
        return distribution.version
    # Importable without its record (ansible-test puts ansible-core on the path so): copy the packages and
    # write the metadata importlib.metadata.version() reads (ansible-core asks it for jinja2's).
    version = None
    for package in packages:
        module = importlib.import_module(package)
        version = version or getattr(module, "__version__", None)
        source = os.path.dirname(module.__file__)
        shutil.copytree(source, os.path.join(target, package), ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    if name == "ansible-core":
        version = importlib.import_module("ansible.release").__version__
    info = os.path.join(target, "%s-%s.dist-info" % (name.replace("-", "_"), version))
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "w", encoding="utf-8") as handle:
        handle.write("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version))
    return version


def build_payload(module, collections, target):
    """The module's AnsiballZ payload from one ad-hoc call whose interpreter is /bin/true."""
    scratch = tempfile.mkdtemp(prefix="device-check-payload-")
    try:
        config = os.path.join(scratch, "ansible.cfg")
        with open(config, "w", encoding="utf-8") as handle:
            handle.write("[defaults]\n")
        env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections, ANSIBLE_KEEP_REMOTE_FILES="1", ANSIBLE_PIPELINING="0",
                   ANSIBLE_REMOTE_TMP=os.path.join(scratch, "remote"), ANSIBLE_LOCAL_TEMP=os.path.join(scratch, "local"),
                   ANSIBLE_HOME=os.path.join(scratch, "home"), ANSIBLE_CONFIG=config, ANSIBLE_NOCOLOR="1")
        argv = [sys.executable, "-m", "ansible.cli.adhoc", "all", "-i", "localhost,", "-c", "local", "--check",
                "-e", "ansible_python_interpreter=%s" % (shutil.which("true") or "/bin/true"),
                "-m", "gpuops.hardening.%s" % module, "-a", json.dumps(PAYLOAD_ARGS[module])]
        # /bin/true prints nothing, so the call itself fails ("No start of json char found"): only the kept file counts.
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        found = glob.glob(os.path.join(scratch, "remote", "ansible-tmp-*", "AnsiballZ_%s.py" % module))
        if len(found) != 1:
            raise SystemExit("device_check_bundle: ansible left no AnsiballZ payload of %s:\n%s%s" % (module, done.stdout, done.stderr))
        with open(found[0], encoding="utf-8") as handle:
            text = handle.read()
        load_check().params_line(text.splitlines(True), found[0])
        path = os.path.join(target, "AnsiballZ_%s.py" % module)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def git(*argv):
    try:
        done = subprocess.run(["git", "-C", REPO] + list(argv), capture_output=True, text=True, check=False)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def size_of(folder):
    total = count = 0
    for path, _dirs, names in os.walk(folder):
        for name in names:
            total += os.path.getsize(os.path.join(path, name))
            count += 1
    return total, count


def build(bundle):
    bundle = os.path.abspath(bundle)
    if os.path.exists(bundle):
        if os.listdir(bundle) and not os.path.isfile(os.path.join(bundle, "bundle.json")):
            raise SystemExit("device_check_bundle: %s holds something else than a bundle; give a new folder" % bundle)
        shutil.rmtree(bundle)
    collections = os.path.join(bundle, "collections")
    collection = os.path.join(collections, "ansible_collections", "gpuops", "hardening")
    os.makedirs(collection)
    copy_collection(collection)
    for name in ("device_check.py", "device-check.sh"):
        shutil.copy2(os.path.join(HERE, name), os.path.join(bundle, name))
    os.makedirs(os.path.join(bundle, "payloads"))
    payloads = dict((module, build_payload(module, collections, os.path.join(bundle, "payloads"))) for module in PAYLOAD_ARGS)
    distributions = dict((name, copy_distribution(name, packages, os.path.join(bundle, "controller")))
                         for name, packages in CONTROLLER_DISTRIBUTIONS)
    with open(os.path.join(REPO, "galaxy.yml"), encoding="utf-8") as handle:
        version = re.search(r"^version:\s*(\S+)", handle.read(), re.M)
    commit = git("rev-parse", "--short=12", "HEAD")
    if commit and git("status", "--porcelain"):
        commit += " with uncommitted changes"
    total, count = size_of(bundle)
    info = {
        "built": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        "commit": commit or "unknown (no git checkout)", "collection_version": version.group(1) if version else None,
        "ansible_core": distributions["ansible-core"], "built_with_python": platform.python_version(),
        "payloads": payloads, "controller": distributions, "files": count + 1, "bytes": total,
    }
    with open(os.path.join(bundle, "bundle.json"), "w", encoding="utf-8") as handle:
        json.dump(info, handle, indent=2, sort_keys=True)
        handle.write("\n")
    if total > MAX_BYTES:
        raise SystemExit("device_check_bundle: %s is %.1f MiB, over the 64 MiB a device machine is sent" % (bundle, total / 1048576.0))
    print("device_check_bundle: %s: %d files, %.1f MiB (ansible-core %s, gpuops.hardening %s, %s)" % (
        bundle, count + 1, total / 1048576.0, info["ansible_core"], info["collection_version"], info["commit"]))
    return info


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.split("\n\n", 2)[1])
    build(sys.argv[1])
