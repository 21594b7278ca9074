# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The device check: one read-only run on a machine with real NVIDIA GPUs (`make device-check OUT=dir`).

usage: python3 device_check.py OUT [--root DIR] [--runs N] [--budget SECONDS] [--skip facts|baseline|audit]...

It runs from the bundle `scripts/device_check_bundle.py` builds (build/device-check), on a
machine where nothing is installed but Python 3.8 or later and the NVIDIA driver, with no
network. Everything it writes goes under OUT:

- captures/: each command of COMMANDS whose output is kept, with a `#` header naming the
  command, the machine and the driver (the layout of the project's real captures), and the
  sysfs NUMA and PCIe link files;
- facts/: gpuops.hardening.gpu_numa_facts, its AnsiballZ payload as Ansible ships it, timed
  against one bare `nvidia-smi -q -x` from fresh processes (medians, and their ratio);
- parsers.json: the collection's parsers on those captures, each checked against the XML;
- baseline/: gpuops.hardening.gpu_baseline (copies and CUDA start-up through libcuda.so.1);
- audit/: playbooks/audit.yml in check mode against this machine, with the ansible-core the
  bundle carries (its controller needs Python 3.11 or later), or why it was skipped;
- figures.md (the table), summary.json (every step, its status and files), machine.json and
  device-check.log.

Read-only: it never changes a GPU setting (COMMANDS is every command it runs itself, and
read_only_problem() refuses any other before it runs), runs the modules in check mode, and
writes nothing outside OUT. tests/unit/device_check/ holds it to that and runs it against an
emulated node.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

MIN_PYTHON = (3, 8)
# ansible-core 2.19's controller (the audit) refuses older Pythons.
CONTROLLER_PYTHON = (3, 11)
DEFAULT_RUNS = 11
MIN_RUNS = 10
TARGET_RATIO = 1.2
# Under 5 minutes on an 8-GPU node: no command runs past the budget by more than MIN_TIMEOUT_S, and
# the steps after it are skipped, saying so.
DEFAULT_BUDGET_S = 270
MIN_TIMEOUT_S = 5
# What the audit needs at least; the baseline stops starting GPUs while it would eat into it.
AUDIT_RESERVE_S = 75
CAPTURE_TIMEOUT_S = 60
# The baseline's options (gpu_baseline's defaults but 3 repeats), and about what one GPU's figures take:
# the baseline starts a GPU only with that much of the budget left beyond the audit's reserve.
BASELINE = {"sizes_mib": [1, 64, 1024], "repeats": 3, "max_memory_mib": 1024, "timeout": 60}
BASELINE_GPU_S = 30

QUERY_FIELDS = ("index", "pci.bus_id", "uuid", "name", "driver_version", "persistence_mode", "mig.mode.current",
                "mig.mode.pending", "compute_mode", "memory.total", "pcie.link.gen.current", "pcie.link.gen.max",
                "pcie.link.width.current", "pcie.link.width.max")

LIBCUDA_PROBE = "import ctypes; ctypes.CDLL('libcuda.so.1')"

# Every command this script runs itself, one row each: (key, capture file or None, argv, when).
# {python} is the interpreter running this script, {work} its scratch folder under OUT, {out} OUT,
# {collection} the bundle's copy of the collection. `when`: always; mig_capable (a GPU whose
# -q -x has a MIG mode); timing (the facts step, repeated); baseline; audit.
COMMANDS = (
    ("q_x", "nvidia_smi_q_x.xml", ("nvidia-smi", "-q", "-x"), "always"),
    ("list", "nvidia_smi_L.txt", ("nvidia-smi", "-L"), "always"),
    ("topo", "nvidia_smi_topo_m.txt", ("nvidia-smi", "topo", "-m"), "always"),
    ("query_gpu", "nvidia_smi_query_gpu.csv", ("nvidia-smi", "--query-gpu=" + ",".join(QUERY_FIELDS), "--format=csv"), "always"),
    ("mig_lgip", "nvidia_smi_mig_lgip.txt", ("nvidia-smi", "mig", "-lgip"), "mig_capable"),
    ("mig_lgipp", "nvidia_smi_mig_lgipp.txt", ("nvidia-smi", "mig", "-lgipp"), "mig_capable"),
    ("nvlink", "nvidia_smi_nvlink_s.txt", ("nvidia-smi", "nvlink", "-s"), "always"),
    ("lscpu", "lscpu.txt", ("lscpu",), "always"),
    ("numactl", "numactl_H.txt", ("numactl", "-H"), "always"),
    ("floor", None, ("nvidia-smi", "-q", "-x"), "timing"),
    ("floor_topo", None, ("nvidia-smi", "topo", "-m"), "timing"),
    ("facts_module", None, ("{python}", "{work}/AnsiballZ_gpu_numa_facts.py"), "timing"),
    ("libcuda", None, ("{python}", "-c", LIBCUDA_PROBE), "baseline"),
    ("baseline_module", None, ("{python}", "{work}/AnsiballZ_gpu_baseline.py"), "baseline"),
    ("audit", None, ("{python}", "-m", "ansible.cli.playbook", "--check", "-i", "{out}/audit/inventory.ini",
                     "-e", "@{out}/audit/extra-vars.json", "{collection}/playbooks/audit.yml"), "audit"),
)

# The modules' options, besides what the runner fills in (root, node, topology): both in check mode,
# no fact file, and the baseline's node lock below the scratch folder, not on the machine's /run.
MODULE_ARGS = {
    "gpu_numa_facts": {"require_gpu": True, "fact_path": None, "_ansible_check_mode": True},
    "gpu_baseline": dict(BASELINE, root="{work}/root", lock_timeout=0, _ansible_check_mode=True),
}

# What the issue forbids: nvidia-smi setters, MIG instance changes, an MPS daemon, writes under /etc.
FORBIDDEN_SMI_OPTIONS = ("-pm", "--persistence-mode", "-mig", "--multi-instance-gpu", "-r", "--gpu-reset", "-c",
                         "--compute-mode", "-pl", "--power-limit", "-lgc", "--lock-gpu-clocks", "-rgc",
                         "--reset-gpu-clocks", "-ac", "--applications-clocks", "-rac", "-e", "--ecc-config")
# The subcommands the check reads with, and their options that change something: MIG instances, NVLink
# error counters and counter control. Any other subcommand is refused.
SUBCOMMAND_SETTERS = {
    "mig": ("-cgi", "--create-gpu-instance", "-cci", "--create-compute-instance", "-dgi", "--destroy-gpu-instance",
            "-dci", "--destroy-compute-instance"),
    "nvlink": ("-r", "--resetcounters", "-sc", "--setcontrol"),
    "topo": (),
}
FORBIDDEN_PROGRAMS = ("nvidia-cuda-mps-control", "nvidia-cuda-mps-server", "nvidia-persistenced")

# The files of captures/ besides COMMANDS': sysfs, read below --root.
SYSFS_CAPTURES = ("sysfs_numa.txt", "sysfs_pci.txt")
NUMA_FILES = ("online", "possible", "has_cpu", "has_memory", "has_normal_memory")
NODE_FILES = ("cpulist", "distance")
PCI_FILES = ("numa_node", "local_cpulist", "current_link_speed", "current_link_width", "max_link_speed",
             "max_link_width", "vendor", "device", "class")

STEPS = ("machine", "captures", "facts", "parsers", "baseline", "audit")
SKIPPABLE = ("facts", "baseline", "audit")
# The files each step leaves whatever happens: a step that was skipped or failed before writing one
# leaves {"status", "reason"} there, so that every run has the same files (the audit's own report,
# audit/report/, and its inputs and log come only where it ran).
STEP_FILES = {
    "facts": ("facts/gpu_numa_facts.json", "facts/timings.json"),
    "parsers": ("parsers.json",),
    "baseline": ("baseline/gpu_baseline.json",),
    "audit": ("audit/audit.json",),
}
AUDIT_RUN_FILES = ("audit/inventory.ini", "audit/extra-vars.json", "audit/ansible-playbook.log", "audit/report/fleet.html",
                   "audit/report/fleet.json", "audit/report/nodes/{hostname}.json")
# Besides the captures and STEP_FILES.
TOP_FILES = ("device-check.log", "figures.md", "machine.json", "summary.json")


class Problem(Exception):
    """A step cannot go on; the message says why, and the record says failed."""


class Skipped(Exception):
    """The step cannot run here; the message says why, and the record says skipped."""


def read_only_problem(argv):
    """Why argv is not a read-only command the check may run, or None."""
    words = [str(word) for word in argv]
    program = os.path.basename(words[0]) if words else ""
    if program in FORBIDDEN_PROGRAMS:
        return "%s starts or drives a daemon" % program
    for word in words:
        if word == "/etc" or word.startswith("/etc/") or "=/etc/" in word or "@/etc/" in word:
            return "%s names a path under /etc" % word
    if program != "nvidia-smi":
        return None
    options = [word.split("=", 1)[0] for word in words[1:]]
    subcommand = options[0] if options and not options[0].startswith("-") else None
    if subcommand is None:
        setters = [option for option in options if option in FORBIDDEN_SMI_OPTIONS]
        return "nvidia-smi %s changes the GPU" % " ".join(setters) if setters else None
    if subcommand not in SUBCOMMAND_SETTERS:
        return "nvidia-smi %s is not a subcommand the check reads with" % subcommand
    setters = [option for option in options[1:] if option in SUBCOMMAND_SETTERS[subcommand]]
    return "nvidia-smi %s %s changes the GPU" % (subcommand, " ".join(setters)) if setters else None


def params_line(lines, source):
    """The index of the one line of an AnsiballZ payload that holds the module's arguments (params='{...}',)."""
    found = [index for index, line in enumerate(lines) if line.startswith("params=")]
    if len(found) != 1:
        raise Problem("%s has %d params= lines, not one: the AnsiballZ layout changed" % (source, len(found)))
    return found[0]


def expand(argv, places):
    return [word.format(**places) for word in argv]


def command_row(key):
    for row in COMMANDS:
        if row[0] == key:
            return row
    raise KeyError(key)


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)


class Check(object):
    """One run of the device check: its output folder, its budget, its log and its steps' records."""

    def __init__(self, options):
        self.out = os.path.abspath(options.out)
        self.root = os.path.abspath(options.root)
        self.runs = options.runs
        self.skip = set(options.skip or ())
        self.started = time.monotonic()
        self.deadline = self.started + options.budget
        self.budget = options.budget
        self.here = os.path.dirname(os.path.abspath(__file__))
        self.bundle = self._read_json(os.path.join(self.here, "bundle.json")) or {}
        self.collection = os.path.join(self.here, "collections", "ansible_collections", "gpuops", "hardening")
        self.work = os.path.join(self.out, "work")
        self.python = sys.executable or shutil.which("python3") or "python3"
        self.places = {"python": self.python, "work": self.work, "out": self.out, "collection": self.collection}
        self.records = []
        self.machine = {}
        self.captures = {}  # key: (rc, stdout) of each capture made
        self.facts = None
        self.smi = None
        self.log_handle = None

    # ----------------------------------------------------------------- plumbing

    @staticmethod
    def _read_json(path):
        try:
            with open(path, encoding="utf-8") as handle:
                return json.load(handle)
        except (OSError, ValueError):
            return None

    def path(self, *parts):
        return os.path.join(self.out, *parts)

    def write(self, relative, text):
        path = self.path(relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        return relative

    def write_json(self, relative, data):
        return self.write(relative, json.dumps(data, indent=2, sort_keys=True) + "\n")

    def say(self, text):
        line = "device-check: %s" % text
        print(line, flush=True)
        if self.log_handle:
            self.log_handle.write(line + "\n")
            self.log_handle.flush()

    def left(self):
        return self.deadline - time.monotonic()

    def environment(self, extra=None):
        """The children's environment: no Python or Ansible settings of the caller's, temporary files under OUT, the C locale."""
        env = dict((name, value) for name, value in os.environ.items() if not name.startswith(("PYTHON", "ANSIBLE_")))
        env.update(TMPDIR=os.path.join(self.work, "tmp"), LC_ALL="C", LANG="C")
        env.update(extra or {})
        return env

    def run(self, argv, timeout, env=None, keep_output=True):
        """(rc, stdout, stderr, seconds) of a read-only argv; rc None when it ran past timeout (then stopped)."""
        problem = read_only_problem(argv)
        if problem:
            raise Problem("refused to run %s: %s" % (shlex.join(argv), problem))
        timeout = max(MIN_TIMEOUT_S, min(timeout, self.left()))
        sink = subprocess.PIPE if keep_output else subprocess.DEVNULL
        started = time.monotonic()
        try:
            process = subprocess.Popen(argv, stdout=sink, stderr=sink, stdin=subprocess.DEVNULL, env=env or self.environment(),
                                       start_new_session=True, cwd=self.work, text=True, errors="replace")
        except OSError as error:
            return 127, "", "%s: %s" % (argv[0], error.strerror or error), 0.0
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._stop(process)
            out, err = process.communicate()
            return None, out or "", err or "", time.monotonic() - started
        return process.returncode, out or "", err or "", time.monotonic() - started

    @staticmethod
    def _stop(process):
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(process.pid, sig)
            except OSError:
                return
            try:
                process.wait(timeout=5)
                return
            except subprocess.TimeoutExpired:
                continue

    def find_smi(self):
        found = shutil.which("nvidia-smi")
        if not found and os.access("/usr/local/nvidia/bin/nvidia-smi", os.X_OK):
            found = "/usr/local/nvidia/bin/nvidia-smi"
        return found

    def argv_of(self, key):
        argv = expand(command_row(key)[2], self.places)
        if argv[0] == "nvidia-smi" and self.smi:
            argv[0] = self.smi
        return argv

    # ----------------------------------------------------------------- steps

    def step(self, name, function):
        record = {"step": name, "status": "ok", "reason": None, "files": [], "seconds": 0.0}
        started = time.monotonic()
        self.say("%s ..." % name)
        try:
            if name in self.skip:
                raise Skipped("--skip %s was given on the command line" % name)
            if self.records and self.records[0]["status"] == "failed":
                raise Skipped("no GPU to check: %s" % self.records[0]["reason"])
            function(record)
        except Skipped as skipped:
            record.update(status="skipped", reason=str(skipped))
        except Problem as problem:
            record.update(status="failed", reason=str(problem))
        except Exception as error:  # pylint: disable=broad-exception-caught
            record.update(status="failed", reason="%s: %s" % (type(error).__name__, error), traceback=traceback.format_exc())
        record["seconds"] = round(time.monotonic() - started, 2)
        for relative in STEP_FILES.get(name, ()):
            if not os.path.exists(self.path(relative)):
                record["files"].append(self.write_json(relative, {"status": record["status"], "reason": record["reason"]}))
        self.say("%s: %s%s (%.1f s)" % (name, record["status"], ": " + record["reason"] if record["reason"] else "", record["seconds"]))
        self.records.append(record)
        return record

    def step_machine(self, record):
        self.smi = self.find_smi()
        release = {}
        try:
            with open("/etc/os-release", encoding="utf-8") as handle:
                for line in handle:
                    key, _sep, value = line.strip().partition("=")
                    release[key] = value.strip('"')
        except OSError:
            pass
        self.machine.update(
            hostname=socket.gethostname(), kernel=platform.release(), architecture=platform.machine(),
            os=release.get("PRETTY_NAME"), python=platform.python_version(), python_path=self.python,
            user=os.getuid(), root=self.root, nvidia_smi=self.smi,
            tools=dict((tool, shutil.which(tool)) for tool in ("lscpu", "numactl", "timeout")),
            started=now_utc().isoformat(), budget_s=self.budget, runs=self.runs, bundle=self.bundle,
        )
        if not self.smi:
            raise Problem("nvidia-smi was not found on PATH or in /usr/local/nvidia/bin: is the NVIDIA driver installed?")

    def step_captures(self, record):
        rc, out, err, seconds = self.run(self.argv_of("q_x"), CAPTURE_TIMEOUT_S)
        self.captures["q_x"] = (rc, out)
        self.machine.update(self._driver_from_xml(out))
        record["files"].append(self._capture_file("q_x", rc, out, err, seconds))
        mig_capable = bool(re.search(r"<current_mig>\s*(Enabled|Disabled)\s*</current_mig>", out or ""))
        self.machine["mig_capable"] = mig_capable
        for key, name, _argv, when in COMMANDS:
            if name is None or key == "q_x" or (when == "mig_capable" and not mig_capable):
                continue
            argv = self.argv_of(key)
            if not shutil.which(argv[0]):
                rc, out, err, seconds = 127, "", "%s: not installed on this machine" % argv[0], 0.0
            else:
                rc, out, err, seconds = self.run(argv, CAPTURE_TIMEOUT_S)
            self.captures[key] = (rc, out)
            record["files"].append(self._capture_file(key, rc, out, err, seconds))
        for name, what, text in (("sysfs_numa.txt", "the sysfs NUMA node files and /proc/sys/kernel/numa_balancing", self._sysfs_numa()),
                                 ("sysfs_pci.txt", "each GPU's and RDMA NIC's sysfs PCI NUMA and PCIe link files", self._sysfs_pci())):
            record["files"].append(self.write("captures/" + name, self._header("cat of " + what) + text))
        failed = ["%s (exit code %s)" % (" ".join(command_row(key)[2][:3]), self.captures[key][0])
                  for key in ("q_x", "list", "topo", "query_gpu") if self.captures.get(key, (None,))[0] != 0]
        record["mig_capable"] = mig_capable
        if failed:
            raise Problem("nvidia-smi failed: %s" % ", ".join(failed))

    @staticmethod
    def _driver_from_xml(text):
        found = {}
        for key in ("driver_version", "cuda_version"):
            match = re.search(r"<%s>\s*([^<]*?)\s*</%s>" % (key, key), text or "")
            found[key] = match.group(1) if match else None
        found["gpus"] = re.findall(r"<product_name>\s*([^<]*?)\s*</product_name>", text or "")
        return found

    def _header(self, command, rc=None, seconds=None, err=""):
        gpus = self.machine.get("gpus") or []
        names = sorted(set(gpus))
        lines = [
            "command: %s" % command,
            "machine: %s (Linux %s %s); driver %s, CUDA %s; %s" % (
                self.machine.get("hostname"), self.machine.get("kernel"), self.machine.get("architecture"),
                self.machine.get("driver_version") or "unknown", self.machine.get("cuda_version") or "unknown",
                ", ".join("%dx %s" % (gpus.count(name), name) for name in names) or "no GPU reported"),
            "captured read-only on %s by gpuops.hardening's device check (scripts/device_check.py)%s" % (
                now_utc().isoformat(), "" if self.root == "/" else "; files read below %s" % self.root),
        ]
        if rc is not None or seconds is not None:
            lines.append("exit code: %s%s" % ("none (stopped at its timeout)" if rc is None else rc,
                                              "; %.2f s" % seconds if seconds is not None else ""))
        lines.extend("stderr: %s" % line for line in (err or "").splitlines() if line.strip())
        return "".join("# %s\n" % line for line in lines)

    def _capture_file(self, key, rc, out, err, seconds):
        row = command_row(key)
        return self.write(os.path.join("captures", row[1]), self._header(" ".join(row[2]), rc, seconds, err) + (out or ""))

    def _sys(self, *parts):
        return os.path.join(self.root, "sys", *parts)

    @staticmethod
    def _cat(path):
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                return handle.read().strip()
        except OSError as error:
            return "(unreadable: %s)" % (error.strerror or error)

    def _sysfs_numa(self):
        lines = []
        base = self._sys("devices", "system", "node")
        for name in NUMA_FILES:
            lines.append("/sys/devices/system/node/%s: %s" % (name, self._cat(os.path.join(base, name))))
        try:
            nodes = sorted((entry for entry in os.listdir(base) if re.match(r"^node\d+$", entry)), key=lambda entry: int(entry[4:]))
        except OSError:
            nodes = []
        for node in nodes:
            for name in NODE_FILES:
                lines.append("/sys/devices/system/node/%s/%s: %s" % (node, name, self._cat(os.path.join(base, node, name))))
            meminfo = self._cat(os.path.join(base, node, "meminfo"))
            total = re.search(r"^.*MemTotal:.*$", meminfo, re.M)
            lines.append("/sys/devices/system/node/%s/meminfo: %s" % (node, " ".join((total.group(0) if total else meminfo).split())))
        lines.append("/proc/sys/kernel/numa_balancing: %s" % self._cat(os.path.join(self.root, "proc", "sys", "kernel", "numa_balancing")))
        return "\n".join(lines) + "\n"

    def _gpu_addresses(self):
        addresses = []
        for bus_id in re.findall(r"<pci_bus_id>\s*([^<]*?)\s*</pci_bus_id>", self.captures.get("q_x", (None, ""))[1] or ""):
            match = re.match(r"^([0-9a-fA-F]+):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$", bus_id)
            if match:
                addresses.append("%04x:%s:%s.%s" % (int(match.group(1), 16), match.group(2).lower(), match.group(3).lower(), match.group(4)))
        return addresses

    def _sysfs_pci(self):
        lines = []
        devices = [("GPU", address, self._sys("bus", "pci", "devices", address)) for address in self._gpu_addresses()]
        rdma = self._sys("class", "infiniband")
        for name in sorted(os.listdir(rdma)) if os.path.isdir(rdma) else []:
            devices.append(("RDMA %s" % name, name, os.path.join(rdma, name, "device")))
        for kind, name, path in devices:
            real = os.path.realpath(path)
            shown = real[len(self.root):] if self.root != "/" and real.startswith(self.root + os.sep) else real
            lines.append("%s %s: %s" % (kind, name, shown if os.path.isdir(real) else "(not in sysfs)"))
            if os.path.isdir(real):
                lines.extend("  %s: %s" % (item, self._cat(os.path.join(real, item))) for item in PCI_FILES)
        return "\n".join(lines) + "\n"

    # ---- the modules, as Ansible ships them

    def payload(self, module, args):
        """This machine's copy of the module's AnsiballZ payload from the bundle, with its arguments set:
        MODULE_ARGS' (their {work} filled in), then args."""
        source = os.path.join(self.here, "payloads", "AnsiballZ_%s.py" % module)
        try:
            with open(source, encoding="utf-8") as handle:
                lines = handle.read().splitlines(True)
        except OSError:
            raise Problem("the bundle has no %s: build it with scripts/device_check_bundle.py" % os.path.basename(source))
        line = params_line(lines, source)
        params = json.loads(ast.literal_eval(lines[line][len("params="):].strip().rstrip(",")))
        module_args = params["ANSIBLE_MODULE_ARGS"]
        scratch = os.path.join(self.work, "tmp")
        module_args.update(_ansible_tmpdir=scratch + "/", _ansible_remote_tmp=scratch, _ansible_keep_remote_files=False)
        for key, value in MODULE_ARGS[module].items():
            module_args[key] = value.format(**self.places) if isinstance(value, str) else value
        module_args.update(args)
        lines[line] = "params=%r,\n" % json.dumps(params, sort_keys=True)
        target = os.path.join(self.work, "AnsiballZ_%s.py" % module)
        with open(target, "w", encoding="utf-8") as handle:
            handle.write("".join(lines))
        return target

    def run_module(self, key, timeout):
        """The module's result (a dict); Problem when it printed none."""
        rc, out, err, seconds = self.run(self.argv_of(key), timeout)
        if rc is None:
            raise Problem("%s ran past %d s and was stopped" % (key, timeout))
        start = (out or "").find("{")
        try:
            result = json.loads(out[start:]) if start >= 0 else None
        except ValueError:
            result = None
        if not isinstance(result, dict):
            raise Problem("%s printed no result (exit code %s): %s" % (key, rc, ((err or out or "").strip() or "no output")[-600:]))
        result["_seconds"] = round(seconds, 3)
        return result

    def read_facts(self):
        """One run of the facts module: its result, kept in facts/; self.facts, its topology, when it did not fail."""
        self.payload("gpu_numa_facts", {"root": self.root})
        result = self.run_module("facts_module", CAPTURE_TIMEOUT_S)
        self.write_json("facts/gpu_numa_facts.json", result)
        if result.get("failed"):
            raise Problem("gpu_numa_facts failed: %s" % result.get("msg"))
        self.facts = result["ansible_facts"]["gpu_topology"]
        return "facts/gpu_numa_facts.json"

    def step_facts(self, record):
        record["files"].append(self.read_facts())
        floor, floor_topo, module = self.argv_of("floor"), self.argv_of("floor_topo"), self.argv_of("facts_module")
        times = {"module": [], "nvidia_smi_q_x": [], "nvidia_smi_topo_m": []}
        # One untimed run of each first, then the three alternate, so that load hits them alike.
        for argv in (floor, floor_topo):
            self.run(argv, CAPTURE_TIMEOUT_S, keep_output=False)
        done = 0
        for done in range(1, self.runs + 1):
            for name, argv in (("module", module), ("nvidia_smi_q_x", floor), ("nvidia_smi_topo_m", floor_topo)):
                rc, _out, _err, seconds = self.run(argv, CAPTURE_TIMEOUT_S, keep_output=False)
                if rc != 0:
                    raise Problem("%s exited with %s during the timed runs" % (" ".join(argv[:3]), rc))
                times[name].append(round(seconds, 4))
            if self.left() < AUDIT_RESERVE_S + BASELINE_GPU_S and done >= MIN_RUNS:
                break
        medians = dict((name, statistics.median(values)) for name, values in times.items())
        timings = {
            "runs": done, "runs_asked": self.runs, "seconds": times,
            "median_s": medians, "min_s": dict((name, min(values)) for name, values in times.items()),
            "max_s": dict((name, max(values)) for name, values in times.items()),
            "ratio": medians["module"] / medians["nvidia_smi_q_x"], "target_ratio": TARGET_RATIO,
            "python": "%s (%s)" % (platform.python_version(), self.python),
            "how": ("each run a fresh process: the module's AnsiballZ payload as Ansible ships it, run with this Python "
                    "in check mode (Python start, the payload's unzip, imports, every nvidia-smi call it makes, sysfs "
                    "reads, its JSON), against one bare nvidia-smi -q -x, its output discarded; one untimed run of "
                    "each first, then alternating"),
        }
        record["files"].append(self.write_json("facts/timings.json", timings))
        record["ratio"] = round(timings["ratio"], 2)
        if done < MIN_RUNS:
            record["reason"] = "%d runs each, fewer than the %d the figure asks for (--runs)" % (done, MIN_RUNS)

    # ---- the parsers on the captures

    def step_parsers(self, record):
        sys.path.insert(0, os.path.join(self.here, "collections"))
        from ansible_collections.gpuops.hardening.plugins.module_utils import nvidia_smi, sysfs_topology  # pylint: disable=import-outside-toplevel
        from ansible_collections.gpuops.hardening.plugins.module_utils.cpulist import try_parse_cpulist  # pylint: disable=import-outside-toplevel
        from ansible_collections.gpuops.hardening.plugins.module_utils.pci_bus_id import sysfs_bus_id  # pylint: disable=import-outside-toplevel
        report = {"parses": [], "agreements": [], "observations": []}

        def parse(key, parser, function):
            """The parser on the capture file as written, without its # header."""
            rc = self.captures.get(key, (None,))[0]
            entry = {"capture": command_row(key)[1], "parser": parser, "ok": False}
            report["parses"].append(entry)
            if rc != 0:
                entry["error"] = "not captured (exit code %s)" % rc
                return None
            with open(self.path("captures", entry["capture"]), encoding="utf-8") as handle:
                lines = handle.read().splitlines(True)
            text = "".join(lines[next((index for index, line in enumerate(lines) if not line.startswith("#")), len(lines)):])
            try:
                parsed = function(text)
            except Exception as error:  # pylint: disable=broad-exception-caught
                entry["error"] = "%s: %s" % (type(error).__name__, error)
                return None
            entry.update(ok=True, items=len(parsed.get("gpus") or ()) if isinstance(parsed, dict) else len(parsed))
            return parsed

        def agree(what, expected, actual, kind="agreements", ok=None):
            report[kind].append({"what": what, "ok": expected == actual if ok is None else ok, "expected": expected, "actual": actual})

        xml = parse("q_x", "nvidia_smi.parse_query_xml", nvidia_smi.parse_query_xml)
        listed = parse("list", "nvidia_smi.parse_gpu_list", nvidia_smi.parse_gpu_list)
        matrix = parse("topo", "nvidia_smi.parse_topology_matrix", nvidia_smi.parse_topology_matrix)
        rows = parse("query_gpu", "nvidia_smi.parse_query_csv", nvidia_smi.parse_query_csv)
        gpus = (xml or {}).get("gpus") or []
        if xml is not None and not gpus:
            report["parses"][0].update(ok=False, error="no GPU in the XML")
        if listed is not None:
            agree("nvidia-smi -L: GPUs (index, uuid, name)", [(gpu["index"], gpu["uuid"], gpu["name"]) for gpu in gpus],
                  [(gpu["index"], gpu["uuid"], gpu["name"]) for gpu in listed])
            agree("nvidia-smi -L: MIG devices per GPU", [len(gpu["mig_devices"]) for gpu in gpus], [len(gpu["mig_devices"]) for gpu in listed])
        if matrix is not None:
            agree("topo -m: GPU rows", ["GPU%d" % gpu["index"] for gpu in gpus], sorted(matrix["gpus"], key=lambda label: int(label[3:])))
        if rows is not None:
            def row_of(gpu):
                return (gpu["index"], gpu["uuid"], gpu["pci_bus_id"] and sysfs_bus_id(gpu["pci_bus_id"]), gpu["name"],
                        gpu["persistence_mode"], gpu["mig_mode"], gpu["mig_mode_pending"], gpu["compute_mode"], gpu["memory_total_mib"])
            agree("--query-gpu: index, uuid, bus id, name, persistence, MIG mode (current, pending), compute mode, memory",
                  [row_of(gpu) for gpu in gpus],
                  [(nvidia_smi.cell_int(row, "index"), row.get("uuid"), sysfs_bus_id(row.get("pci.bus_id")), row.get("name"),
                    row.get("persistence_mode"), row.get("mig.mode.current"), row.get("mig.mode.pending"), row.get("compute_mode"),
                    int(row["memory.total"].split()[0]) if (row.get("memory.total") or "").split()[:1] and
                    row["memory.total"].split()[0].isdigit() else None) for row in rows])
            agree("--query-gpu: driver version", [xml["driver_version"]] * len(rows), [row.get("driver_version") for row in rows])
        if self.machine.get("mig_capable"):
            profiles = parse("mig_lgip", "nvidia_smi.parse_gpu_instance_profiles", nvidia_smi.parse_gpu_instance_profiles)
            placements = parse("mig_lgipp", "nvidia_smi.parse_gpu_instance_placements", nvidia_smi.parse_gpu_instance_placements)
            enabled = set(gpu["index"] for gpu in gpus if gpu["mig_mode"] == "Enabled")
            capable = set(gpu["index"] for gpu in gpus if gpu["mig_mode"] is not None)
            if profiles is not None:
                # Newer drivers list a MIG-capable GPU's profiles with MIG off too; older ones only with MIG on.
                listed = set(item["gpu"] for item in profiles)
                agree("mig -lgip: every GPU with MIG on lists its profiles, and only MIG-capable GPUs do",
                      {"mig_on": sorted(enabled), "mig_capable": sorted(capable)}, sorted(listed), ok=enabled <= listed <= capable)
            if profiles is not None and placements is not None:
                pairs = set((item["gpu"], item["profile_id"]) for item in placements)
                agree("mig -lgipp: each placement's GPU and profile are a profile -lgip lists", sorted(set((item["gpu"], item["id"]) for item in profiles)),
                      sorted(pairs), ok=pairs <= set((item["gpu"], item["id"]) for item in profiles))
        sysfs = self._sys()
        nodes = sysfs_topology.read_numa_nodes(sysfs)
        report["parses"].append({"capture": "sysfs_numa.txt", "parser": "sysfs_topology.read_numa_nodes", "ok": bool(nodes), "items": len(nodes)})
        for gpu in gpus:
            address = sysfs_bus_id(gpu["pci_bus_id"])
            device = sysfs_topology.read_pci_device(sysfs, address) if address else None
            report["parses"].append({"capture": "sysfs_pci.txt", "parser": "sysfs_topology.read_pci_device(%s)" % address,
                                     "ok": device is not None, "items": None})
            label = "GPU%d" % gpu["index"]
            topo = (matrix or {}).get("gpus", {}).get(label)
            if device and topo and device["numa_node"] is not None and topo["numa_affinity"] is not None:
                agree("%s: sysfs numa_node is in topo -m's NUMA Affinity" % label, True, device["numa_node"] in topo["numa_affinity"], "observations")
            if device and topo and device["cpus"] is not None and topo["cpu_affinity"] is not None:
                agree("%s: sysfs local_cpulist equals topo -m's CPU Affinity" % label, device["cpus"], topo["cpu_affinity"], "observations")
        self._check_facts(agree, gpus, xml, sysfs_bus_id)
        self._check_cpu_tools(report, agree, nodes, try_parse_cpulist)
        record["files"].append(self.write_json("parsers.json", report))
        bad = [entry["parser"] for entry in report["parses"] if not entry["ok"]] + [entry["what"] for entry in report["agreements"] if not entry["ok"]]
        differing = [entry["what"] for entry in report["observations"] if not entry["ok"]]
        record["reason"] = "%d parses, %d agreements with the XML%s" % (
            len(report["parses"]), len(report["agreements"]),
            "; observations that differ (parsers.json): %s" % "; ".join(differing) if differing else "")
        if bad:
            raise Problem("these did not parse or did not agree with the XML: %s" % "; ".join(bad))

    def _check_facts(self, agree, gpus, xml, sysfs_bus_id):
        if self.facts is None:
            return
        agree("gpu_numa_facts: GPUs (index, uuid, bus id)", [(gpu["index"], gpu["uuid"], sysfs_bus_id(gpu["pci_bus_id"])) for gpu in gpus],
              [(gpu["index"], gpu["uuid"], gpu["pci_bus_id"]) for gpu in self.facts.get("gpus") or []])
        agree("gpu_numa_facts: driver and CUDA versions", [xml["driver_version"], xml["cuda_version"]],
              [self.facts.get("driver_version"), self.facts.get("cuda_version")])

    def _check_cpu_tools(self, report, agree, nodes, try_parse_cpulist):
        """lscpu and numactl -H describe the machine running them: each parses, and they agree with each other
        (and with sysfs when it is the machine's own)."""
        lscpu = self.captures.get("lscpu", (None, None))
        numactl = self.captures.get("numactl", (None, None))
        from_lscpu = from_numactl = None
        if lscpu[0] == 0:
            from_lscpu = dict((int(match.group(1)), try_parse_cpulist(match.group(2)))
                              for match in re.finditer(r"^NUMA node(\d+) CPU\(s\):\s*(.*)$", lscpu[1], re.M))
            report["parses"].append({"capture": "lscpu.txt", "parser": "NUMA node CPU(s) lines, cpulist.parse_cpulist",
                                     "ok": bool(from_lscpu) and None not in from_lscpu.values(), "items": len(from_lscpu)})
        if numactl[0] == 0:
            from_numactl = dict((int(match.group(1)), sorted(int(cpu) for cpu in match.group(2).split()))
                                for match in re.finditer(r"^node (\d+) cpus:(.*)$", numactl[1], re.M))
            report["parses"].append({"capture": "numactl_H.txt", "parser": "node N cpus lines", "ok": bool(from_numactl), "items": len(from_numactl)})
        # CPU-less nodes: lscpu prints an empty list, numactl -H an empty line; both mean no CPUs.
        if from_lscpu and from_numactl:
            agree("lscpu and numactl -H: each NUMA node's CPUs", dict((node, cpus or []) for node, cpus in from_lscpu.items()),
                  from_numactl, "observations")
        if from_numactl and self.root == "/":
            agree("numactl -H and sysfs: each NUMA node's CPUs", from_numactl, dict((node["id"], node["cpus"]) for node in nodes), "observations")

    # ---- the baseline

    def step_baseline(self, record):
        if self.facts is None and "facts" in self.skip:
            self.read_facts()
        if self.facts is None:
            raise Skipped("the facts module gave no topology to measure")
        rc, _out, err, _seconds = self.run(self.argv_of("libcuda"), 30)
        loadable = rc == 0
        record["libcuda"] = "loadable" if loadable else "not loadable: %s" % ((err or "").strip().splitlines() or ["exit code %s" % rc])[-1]
        gpus = self.facts.get("gpus") or []
        # With a driver, one call per GPU so that the budget can stop between them; without one, one call
        # says why every figure is skipped.
        groups = [[gpu] for gpu in gpus] if loadable else [gpus]
        calls, not_measured, errors, checks, seen = [], [], [], [], set()
        reserve = 0 if "audit" in self.skip else AUDIT_RESERVE_S
        for group in groups:
            indexes = ", ".join(str(gpu["index"]) for gpu in group)
            # Without a driver the one call only says why; it takes a second.
            if loadable and self.left() - reserve < BASELINE_GPU_S:
                not_measured.extend(gpu["index"] for gpu in group)
                continue
            self.payload("gpu_baseline", {"node": self.machine["hostname"], "topology": dict(self.facts, gpus=group)})
            try:
                call = self.run_module("baseline_module", self.left() - reserve)
            except Problem as problem:
                errors.append("GPU %s: %s" % (indexes, problem))
                continue
            calls.append(call)
            if call.get("failed"):
                errors.append("GPU %s: gpu_baseline failed: %s" % (indexes, call.get("msg")))
                continue
            for item in call["document"]["checks"]:
                if item["id"] not in seen:
                    seen.add(item["id"])
                    checks.append(item)
        result = {"calls": calls, "checks": checks, "not_measured_gpus": not_measured, "errors": errors, "libcuda": record["libcuda"],
                  "settings": BASELINE, "persistence_mode": dict((gpu["index"], gpu.get("persistence_mode")) for gpu in gpus)}
        record["files"].append(self.write_json("baseline/gpu_baseline.json", result))
        record["verdicts"] = dict((verdict, sum(1 for item in checks if item["verdict"] == verdict)) for verdict in ("PASS", "WARN", "SKIP"))
        if errors:
            raise Problem("; ".join(errors))
        if not loadable:
            record["reason"] = "libcuda.so.1 %s: every figure is a SKIP" % record["libcuda"]
        elif not_measured:
            record["reason"] = "the time budget stopped it before GPU(s) %s" % ", ".join(str(index) for index in not_measured)

    # ---- the audit

    def step_audit(self, record):
        controller = os.path.join(self.here, "controller")
        if not os.path.isdir(controller):
            raise Skipped("the bundle carries no ansible-core (%s is missing)" % controller)
        if sys.version_info < CONTROLLER_PYTHON:
            raise Skipped("Python %s is older than %d.%d, the oldest the bundled ansible-core %s runs its controller on" % (
                platform.python_version(), CONTROLLER_PYTHON[0], CONTROLLER_PYTHON[1], self.bundle.get("ansible_core", "")))
        if self.left() < AUDIT_RESERVE_S:
            raise Skipped("%d s of the %d s budget were left, fewer than the %d s it needs" % (self.left(), self.budget, AUDIT_RESERVE_S))
        host = self.machine["hostname"]
        report_dir = self.path("audit", "report")
        record["files"].append(self.write("audit/inventory.ini", "[gpu_nodes]\n%s ansible_connection=local ansible_python_interpreter=%s "
                                          "ansible_become=false\n" % (host, self.python)))
        record["files"].append(self.write_json("audit/extra-vars.json", {"audit_report_dir": report_dir,
                                                                         "audit_baseline_dir": self.path("audit", "baselines")}))
        home = os.path.join(self.work, "ansible-home")
        os.makedirs(home, exist_ok=True)
        config = os.path.join(self.work, "ansible.cfg")
        with open(config, "w", encoding="utf-8") as handle:
            handle.write("[defaults]\nretry_files_enabled = false\n")
        env = self.environment({"PYTHONPATH": controller, "HOME": home, "ANSIBLE_HOME": home, "ANSIBLE_CONFIG": config,
                                "ANSIBLE_COLLECTIONS_PATH": os.path.join(self.here, "collections"),
                                "ANSIBLE_LOCAL_TEMP": os.path.join(self.work, "ansible-local"),
                                "ANSIBLE_REMOTE_TMP": os.path.join(self.work, "ansible-remote"),
                                "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8",
                                "PYTHONUTF8": "1"})
        argv = self.argv_of("audit")
        # ansible-core 2.21 serves its workers over a Unix socket made under TMPDIR, whose path may not pass 107
        # bytes: a deep OUT would stop it ("Local RPC server did not start"). A short folder of its own, removed after.
        short_tmp = tempfile.mkdtemp(prefix="gpuops-dc-", dir="/tmp" if os.path.isdir("/tmp") else None)
        env["TMPDIR"] = short_tmp
        try:
            rc, out, err, seconds = self.run(argv, self.left() - 10, env=env)
        finally:
            shutil.rmtree(short_tmp, ignore_errors=True)
        record["files"].append(self.write("audit/ansible-playbook.log", "$ %s\n%s%s" % (shlex.join(argv), out, err)))
        document = self._read_json(os.path.join(report_dir, "nodes", "%s.json" % host))
        summary = {"status": "ran", "exit_code": rc, "seconds": round(seconds, 1), "argv": argv,
                   "node_summary": (document or {}).get("summary"),
                   "fails": [dict((key, item.get(key)) for key in ("id", "expected", "actual", "reason"))
                             for item in (document or {}).get("checks", []) if item.get("verdict") == "FAIL"]}
        record["files"].append(self.write_json("audit/audit.json", summary))
        record["summary"] = summary["node_summary"]
        record["reason"] = "the report: audit/report/fleet.html"
        if rc is None:
            raise Problem("ansible-playbook ran past the budget and was stopped (audit/ansible-playbook.log)")
        if rc != 0 or document is None:
            raise Problem("ansible-playbook exited with %s%s (audit/ansible-playbook.log)" % (
                rc, "" if document else " and wrote no node document"))

    # ----------------------------------------------------------------- the tables

    def figures(self):
        rows = []
        timings = self._read_json(self.path("facts", "timings.json")) or {}
        if "median_s" in timings:
            medians = timings["median_s"]
            rows.append(("gpu_numa_facts module, median of %d runs" % timings["runs"], "%.3f s" % medians["module"],
                         "its AnsiballZ payload, Python %s, check mode (min %.3f, max %.3f)" % (
                             timings["python"].split()[0], timings["min_s"]["module"], timings["max_s"]["module"])))
            rows.append(("bare `nvidia-smi -q -x`, median of %d runs" % timings["runs"], "%.3f s" % medians["nvidia_smi_q_x"],
                         "output discarded (min %.3f, max %.3f)" % (timings["min_s"]["nvidia_smi_q_x"], timings["max_s"]["nvidia_smi_q_x"])))
            rows.append(("**module ÷ bare `-q -x`**", "**%.2f×**" % timings["ratio"], "target ≤ %.1f×: %s" % (
                TARGET_RATIO, "met" if timings["ratio"] <= TARGET_RATIO else "not met")))
            rows.append(("bare `nvidia-smi topo -m`, median of %d runs" % timings["runs"], "%.3f s" % medians["nvidia_smi_topo_m"],
                         "the module runs it beside `-q -x`, so its wall time is at least the slower of the two"))
        baseline = self._read_json(self.path("baseline", "gpu_baseline.json")) or {}
        skipped = {}
        for item in baseline.get("checks", []):
            if item["verdict"] == "SKIP":
                skipped.setdefault(item["reason"], []).append(item["id"])
            else:
                rows.append((item["title"], item["actual"] if item["verdict"] == "PASS" else "%s: %s" % (item["verdict"], item["actual"]),
                             item["reason"]))
        for reason, ids in sorted(skipped.items()):
            gpus = sorted(set(int(match.group(1)) for match in (re.match(r"^baseline\.gpu(\d+)\.", check_id) for check_id in ids) if match))
            rows.append(("baseline: %d figure(s) not measured%s" % (len(ids), ", GPU %s" % ", ".join(map(str, gpus)) if gpus else ""),
                         "SKIP", reason))
        audit = self._read_json(self.path("audit", "audit.json")) or {}
        if audit.get("node_summary"):
            rows.append(("audit (check mode)", ", ".join("%s %s" % (count, verdict) for verdict, count in sorted(audit["node_summary"].items())),
                         "FAIL: " + ", ".join(item["id"] for item in audit["fails"]) if audit["fails"] else "no FAIL"))
        machine = self.machine
        gpus = machine.get("gpus") or []
        lines = [
            "# Device check: %s, %s" % (machine.get("hostname"), machine.get("started", "")[:10]),
            "",
            "- Machine: %s, Linux %s (%s), %s" % (machine.get("hostname"), machine.get("kernel"), machine.get("architecture"), machine.get("os")),
            "- GPUs: %s; driver %s, CUDA %s" % (", ".join("%dx %s" % (gpus.count(name), name) for name in sorted(set(gpus))) or "none",
                                                machine.get("driver_version"), machine.get("cuda_version")),
            "- Python: %s (%s); bundle: gpuops.hardening %s, ansible-core %s, built %s from %s" % (
                machine.get("python"), machine.get("python_path"), self.bundle.get("collection_version"), self.bundle.get("ansible_core"),
                self.bundle.get("built"), self.bundle.get("commit")),
            "- Read-only: no GPU setting changed, modules in check mode, nothing written outside this folder",
            "",
            "| Figure | Value | Note |",
            "|---|---|---|",
        ]
        lines.extend("| %s | %s | %s |" % tuple(cell.replace("|", "\\|") for cell in row) for row in rows)
        lines.extend(["", "| Step | Status | Seconds | Detail |", "|---|---|---|---|"])
        for record in self.records:
            lines.append("| %s | %s | %.1f | %s |" % (record["step"], record["status"], record["seconds"], (record["reason"] or "").replace("|", "\\|")))
        return "\n".join(lines) + "\n"

    def execute(self):
        if os.path.isdir(self.out) and os.listdir(self.out):
            raise SystemExit("device-check: %s is not empty; give a new or empty folder" % self.out)
        os.makedirs(os.path.join(self.work, "tmp"), exist_ok=True)
        self.log_handle = open(self.path("device-check.log"), "w", encoding="utf-8")  # pylint: disable=consider-using-with
        try:
            self.say("writing to %s, budget %d s" % (self.out, self.budget))
            for name in STEPS:
                self.step(name, getattr(self, "step_" + name))
            self.machine["finished"] = now_utc().isoformat()
            self.write_json("machine.json", self.machine)
            self.write("figures.md", self.figures())
            failed = [record["step"] for record in self.records if record["status"] == "failed"]
            shutil.rmtree(self.work, ignore_errors=True)
            summary = {"result": "failed" if failed else "passed", "failed_steps": failed, "steps": self.records,
                       "seconds": round(time.monotonic() - self.started, 1)}
            self.say("%s in %.0f s%s; the table is %s" % (summary["result"], summary["seconds"],
                                                          " (failed: %s)" % ", ".join(failed) if failed else "", self.path("figures.md")))
            summary["files"] = sorted(os.path.relpath(os.path.join(folder, name), self.out)
                                      for folder, _dirs, names in os.walk(self.out) for name in names) + ["summary.json"]
            self.write_json("summary.json", summary)
            return 1 if failed else 0
        finally:
            self.log_handle.close()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="device_check.py", description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("out", help="the output folder (new or empty)")
    parser.add_argument("--root", default="/", help="the tree /sys and /proc are read below (an emulated node's, in tests); default /")
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="timed runs of the facts module and of bare nvidia-smi (default %d)" % DEFAULT_RUNS)
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET_S, help="seconds the whole check may take (default %d)" % DEFAULT_BUDGET_S)
    parser.add_argument("--skip", action="append", choices=SKIPPABLE, help="leave a step out, recorded as skipped (repeatable)")
    options = parser.parse_args(argv)
    if not os.path.isfile(os.path.join(os.path.dirname(os.path.abspath(__file__)), "bundle.json")):
        raise SystemExit("device-check: run the bundle's copy of this script: scripts/device-check.sh OUT (in a checkout with "
                         ".venv it builds build/device-check first; scripts/device_check_bundle.py builds one anywhere)")
    if sys.version_info < MIN_PYTHON:
        raise SystemExit("device-check: Python %s is too old; it needs %d.%d or later" % (platform.python_version(), *MIN_PYTHON))
    if options.runs < 1:
        parser.error("--runs takes 1 or more")
    out = os.path.realpath(options.out)
    if out == "/etc" or out.startswith("/etc/"):
        parser.error("%s is under /etc, where the check writes nothing" % out)
    return Check(options).execute()


if __name__ == "__main__":
    sys.exit(main())
