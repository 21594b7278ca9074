# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/audit.yml on the converged lab: read-only, the same with and without --check, and right.

gpu-infer keeps a local sysctl file (prepare.yml) that sets vm.swappiness=10
after the collection's file, so the next boot undoes the tuning: its boot check
must FAIL. gpu-train must run CUDA 13.0 (inventory), which its driver is too old
for. gpu-mig is fully tuned until a test takes one GPU's MIG instances away.
The first run's report stays in .lab/audit-report for the browser test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from lab_gpus import SET_FAULTS
from lab_playbook import REPO_ROOT, run_playbook

NODES = ("gpu-infer", "gpu-mig", "gpu-train")
REPORT_DIR = os.path.join(REPO_ROOT, ".lab", "audit-report")
CHECK_REPORT_DIR = os.path.join(REPO_ROOT, ".lab", "audit-report-check")
DRIFT_REPORT_DIR = os.path.join(REPO_ROOT, ".lab", "audit-report-drift")
FAULT_REPORT_DIR = os.path.join(REPO_ROOT, ".lab", "audit-report-fault")
BASELINE_DIR = os.path.join(REPO_ROOT, ".lab", "audit-baselines")
LOCAL_SYSCTL_FILE = "/etc/sysctl.d/99-zz-local.conf"
DRIFT_GPU = 3

# Every file under /etc, the emulated GPUs' state, and the live values the roles manage.
SNAPSHOT = r"""
import hashlib, json, os, subprocess
def digest(path):
    with open(path, 'rb') as handle:
        return hashlib.sha256(handle.read()).hexdigest()
etc = {}
for root, dirs, files in os.walk('/etc'):
    dirs.sort()
    for name in sorted(files + [d for d in dirs if os.path.islink(os.path.join(root, d))]):
        path = os.path.join(root, name)
        if os.path.islink(path):
            etc[path] = 'link ' + os.readlink(path)
        elif os.path.isfile(path):
            st = os.stat(path)
            etc[path] = '%s %o %d:%d' % (digest(path), st.st_mode, st.st_uid, st.st_gid)
live = {'gpuemu': digest('/var/lib/gpuemu/state.json')}
paths = ['/proc/swaps'] + ['/proc/sys/' + key.replace('.', '/') for key in (
    'vm.swappiness', 'kernel.numa_balancing', 'vm.zone_reclaim_mode', 'vm.max_map_count',
    'vm.dirty_background_bytes', 'vm.dirty_bytes')]
paths += ['/sys/kernel/mm/transparent_hugepage/' + name for name in ('enabled', 'defrag', 'khugepaged/defrag')]
for path in paths:
    with open(path) as handle:
        live[path] = handle.read()
units = subprocess.run(['systemctl', 'list-units', '--all', '--plain', '--no-legend', '--no-pager',
                        'nvidia-persistenced.service', 'gpuops-*', 'docker.service', 'nvidia-dcgm.service'],
                       capture_output=True, text=True).stdout.split('\n')
for line in sorted(filter(None, units)):
    name = line.split()[0]
    live[name] = subprocess.run(['systemctl', 'show', '-p', 'ActiveState,SubState,MainPID,UnitFileState', name],
                                capture_output=True, text=True).stdout
print(json.dumps({'etc': etc, 'live': live}))
"""


def snapshot(node):
    out = subprocess.run(["docker", "exec", node, "python3", "-c", SNAPSHOT], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def audit(limit, report_dir, *extra, check_mode=False):
    shutil.rmtree(report_dir, ignore_errors=True)
    extra_vars = {"audit_report_dir": report_dir, "audit_baseline_dir": BASELINE_DIR}
    for item in extra:
        extra_vars.update(item)
    return run_playbook("playbooks/audit.yml", limit, extra_vars, flags=["--check"] if check_mode else [])


def node_documents(report_dir):
    documents = {}
    for node in NODES:
        with open(os.path.join(report_dir, "nodes", node + ".json"), encoding="utf-8") as handle:
            documents[node] = json.load(handle)
    return documents


def by_id(document):
    return dict((item["id"], item) for item in document["checks"])


@pytest.fixture(scope="module")
def audits():
    """The audit twice on every node, plainly then with --check, with the node state read before and after."""
    before = dict((node, snapshot(node)) for node in NODES)
    plain = audit(",".join(NODES), REPORT_DIR, {"audit_save_baseline": "lab-converged", "audit_fail_on_fail": True})
    checked = audit(",".join(NODES), CHECK_REPORT_DIR, {"audit_fail_on_fail": True}, check_mode=True)
    after = dict((node, snapshot(node)) for node in NODES)
    return {"before": before, "after": after, "plain": plain, "checked": checked}


def test_the_audit_changes_nothing_on_any_node(audits):
    for node in NODES:
        before, after = audits["before"][node], audits["after"][node]
        changed_files = sorted(path for path in set(before["etc"]) | set(after["etc"])
                               if before["etc"].get(path) != after["etc"].get(path))
        assert changed_files == [], (node, changed_files)
        assert before["live"] == after["live"], node


def test_the_results_are_the_same_with_and_without_check(audits):
    assert node_documents(REPORT_DIR) == node_documents(CHECK_REPORT_DIR)
    for node in NODES:
        assert node_documents(REPORT_DIR)[node]["error"] is None


def test_the_boot_conflict_fails_and_names_the_file(audits):
    swappiness = by_id(node_documents(REPORT_DIR)["gpu-infer"])["sysctl.boot.vm.swappiness"]
    assert swappiness["verdict"] == "FAIL", swappiness
    assert LOCAL_SYSCTL_FILE in swappiness["actual"] and swappiness["actual"].startswith("10 from ")


def test_what_the_roles_set_passes_and_what_a_container_cannot_apply_warns(audits):
    documents = node_documents(REPORT_DIR)
    for node in NODES:
        checks = by_id(documents[node])
        for check_id in ("sysctl.boot.vm.dirty_bytes", "thp.boot", "memlock.login", "memlock.files", "persistence.daemon",
                         "persistence.gpu0", "mps.daemons" if node != "gpu-infer" else "mps.daemon.infer-a",
                         "swap.fstab", "swap.units"):
            assert checks[check_id]["verdict"] == "PASS", (node, checks[check_id])
        live = checks["thp.live.enabled"]
        assert live["verdict"] in ("PASS", "WARN"), live
        if live["verdict"] == "WARN":
            assert "container" in live["reason"], live
    mig = by_id(documents["gpu-mig"])
    for gpu in (1, 2, 3):
        assert mig["mig.layout.gpu%d" % gpu]["verdict"] == "PASS", mig["mig.layout.gpu%d" % gpu]


def test_fabric_manager_passes_on_the_nvswitch_nodes_and_is_skipped_on_the_pcie_node(audits):
    documents = node_documents(REPORT_DIR)
    for node in ("gpu-train", "gpu-mig"):
        checks = by_id(documents[node])
        for check_id in ("fabricmanager.version", "fabricmanager.daemon", "fabricmanager.order"):
            assert checks[check_id]["verdict"] == "PASS", (node, checks[check_id])
    # The H100s report their fabric; the A100s' boards leave it to Fabric Manager.
    assert by_id(documents["gpu-train"])["hardware.gpu0.fabric"]["verdict"] == "PASS"
    skipped = by_id(documents["gpu-infer"])["fabricmanager.daemon"]
    assert skipped["verdict"] == "SKIP" and skipped["reason"].startswith("no NVSwitch on this node"), skipped


def test_the_preflight_flags_a_driver_too_old_for_cuda_13(audits):
    checks = by_id(node_documents(REPORT_DIR)["gpu-train"])
    assert checks["driver.cuda.13.0"]["verdict"] == "FAIL", checks["driver.cuda.13.0"]
    assert "580" in checks["driver.cuda.13.0"]["expected"]
    # The H100s' driver is also below their MIG floor; MIG is not in use there, so it warns.
    assert checks["driver.mig_floor.gpu0"]["verdict"] == "WARN", checks["driver.mig_floor.gpu0"]


def test_fail_on_fail_fails_exactly_the_nodes_with_a_fail_and_names_their_checks(audits):
    for name in ("plain", "checked"):
        rc, output = audits[name]
        assert rc != 0, output
        assert "gpu-infer fails the audit: " in output and "sysctl.boot.vm.swappiness" in output, output
        assert "gpu-train fails the audit: " in output and "driver.cuda.13.0" in output, output
        assert "gpu-mig fails the audit" not in output, output


def test_the_fleet_files_and_the_baseline_are_written(audits):
    with open(os.path.join(REPORT_DIR, "fleet.json"), encoding="utf-8") as handle:
        fleet = json.load(handle)
    assert sorted(entry["node"] for entry in fleet["nodes"]) == sorted(NODES)
    assert fleet["totals"]["FAIL"] >= 2
    with open(os.path.join(REPORT_DIR, "fleet.html"), encoding="utf-8") as handle:
        assert "gpu-infer" in handle.read()
    with open(os.path.join(BASELINE_DIR, "lab-converged.json"), encoding="utf-8") as handle:
        assert sorted(json.load(handle)["nodes"]) == sorted(NODES)


def _docker(node, *argv):
    return subprocess.run(["docker", "exec", node] + list(argv), capture_output=True, text=True, check=True).stdout


def test_a_mig_layout_drift_fails_and_shows_as_a_change_since_the_baseline(audits):
    _docker("gpu-mig", "nvidia-smi", "mig", "-i", str(DRIFT_GPU), "-dci")
    _docker("gpu-mig", "nvidia-smi", "mig", "-i", str(DRIFT_GPU), "-dgi")
    try:
        rc, output = audit("gpu-mig", DRIFT_REPORT_DIR, {"audit_compare_baseline": "lab-converged"})
        assert rc == 0, output
        layout = by_id(json.load(open(os.path.join(DRIFT_REPORT_DIR, "nodes", "gpu-mig.json"), encoding="utf-8")))[
            "mig.layout.gpu%d" % DRIFT_GPU]
        assert layout["verdict"] == "FAIL" and layout["actual"].startswith("drifted: 0 instance(s) to destroy, 3 to create"), layout
        with open(os.path.join(DRIFT_REPORT_DIR, "fleet.json"), encoding="utf-8") as handle:
            comparison = json.load(handle)["comparison"]
        assert comparison["baseline"] == "lab-converged"
        changes = dict((item["id"], item) for item in comparison["nodes"]["gpu-mig"]["checks"])
        assert changes["mig.layout.gpu%d" % DRIFT_GPU]["before"]["verdict"] == "PASS"
        assert changes["mig.layout.gpu%d" % DRIFT_GPU]["after"]["verdict"] == "FAIL"
    finally:
        rc, output = run_playbook("molecule/default/plays/mig_alone.yml", "gpu-mig")
        assert rc == 0, output


def test_comparing_with_a_baseline_that_does_not_exist_fails_before_the_audit(audits):
    rc, output = audit("gpu-mig", DRIFT_REPORT_DIR, {"audit_compare_baseline": "never-saved"})
    assert rc != 0
    assert "audit_compare_baseline: got \"never-saved\"" in output, output
    assert "Read each role's state in check mode" not in output, output


def _set_faults(node, **faults):
    subprocess.run(["docker", "exec", "-w", "/opt/gpuemu", node, "python3", "-c", SET_FAULTS, json.dumps(faults)],
                   capture_output=True, text=True, check=True)


def test_every_converged_node_is_ready(audits):
    documents = node_documents(REPORT_DIR)
    assert dict((node, documents[node]["readiness"]) for node in NODES) == dict(
        (node, {"verdict": "ready", "reasons": []}) for node in NODES)
    with open(os.path.join(REPORT_DIR, "fleet.json"), encoding="utf-8") as handle:
        assert set(entry["readiness"] for entry in json.load(handle)["nodes"]) == {"ready"}
    for node in NODES:
        # The kernel log was read (through the emulator's dmesg shim) and holds no Xid: PASS, never an unknown SKIP.
        xids = [check for check in documents[node]["checks"] if check["id"].endswith(".xid")]
        assert xids and set(check["verdict"] for check in xids) == {"PASS"}, xids


@pytest.mark.parametrize("faults, check_id, verdict", [
    ({"remapped_rows": {"2": {"pending": True}}}, "hardware.gpu2.row_remap_pending", "reset"),
    ({"pcie_link": {"5": {"gen": 3, "width": 8}}}, "hardware.gpu5.pcie_width", "degraded"),
    ({"nvlink_down": {"1": [7]}}, "hardware.gpu1.nvlink", "degraded"),
    # The kernel log's Xids, through the dmesg shim: a GPU fallen off the bus, a double-bit ECC error.
    ({"xid": [{"gpu": 2, "xid": 79, "message": "GPU has fallen off the bus.", "time": 5107.644336}]},
     "hardware.gpu2.xid", "reboot"),
    ({"xid": [{"gpu": 4, "xid": 48, "time": 61.25,
               "message": "An uncorrectable double bit error (DBE) has been detected on GPU."}]},
     "hardware.gpu4.xid", "reset"),
])
def test_a_gpu_fault_gives_its_verdict_and_reason_and_goes_when_it_clears(audits, faults, check_id, verdict):
    """On gpu-train (8x H100 SXM): the fault's check leads the reasons; the other GPUs stay ready."""
    _set_faults("gpu-train", **faults)
    try:
        rc, output = audit("gpu-train", FAULT_REPORT_DIR)
        assert rc == 0, output
        with open(os.path.join(FAULT_REPORT_DIR, "nodes", "gpu-train.json"), encoding="utf-8") as handle:
            document = json.load(handle)
        assert document["readiness"]["verdict"] == verdict, document["readiness"]
        assert document["readiness"]["reasons"][0].startswith(check_id + ": "), document["readiness"]
        gpu = check_id.split(".")[1]
        assert all(reason.startswith("hardware.%s." % gpu) for reason in document["readiness"]["reasons"]), document
    finally:
        # Cleared as the emulator starts: no Xid event, no health fault.
        _set_faults("gpu-train", **dict((name, [] if isinstance(value, list) else {}) for name, value in faults.items()))
    rc, output = audit("gpu-train", FAULT_REPORT_DIR)
    assert rc == 0, output
    with open(os.path.join(FAULT_REPORT_DIR, "nodes", "gpu-train.json"), encoding="utf-8") as handle:
        assert json.load(handle)["readiness"]["verdict"] == "ready"


def _set_sysfs_faults(faults):
    """gpu-train's GPUDirect faults, written in place into the fake sysfs it has mounted (gpuemu sysfs-faults)."""
    subprocess.run(["python3", "-m", "gpuemu", "sysfs-faults", "--profile", "dgx_h100",
                    "--out", os.path.join(REPO_ROOT, ".lab", "sysfs", "dgx_h100"), "--faults", json.dumps(faults)],
                   cwd=os.path.join(REPO_ROOT, "tests", "gpu_emulator"), capture_output=True, text=True, check=True)


@pytest.mark.parametrize("faults, check_id", [
    ({"acs_redirect": ["3"]}, "hardware.gpu3.acs"),
    ({"iommu_type": {"6": "DMA-FQ"}}, "hardware.gpu6.iommu"),
    ({"peermem": "missing"}, "hardware.nvidia_peermem"),
])
def test_a_gpudirect_fault_degrades_the_node_naming_its_check_and_goes_when_it_clears(audits, faults, check_id):
    """On gpu-train (8x H100 SXM, a NIC behind each GPU's switch): the one reason is the fault's check."""
    _set_sysfs_faults(faults)
    try:
        rc, output = audit("gpu-train", FAULT_REPORT_DIR)
        assert rc == 0, output
        with open(os.path.join(FAULT_REPORT_DIR, "nodes", "gpu-train.json"), encoding="utf-8") as handle:
            document = json.load(handle)
        assert document["readiness"]["verdict"] == "degraded", document["readiness"]
        assert [reason.split(": ")[0] for reason in document["readiness"]["reasons"]] == [check_id]
    finally:
        _set_sysfs_faults({})
    rc, output = audit("gpu-train", FAULT_REPORT_DIR)
    assert rc == 0, output
    with open(os.path.join(FAULT_REPORT_DIR, "nodes", "gpu-train.json"), encoding="utf-8") as handle:
        document = json.load(handle)
    assert document["readiness"]["verdict"] == "ready"
    assert by_id(document)["hardware.nvidia_peermem"]["verdict"] == "PASS"
