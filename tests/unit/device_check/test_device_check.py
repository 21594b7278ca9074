# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The device check (`make device-check`, scripts/device_check.py): read-only by its own table of commands,
and run whole, from its bundle, against an emulated node with the emulator's nvidia-smi on PATH, where it
writes every file it writes on a GPU machine (only the figures differ) and changes nothing."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shlex
import socket
import stat
import subprocess
import sys

import pytest

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.emulated_host import emulated_host

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SCRIPTS = os.path.join(ROOT, "scripts")
ENTRY = os.path.join(SCRIPTS, "device-check.sh")
# The controller of the bundled ansible-core (the audit) needs this Python or later.
AUDIT_PYTHON = (3, 11)

# What the issue forbids, written out here apart from the script's own guard.
NEVER_SMI = {"-pm", "--persistence-mode", "-mig", "--multi-instance-gpu", "-r", "--gpu-reset", "-c", "--compute-mode",
             "-pl", "--power-limit", "-lgc", "--lock-gpu-clocks"}
NEVER_MIG = {"-cgi", "--create-gpu-instance", "-cci", "--create-compute-instance", "-dgi", "--destroy-gpu-instance",
             "-dci", "--destroy-compute-instance"}
NEVER_PROGRAMS = {"nvidia-cuda-mps-control", "nvidia-cuda-mps-server"}


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(SCRIPTS, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check = load("device_check")


def forbidden(argv):
    """What in argv the issue forbids, or None."""
    words = [str(word) for word in argv]
    if os.path.basename(words[0]) in NEVER_PROGRAMS:
        return words[0]
    if any(word == "/etc" or "/etc/" in word for word in words):
        return "a path under /etc"
    if os.path.basename(words[0]) == "nvidia-smi":
        options = set(word.split("=", 1)[0] for word in words[1:])
        if words[1:2] == ["mig"]:
            return sorted(options & NEVER_MIG) or None
        if words[1:2] not in (["topo"], ["nvlink"]):
            return sorted(options & NEVER_SMI) or None
    return None


PLACES = {"python": "/usr/bin/python3", "work": "/tmp/out/work", "out": "/tmp/out", "collection": "/opt/bundle/collections/x"}


@pytest.mark.parametrize("row", check.COMMANDS, ids=[row[0] for row in check.COMMANDS])
def test_every_command_the_check_runs_is_read_only(row):
    argv = check.expand(row[2], PLACES)
    assert forbidden(argv) is None
    assert check.read_only_problem(argv) is None


def test_the_modules_run_in_check_mode_and_write_no_fact_file_nor_lock_outside_the_output():
    for module, args in check.MODULE_ARGS.items():
        assert args["_ansible_check_mode"] is True, module
        assert not any("/etc" in str(value) for value in args.values()), module
    assert check.MODULE_ARGS["gpu_numa_facts"]["fact_path"] is None
    assert check.MODULE_ARGS["gpu_baseline"]["root"].startswith("{work}/")


@pytest.mark.parametrize("argv", [
    ["nvidia-smi", "-pm", "1"], ["nvidia-smi", "--persistence-mode=1"], ["nvidia-smi", "-i", "0", "-mig", "1"],
    ["nvidia-smi", "-r", "-i", "0"], ["nvidia-smi", "-c", "EXCLUSIVE_PROCESS"], ["nvidia-smi", "-pl", "300"],
    ["nvidia-smi", "-lgc", "1000,1500"], ["nvidia-smi", "mig", "-cgi", "9", "-C"], ["nvidia-smi", "mig", "-dci"],
    ["nvidia-smi", "mig", "-dgi", "-i", "0"], ["nvidia-smi", "nvlink", "-r", "0"], ["nvidia-smi", "drain", "-p", "0"],
    ["/usr/bin/nvidia-cuda-mps-control", "-d"], ["tee", "/etc/sysctl.d/x.conf"], ["python3", "-m", "x", "-e", "@/etc/x"],
])
def test_the_guard_refuses_what_the_issue_forbids(argv):
    assert check.read_only_problem(argv)


@pytest.mark.parametrize("argv", [["nvidia-smi", "nvlink", "-c"], ["nvidia-smi", "mig", "-lgip", "-i", "0"],
                                  ["nvidia-smi", "-i", "0", "--query-gpu=index", "--format=csv"]])
def test_the_guard_lets_reads_through(argv):
    assert check.read_only_problem(argv) is None


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """A bundle built from this checkout by scripts/device_check_bundle.py, with this Python's ansible-core."""
    path = str(tmp_path_factory.mktemp("device-check") / "bundle")
    done = subprocess.run([sys.executable, os.path.join(SCRIPTS, "device_check_bundle.py"), path],
                          capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return path


def test_the_bundle_carries_the_check_the_collection_the_payloads_and_ansible_core_under_64_mib(bundle):
    with open(os.path.join(bundle, "bundle.json"), encoding="utf-8") as handle:
        info = json.load(handle)
    total = sum(os.path.getsize(os.path.join(folder, name)) for folder, _dirs, names in os.walk(bundle) for name in names)
    assert total <= 64 * 1024 * 1024 and info["bytes"] <= total
    assert sorted(info["payloads"]) == ["gpu_baseline", "gpu_numa_facts"]
    assert set(info["controller"]) == {"ansible-core", "jinja2", "MarkupSafe", "PyYAML", "packaging", "resolvelib"}
    for relative in ("device_check.py", "device-check.sh", "payloads/AnsiballZ_gpu_numa_facts.py", "controller/ansible/cli/playbook.py",
                     "collections/ansible_collections/gpuops/hardening/plugins/module_utils/nvidia_smi.py",
                     "collections/ansible_collections/gpuops/hardening/playbooks/audit.yml"):
        assert os.path.isfile(os.path.join(bundle, relative)), relative
    collection = os.path.join(bundle, "collections", "ansible_collections", "gpuops", "hardening")
    assert sorted(os.listdir(collection)) == ["LICENSE", "galaxy.yml", "meta", "playbooks", "plugins", "roles"]


@pytest.fixture
def node(tmp_path):
    """An emulated 8x H100 node with MIG on GPUs 0 and 1: its sysfs tree, and a bin folder whose nvidia-smi
    (the emulator's) logs every call."""
    root = tmp_path / "node"
    root.mkdir()
    args, state, state_path = emulated_host(root, "dgx_h100")
    for index in (0, 1):
        state["gpus"][index]["mig"] = {"current": "Enabled", "pending": "Enabled"}
    api.write_state(state, state_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "nvidia-smi-calls.jsonl"
    wrapper = bin_dir / "nvidia-smi"
    wrapper.write_text("#!/bin/sh\n%s -c 'import json, sys; print(json.dumps(sys.argv[1:]))' \"$@\" >> %s\nexec %s \"$@\"\n" % (
        shlex.quote(sys.executable), shlex.quote(str(calls)), shlex.quote(args["nvidia_smi_path"])))
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return {"root": str(root), "bin": str(bin_dir), "calls": str(calls), "state": state_path}


def environment(**extra):
    """A caller's environment as on a bare machine: no Python or Ansible settings."""
    env = dict((name, value) for name, value in os.environ.items() if not name.startswith(("PYTHON", "ANSIBLE_")))
    env.update(extra)
    return env


def gpu_settings(state_path):
    state = api.read_state(state_path)
    return [(gpu["persistence_legacy"], gpu["compute_mode"], gpu["mig"], gpu.get("gpu_instances")) for gpu in state["gpus"]], state


def expected_files():
    files = set(check.TOP_FILES) | set(name for files in check.STEP_FILES.values() for name in files)
    # dgx_h100's GPUs are MIG-capable, so the MIG captures are made too.
    files |= set("captures/" + row[1] for row in check.COMMANDS if row[1]) | set("captures/" + name for name in check.SYSFS_CAPTURES)
    if sys.version_info >= AUDIT_PYTHON:
        files |= set(name.format(hostname=socket.gethostname()) for name in check.AUDIT_RUN_FILES)
    return files


def log_tail(path, lines=40):
    """The end of a step's log, for a failure's message."""
    if not os.path.exists(path):
        return ""
    with open(path, encoding="utf-8", errors="replace") as handle:
        return "\n%s:\n%s" % (path, "".join(handle.readlines()[-lines:]))


def test_on_an_emulated_node_it_writes_every_file_and_changes_nothing(bundle, node, tmp_path):
    before, _state = gpu_settings(node["state"])
    out = tmp_path / "out"
    done = subprocess.run([ENTRY, str(out), "--root", node["root"], "--runs", "3"], capture_output=True, text=True, check=False, timeout=600,
                          env=environment(PATH=node["bin"] + os.pathsep + os.environ["PATH"], PYTHON=sys.executable, DEVICE_CHECK_BUNDLE=bundle))
    assert done.returncode == 0, done.stdout + done.stderr + log_tail(out / "audit" / "ansible-playbook.log")
    with open(out / "summary.json", encoding="utf-8") as handle:
        summary = json.load(handle)

    written = set(os.path.relpath(os.path.join(folder, name), str(out)) for folder, _dirs, names in os.walk(str(out)) for name in names)
    assert written == set(summary["files"]) == expected_files()
    statuses = dict((record["step"], record["status"]) for record in summary["steps"])
    audit = "ok" if sys.version_info >= AUDIT_PYTHON else "skipped"
    assert statuses == {"machine": "ok", "captures": "ok", "facts": "ok", "parsers": "ok", "baseline": "ok", "audit": audit}

    for row in check.COMMANDS:
        if row[1]:
            with open(out / "captures" / row[1], encoding="utf-8") as handle:
                head = [handle.readline() for _line in range(4)]
            assert head[0] == "# command: %s\n" % " ".join(row[2])
            assert head[1].startswith("# machine: %s (Linux " % socket.gethostname()) and "driver 525.60.13, CUDA 12.0; 8x NVIDIA H100 80GB HBM3" in head[1]
    with open(out / "parsers.json", encoding="utf-8") as handle:
        parsers = json.load(handle)
    assert parsers["parses"] and all(entry["ok"] for entry in parsers["parses"] + parsers["agreements"])
    with open(out / "facts" / "timings.json", encoding="utf-8") as handle:
        timings = json.load(handle)
    assert timings["runs"] == 3 and timings["ratio"] > 0
    with open(out / "baseline" / "gpu_baseline.json", encoding="utf-8") as handle:
        baseline = json.load(handle)
    assert set(item["id"].split(".")[1] for item in baseline["checks"]) >= set("gpu%d" % index for index in range(8))
    with open(out / "figures.md", encoding="utf-8") as handle:
        figures = handle.read()
    assert "| **module ÷ bare `-q -x`** |" in figures and "| audit | %s |" % audit in figures

    # Every nvidia-smi call, the modules' and the audit's included, only read; the GPUs are as they were.
    with open(node["calls"], encoding="utf-8") as handle:
        calls = [json.loads(line) for line in handle]
    assert ["-q", "-x"] in calls and ["mig", "-lgip"] in calls
    assert [call for call in calls if forbidden(["nvidia-smi"] + call) or check.read_only_problem(["nvidia-smi"] + call)] == []
    after, state = gpu_settings(node["state"])
    assert after == before and state["log"] == [] and not state["daemons"]["mps"] and not state["daemons"]["persistenced"]


def test_without_python_it_says_what_is_missing(tmp_path):
    done = subprocess.run([ENTRY, str(tmp_path / "out")], capture_output=True, text=True, check=False, timeout=60,
                          env=environment(PYTHON="python-that-is-not-here"))
    assert done.returncode == 3
    assert "Python is missing: no python-that-is-not-here on PATH" in done.stderr and "Python 3.8 or later" in done.stderr
    assert not (tmp_path / "out").exists()


def test_with_too_old_a_python_it_says_so(tmp_path):
    old = tmp_path / "python3"
    old.write_text("#!/bin/sh\ncat >/dev/null\necho 'Python 3.8 or later (this one is 3.6)'\n")
    old.chmod(0o755)
    done = subprocess.run([ENTRY, str(tmp_path / "out")], capture_output=True, text=True, check=False, timeout=60,
                          env=environment(PYTHON=str(old)))
    assert done.returncode == 3
    assert "it lacks Python 3.8 or later (this one is 3.6)" in done.stderr


class Baseline:
    """The baseline step of a Check with a driver: each module call answered here takes `cost` of the budget left."""

    def __init__(self, tmp_path, gpus=3, remaining=1000, cost=0, failing=()):
        options = argparse.Namespace(out=str(tmp_path / "out"), root="/", runs=3, skip=None, budget=270)
        self.check = check.Check(options)
        self.check.machine = {"hostname": "gpu-a"}
        self.check.facts = {"gpus": [{"index": index, "pci_bus_id": "0000:%02x:00.0" % index} for index in range(gpus)]}
        self.sent, self.remaining, self.cost, self.failing = [], remaining, cost, failing
        self.check.run = lambda argv, timeout, **kwargs: (0, "", "", 0.1)  # libcuda.so.1 loads
        self.check.payload = lambda module, args: self.sent.append(args["topology"]["gpus"])
        self.check.run_module = self.answer
        self.check.left = lambda: self.remaining

    def answer(self, key, timeout):
        index = self.sent[-1][0]["index"]
        self.remaining -= self.cost
        if index in self.failing:
            raise check.Problem("baseline_module ran past %d s and was stopped" % timeout)
        return {"document": {"checks": [{"id": "baseline.driver_api", "verdict": "PASS"},
                                        {"id": "baseline.gpu%d.startup" % index, "verdict": "PASS"}]}}

    def run(self):
        record = self.check.step("baseline", self.check.step_baseline)
        with open(self.check.path("baseline", "gpu_baseline.json"), encoding="utf-8") as handle:
            return record, json.load(handle)


def test_with_a_driver_the_baseline_measures_each_gpu_in_a_call_of_its_own(tmp_path):
    baseline = Baseline(tmp_path)
    record, result = baseline.run()
    assert record["status"] == "ok" and [[gpu["index"] for gpu in gpus] for gpus in baseline.sent] == [[0], [1], [2]]
    assert [item["id"] for item in result["checks"]] == ["baseline.driver_api"] + ["baseline.gpu%d.startup" % index for index in range(3)]


def test_the_budget_stops_the_baseline_between_gpus_and_says_which_were_left(tmp_path):
    # Each GPU takes 150 s: after two, 100 s are left, short of the audit's reserve and one GPU's time.
    record, result = Baseline(tmp_path, remaining=400, cost=150).run()
    assert record["status"] == "ok" and result["not_measured_gpus"] == [2]
    assert record["reason"] == "the time budget stopped it before GPU(s) 2"


def test_a_gpu_whose_call_fails_fails_the_step_and_keeps_the_others_figures(tmp_path):
    record, result = Baseline(tmp_path, failing=(1,)).run()
    assert record["status"] == "failed" and record["reason"] == "GPU 1: baseline_module ran past 925 s and was stopped"
    assert [item["id"] for item in result["checks"]] == ["baseline.driver_api", "baseline.gpu0.startup", "baseline.gpu2.startup"]
