# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The execution environment's definition, as ansible-builder reads it, and the supported range.

`ansible-builder create` turns execution-environment.yml into a build context in a
temporary folder; the tests read what it generated: the base image, the pinned
ansible-core and ansible-runner, the collections it installs, and that neither
this collection nor the EE asks for any other Python or system package. No image
is built here (scripts/ee-test.sh does that). Run it with

    .venv/bin/python -m pytest -q tests/ee/test_ee_context.py
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys

import pytest
import yaml
from packaging.specifiers import SpecifierSet
from packaging.version import Version

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
BASE_IMAGE = "gpuops-ee/debian13-base:latest"
# The range's ends: the oldest maintained ansible-core runs on the host venv, the newest in the EE.
OLDEST, NEWEST = "2.19", "2.21"


def load_yaml(*parts):
    with open(os.path.join(REPO_ROOT, *parts), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


@pytest.fixture(scope="module")
def context(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("ee-context"))
    subprocess.run([os.path.join(BIN, "ansible-builder"), "create", "--file", "execution-environment.yml",
                    "--context", out, "--output-filename", "Containerfile"],
                   cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    with open(os.path.join(out, "Containerfile"), encoding="utf-8") as handle:
        containerfile = handle.read()
    return out, containerfile


def build_args(containerfile):
    return dict(re.findall(r'^ARG (\w+)="(.*)"$', containerfile, re.M))


def test_base_image_is_the_local_debian13_build(context):
    args = build_args(context[1])
    assert args["EE_BASE_IMAGE"] == BASE_IMAGE
    assert args["PYCMD"] == "/usr/bin/python3"


def test_installs_the_newest_supported_ansible_core_and_runner(context):
    refs = build_args(context[1])["ANSIBLE_INSTALL_REFS"].split()
    assert len(refs) == 2 and refs[0].startswith("ansible-core==") and refs[1].startswith("ansible-runner==")
    core = Version(refs[0].split("==")[1])
    assert "%d.%d" % (core.major, core.minor) == NEWEST
    assert core in SpecifierSet(load_yaml("meta", "runtime.yml")["requires_ansible"])


def test_installs_the_collection_and_the_docker_connection(context):
    requirements = load_yaml(context[0], "_build", "requirements.yml")
    assert requirements == load_yaml("ee", "requirements.yml")
    assert [(item["name"], item["type"]) for item in requirements["collections"]] == [
        ("collections/gpuops-hardening.tar.gz", "file"),
        ("collections/community.docker", "dir"),
        ("collections/community.library_inventory_filtering_v1", "dir"),
    ]
    assert "ansible-galaxy collection install $ANSIBLE_GALAXY_CLI_COLLECTION_OPTS -r requirements.yml" in context[1]


def test_the_ee_adds_no_python_or_system_requirements_of_its_own(context):
    assert not os.path.exists(os.path.join(context[0], "_build", "requirements.txt"))
    assert not os.path.exists(os.path.join(context[0], "_build", "bindep.txt"))
    # The build stage's installs are ansible-builder's own tools and nothing else.
    installs = re.findall(r"^RUN \$PYCMD -m pip install --no-cache-dir (.*)$", context[1], re.M)
    assert installs == ["$ANSIBLE_INSTALL_REFS", "bindep pyyaml packaging", "'dumb-init==1.2.5'"]


def introspect(collections_dir):
    """What the build's introspection step finds in COLLECTIONS_DIR/ansible_collections: (pip, bindep) lines."""
    done = subprocess.run([os.path.join(BIN, "ansible-builder"), "introspect", "--sanitize", str(collections_dir)],
                          capture_output=True, text=True, check=True)
    found = yaml.safe_load(done.stdout)
    return found["python"], found["system"]


def test_the_collection_declares_no_controller_requirements():
    # playbooks/collections holds the checkout as ansible_collections/gpuops/hardening.
    assert introspect(os.path.join(REPO_ROOT, "playbooks", "collections")) == ([], [])


def test_without_its_meta_file_the_developers_tooling_would_leak_in(tmp_path):
    # The control: the same introspection on a copy without meta/execution-environment.yml
    # reads the root requirements.txt (ansible-lint, molecule, selenium...) as runtime needs.
    copy = tmp_path / "ansible_collections" / "gpuops" / "hardening"
    copy.mkdir(parents=True)
    for name in ("galaxy.yml", "requirements.txt"):
        (copy / name).write_text(open(os.path.join(REPO_ROOT, name), encoding="utf-8").read())
    python, dummy = introspect(tmp_path)
    assert any(line.startswith("selenium") for line in python)
    assert load_yaml("meta", "execution-environment.yml")["dependencies"] == {
        "python": "meta/ee-requirements.txt", "system": "meta/ee-bindep.txt"}


def test_awx_is_configured_with_the_image_of_this_release():
    # scripts/ee-build.sh tags the image with this name.
    image = load_yaml("playbooks", "awx", "configure.yml")[0]["vars"]["gpuops_awx_ee_image"]
    assert image.rsplit(":", 1)[1] == load_yaml("galaxy.yml")["version"]


def test_the_roles_declare_the_same_oldest_ansible_core():
    floor = load_yaml("meta", "runtime.yml")["requires_ansible"]
    assert floor == ">=%s.0" % OLDEST
    for meta in sorted(glob.glob(os.path.join(REPO_ROOT, "roles", "*", "meta", "main.yml"))):
        with open(meta, encoding="utf-8") as handle:
            assert yaml.safe_load(handle)["galaxy_info"]["min_ansible_version"] == OLDEST, meta


def host_pins():
    """{package: version} of the host venv's requirements.txt."""
    with open(os.path.join(REPO_ROOT, "requirements.txt"), encoding="utf-8") as handle:
        return dict(line.split("==") for line in handle.read().splitlines() if "==" in line and not line.startswith("#"))


def test_the_host_venv_runs_the_oldest():
    assert host_pins()["ansible-core"].startswith(OLDEST + ".")


def test_the_host_runs_jobs_with_the_ansible_runner_the_ee_carries():
    # The ee gate's `ansible-runner run` (tests/ee/awx_job.py) stands for AWX's execution node.
    ee_pin = load_yaml("execution-environment.yml")["dependencies"]["ansible_runner"]["package_pip"]
    assert ee_pin == "ansible-runner==" + host_pins()["ansible-runner"]
