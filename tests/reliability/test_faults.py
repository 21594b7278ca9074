# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Faults end to end on a converged lab node: each run fails with a message that names
the cause, and the managed files and the emulated GPUs are as they were before it.

Covered elsewhere, so not here: a failed or refused GPU reset and nvidia-drm holding
the GPUs (molecule/default/tests/test_mig.py), a hidden GPU holder (test_mig.py), a
masked nvidia-persistenced (test_persistenced_masked.py), faults that clear after N
tries (tests/unit/gpu_emulator/test_emulator_fault_counts.py).
"""

from __future__ import annotations

import json
import os

import pytest

import lab

NODE = "rel-fault-1"
SPEC = {NODE: {"gpuops_gpu_profile": "l40s_4x", "gpuops_lab_persistenced_unit": "ubuntu", "gpuops_profile": "training"}}
PLAYS = os.path.join("molecule", "default", "plays")
# Every file the roles manage lives under these; their checksums must not move.
MANAGED_DIRS = ["/etc/sysctl.d", "/etc/security/limits.d", "/etc/systemd", "/etc/docker"]
DAEMON_JSON = "/etc/docker/daemon.json"
SYSCTL_FILE = "/etc/sysctl.d/90-gpuops-hardening.conf"
# A value no profile sets, so that the sysctl role has to rewrite its file.
CHANGED_SYSCTL = {"sysctl_settings": {"vm.max_map_count": 1048577}}


def _sh(script, check=True):
    return lab.docker_exec(NODE, "sh", "-c", script, check=check)


def _checksums():
    """{path: sha256} of every managed file and link target, plus the emulated GPUs' state."""
    listing = _sh("find %s \\( -type f -o -type l \\) -printf '%%p %%l\\n' | sort; "
                  "find %s -type f -exec sha256sum {} + | sort -k2" % (" ".join(MANAGED_DIRS), " ".join(MANAGED_DIRS)))
    state = json.loads(_sh("cat /var/lib/gpuemu/state.json"))
    # The log and boot counters grow with every read; the GPUs themselves must not change.
    return listing, json.dumps(state["gpus"], sort_keys=True)


def _set_faults(**faults):
    script = ("import json, sys\nfrom gpuemu import state\n"
              "with state.editing('/var/lib/gpuemu/state.json') as current:\n"
              "    current['faults'].update(json.loads(sys.argv[1]))\n")
    lab.docker_exec(NODE, "sh", "-c", 'cd /opt/gpuemu && python3 -c "$0" "$1"', script, json.dumps(faults))


def _run(play, extra_vars=None):
    """The output of a run that must fail, its lines unwrapped (the YAML callback folds messages)."""
    rc, output = lab.run_playbook(inventory_path(), play, limit=NODE, extra_vars=extra_vars, timeout=300)
    assert rc != 0, output
    return " ".join(output.split())


_INVENTORY = {}


def inventory_path():
    return _INVENTORY["path"]


@pytest.fixture(scope="module", autouse=True)
def converged_node(tmp_path_factory):
    try:
        _INVENTORY["path"] = lab.start_nodes(SPEC, tmp_path_factory.mktemp("faults"))
        # Only what the faults meet converged (a whole site.yml is slow on a busy host):
        # persistenced, whose no-op run reads nvidia-smi, and an earlier sysctl file.
        rc, output = lab.run_playbook(inventory_path(), os.path.join(PLAYS, "persistenced_alone.yml"), limit=NODE)
        assert rc == 0, output
        _sh("printf 'vm.max_map_count = 262144\\n' > %s" % SYSCTL_FILE)
        yield
    finally:
        lab.stop_nodes(SPEC)


@pytest.mark.parametrize("fault, timeout, expected", [
    ({"missing": ["nvidia-smi"]}, 60, "failed with exit code 127: nvidia-smi: command not found"),
    ({"exit": {"nvidia-smi": {"rc": 3, "stderr": "Unable to determine the device handle for GPU0000:01:00.0: Unknown Error"}}},
     60, "failed with exit code 3: Unable to determine the device handle for GPU0000:01:00.0: Unknown Error"),
    # Short, but not so short that the emulator's start on a busy host counts as a hang.
    ({"hang": ["nvidia-smi"]}, 8,
     "did not finish within 8 seconds (the module's timeout option, set by the role variable persistenced_timeout)"),
], ids=["missing", "exit", "hang"])
def test_a_failing_nvidia_smi_is_named_and_changes_nothing(fault, timeout, expected):
    before = _checksums()
    _set_faults(**fault)
    try:
        output = _run(os.path.join(PLAYS, "persistenced_alone.yml"), {"persistenced_timeout": timeout})
    finally:
        _set_faults(missing=[], exit={}, hang=[])
    assert "nvidia-smi" in output and expected in output, output
    assert _checksums() == before


def test_an_invalid_daemon_json_is_named_with_its_line_and_left_untouched():
    # The node's own daemon.json (the stand-in Docker's), if any, comes back afterwards.
    _sh("mkdir -p /etc/docker && (cp -a {0} /tmp/daemon.json.saved 2>/dev/null || true) && "
        "printf '{{\\n  \"log-driver\": \"json-file\",\\n}}\\n' > {0}".format(DAEMON_JSON))
    try:
        before = _checksums()
        output = _run(os.path.join(PLAYS, "memlock_alone.yml"))
        assert "%s is not valid JSON" % DAEMON_JSON in output and "line 3 column 1 (char 31)" in output, output
        assert "left untouched" in output, output
        assert _checksums() == before
    finally:
        _sh("rm -f {0} && (mv /tmp/daemon.json.saved {0} 2>/dev/null || true)".format(DAEMON_JSON))


@pytest.fixture
def read_only_etc():
    # Lab containers have CAP_SYS_ADMIN: a read-only bind of /etc over itself.
    _sh("mount --bind /etc /etc && mount -o remount,ro,bind /etc")
    try:
        yield
    finally:
        _sh("umount /etc")


@pytest.mark.parametrize("play, extra_vars, path", [
    (lab.SITE, CHANGED_SYSCTL, SYSCTL_FILE),
    (os.path.join(PLAYS, "memlock_alone.yml"), {"memlock_limit": 1048576}, "/etc/security/limits.d/"),
    (os.path.join(PLAYS, "thp_alone.yml"), {"thp_enabled": "madvise"}, "/etc/systemd/system/"),
], ids=["site-sysctl", "memlock", "thp"])
def test_a_read_only_etc_fails_naming_the_path_and_changes_nothing(read_only_etc, play, extra_vars, path):
    before = _checksums()
    output = _run(play, extra_vars)
    assert "could not write %s" % path in output and "Read-only file system" in output, output
    assert "Traceback" not in output, output
    assert _checksums() == before


@pytest.fixture
def full_sysctl_d():
    """/etc/sysctl.d on a small tmpfs holding its files, then filled to the last block."""
    _sh("cp -a /etc/sysctl.d /tmp/sysctl.d.saved && mount -t tmpfs -o size=64k tmpfs /etc/sysctl.d && "
        "cp -a /tmp/sysctl.d.saved/. /etc/sysctl.d/ && (dd if=/dev/zero of=/etc/sysctl.d/.filler bs=4k || true)")
    try:
        yield
    finally:
        _sh("umount /etc/sysctl.d && rm -rf /tmp/sysctl.d.saved")


def test_a_full_disk_keeps_the_old_file_and_leaves_no_temporary(full_sysctl_d):
    before = _sh("sha256sum %s" % SYSCTL_FILE)
    output = _run(lab.SITE, CHANGED_SYSCTL)
    assert "could not write %s" % SYSCTL_FILE in output and "No space left on device" in output, output
    assert _sh("sha256sum %s" % SYSCTL_FILE) == before
    assert _sh("ls -A /etc/sysctl.d | grep '^.gpuops-' || true") == ""


@pytest.fixture
def masked():
    """systemctl mask of the units a test names; unmasked (and the stand-in Docker started) afterwards."""
    units = []

    def mask(unit):
        units.append(unit)
        _sh("systemctl mask %s" % unit)
    yield mask
    for unit in units:
        _sh("systemctl unmask %s" % unit)
    _sh("systemctl start docker.service")


def test_a_masked_mps_unit_is_refused_naming_the_mask_and_changes_nothing(masked):
    # Masked before MPS was ever installed: writing the unit would have replaced the link and lifted the mask.
    unit = "/etc/systemd/system/gpuops-mps-all.service"
    masked("gpuops-mps-all.service")
    before = _checksums(), _sh("sha256sum /etc/group /etc/gshadow")
    output = _run(os.path.join(PLAYS, "mps_alone.yml"), {"mps_state": "present"})
    assert "MPS daemon unit is masked (%s -> /dev/null), nothing was changed" % unit in output, output
    assert (_checksums(), _sh("sha256sum /etc/group /etc/gshadow")) == before
    assert _sh("readlink %s" % unit).strip() == "/dev/null"


def test_a_masked_docker_gets_no_memlock_dropin_and_the_run_stays_idempotent(masked):
    masked("docker.service")
    for attempt in (1, 2):
        rc, output = lab.run_playbook(inventory_path(), os.path.join(PLAYS, "memlock_alone.yml"), limit=NODE)
        assert rc == 0, output
        assert attempt == 1 or lab.recap(output, NODE)["changed"] == 0, output
    assert _sh("ls /etc/systemd/system/docker.service.d 2>/dev/null || true") == ""
    assert _sh("readlink /etc/systemd/system/docker.service").strip() == "/dev/null"
