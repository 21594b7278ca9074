# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia_mig resets a GPU whose MIG mode change is pending, or says why it cannot."""

from __future__ import annotations

import os

from ansible_collections.gpuops.hardening.plugins.module_utils import mig_converge
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.mig_node import LAYOUT, mig_layouts, run_mig

GPU2_BUS_ID = "0000:47:00.0"


def _faults(node, **faults):
    def change(state):
        state["faults"].update(faults)
    node.edit(change)


def test_a_pending_mode_change_is_reset_and_the_instances_follow_in_the_same_run(mig_node):
    node = mig_node(mig_gpus=(0,))
    result = run_mig(layouts=mig_layouts(g2=LAYOUT))
    assert not result["failed"], result["msg"]
    entry = result["gpus"][0]
    assert result["applied"] and not result["reboot_required"]
    assert entry["reset"] and not entry["pending"] and not entry["reset_required"] and not entry["reboot_required"]
    assert node.modes(2) == ("Enabled", "Enabled")
    assert sorted(i[1] for i in node.instances(2)) == ["1g.10gb", "1g.10gb", "3g.40gb"]
    assert node.ran("-r") == [["-i", "2", "-r"]]
    # The reset runs while the running GPU clients are stopped.
    assert node.unit_calls == ["stop nvidia-dcgm.service", "start nvidia-dcgm.service"]
    assert result["layouts"] == {"2": {"mig_enabled": True, "mig_devices": LAYOUT}}


def test_a_mode_change_left_pending_earlier_is_reset_now(mig_node):
    node = mig_node(mig_gpus=(0,))
    assert not run_mig(layouts=mig_layouts(g2=LAYOUT), reset=False)["failed"]
    assert node.modes(2) == ("Disabled", "Enabled")
    result = run_mig(layouts=mig_layouts(g2=LAYOUT))
    assert not result["failed"], result["msg"]
    assert result["changed"] and result["applied"] and node.modes(2) == ("Enabled", "Enabled")
    assert len(node.instances(2)) == 3


def test_without_a_sysfs_reset_the_mode_change_waits_for_a_reboot(mig_node):
    node = mig_node(mig_gpus=(0,))
    os.remove(os.path.join(node.root, "sys/bus/pci/devices", GPU2_BUS_ID, "reset"))
    result = run_mig(layouts=mig_layouts(g2=LAYOUT))
    assert not result["failed"], result["msg"]
    entry = result["gpus"][0]
    assert entry["pending"] and entry["reboot_required"] and not entry["reset_required"] and result["reboot_required"]
    assert "no sysfs reset file" in entry["reboot_reason"] and GPU2_BUS_ID in entry["reboot_reason"]
    assert not result["applied"] and any("needs a reboot" in w for w in result["warnings"])
    assert node.modes(2) == ("Disabled", "Enabled") and not node.ran("-r")


def test_a_demanding_user_gets_a_failed_task_and_nothing_destroyed(mig_node):
    node = mig_node(apply="reset")
    assert not run_mig(layouts=mig_layouts(g1=LAYOUT))["failed"]
    before = node.instances(1)
    os.remove(os.path.join(node.root, "sys/bus/pci/devices/0000:0f:00.0/reset"))
    result = run_mig(layouts={"1": {"mig_enabled": False}}, require_applied=True)
    assert result["failed"] and result["msg"].endswith("; nothing was changed")
    assert "GPU 1: its MIG mode change needs a reboot" in result["msg"] and not result["applied"]
    # MIG off needs the instances destroyed first: planning refused before any destroy.
    assert node.instances(1) == before and not node.ran("-dgi") and not node.ran("-mig")


def test_mig_off_without_a_reset_destroys_and_leaves_the_mode_to_a_reboot(mig_node):
    node = mig_node(apply="reset")
    assert not run_mig(layouts=mig_layouts(g1=LAYOUT))["failed"]
    os.remove(os.path.join(node.root, "sys/bus/pci/devices/0000:0f:00.0/reset"))
    result = run_mig(layouts={"1": {"mig_enabled": False}})
    assert not result["failed"], result["msg"]
    assert result["gpus"][0]["reboot_required"] and not result["applied"]
    assert node.instances(1) == [] and node.modes(1) == ("Enabled", "Disabled")


def test_nvidia_drm_with_users_blocks_the_reset_before_it_is_tried(mig_node):
    node = mig_node(mig_gpus=(0,))
    node.sysfs("module/nvidia_drm/refcnt", "0\n")
    node.sysfs("module/nvidia_drm/holders/nvidia_uvm_display")
    result = run_mig(layouts=mig_layouts(g2=LAYOUT))
    assert not result["failed"], result["msg"]
    assert "nvidia_drm is loaded and in use (nvidia_uvm_display)" in result["gpus"][0]["reboot_reason"]
    assert result["reboot_required"] and not node.ran("-r")


def test_nvidia_drm_refcnt_alone_blocks_the_reset(mig_node):
    node = mig_node(mig_gpus=(0,))
    node.sysfs("module/nvidia_drm/refcnt", "3\n")
    result = run_mig(layouts=mig_layouts(g2=LAYOUT), check_mode=True)
    assert "refcnt 3" in result["gpus"][0]["reboot_reason"] and result["gpus"][0]["reboot_required"]
    assert "no reset: nvidia_drm is loaded" in result["diff"][0]["after"]


def test_a_passthrough_gpu_that_cannot_be_reset_fails_clearly(mig_node):
    node = mig_node(apply="reboot", mig_gpus=(0,))
    result = run_mig(layouts=mig_layouts(g2=LAYOUT))
    assert result["failed"] and "GPU 2: the reset failed: Not Supported" in result["msg"]
    assert "passed through to a VM" in result["msg"] and result["reboot_required"]
    # Not Supported does not change on a second try.
    assert len(node.ran("-r")) == 1 and node.modes(2) == ("Disabled", "Enabled")
    assert node.units["nvidia-dcgm.service"]


def test_a_reset_that_fails_once_for_a_passing_client_is_retried(mig_node):
    node = mig_node(mig_gpus=(0,))
    _faults(node, reset_fail={"2": {"reason": "In use by another client", "times": 1}})
    result = run_mig(layouts=mig_layouts(g2=LAYOUT))
    assert not result["failed"], result["msg"]
    assert len(node.ran("-r")) == 2 and result["applied"] and len(node.instances(2)) == 3


def test_a_permanent_reset_failure_is_not_retried(mig_node):
    node = mig_node(mig_gpus=(0,))
    _faults(node, reset_fail={"2": {"reason": "Not Supported", "times": 1}})
    result = run_mig(layouts=mig_layouts(g2=LAYOUT))
    assert result["failed"] and "Not Supported" in result["msg"] and len(node.ran("-r")) == 1


def test_a_hidden_holder_that_keeps_the_reset_from_running_is_named(mig_node):
    node = mig_node(mig_gpus=(0,))
    _faults(node, gpu_busy=[2])
    result = run_mig(layouts=mig_layouts(g2=LAYOUT))
    assert result["failed"] and "In use by another client, and no compute process runs on it" in result["msg"]
    assert "(nvidia_drm, DCGM, dcgm-exporter, nvsm or another NVML monitor); add its service to gpu_clients" in result["msg"]
    assert result["reboot_required"] and result["gpus"][0]["reboot_required"] and len(node.ran("-r")) == 2


def test_compute_processes_keep_a_reset_from_running_and_are_listed(mig_node, monkeypatch):
    monkeypatch.setattr(mig_converge, "END_GRACE_SECONDS", 0.3)
    monkeypatch.setattr(mig_converge, "KILL_GRACE_SECONDS", 0.3)
    node = mig_node(mig_gpus=(0,))

    def add(state):
        api.add_process(state, gpu=2, pid=4242, name="python3", used_memory_mib=512)
    node.edit(add)
    refused = run_mig(layouts=mig_layouts(g2=LAYOUT))
    assert refused["failed"] and refused["msg"].endswith("; nothing was changed") and "pid 4242" in refused["msg"]
    assert not node.ran("-mig")
    # A process force cannot end (this one is only a row in the state) stops the change before it starts.
    forced = run_mig(layouts=mig_layouts(g2=LAYOUT), force=True)
    assert forced["failed"] and forced["msg"] == "GPU 2: force could not end pid 4242; nothing was changed on it"
    assert not node.ran("-r") and not node.ran("-mig")


def test_check_mode_shows_the_reset_and_returns_the_layouts(mig_node):
    node = mig_node(mig_gpus=(0,))
    result = run_mig(check_mode=True, layouts=mig_layouts(g2=LAYOUT))
    # The result the run would return: the reset applies the mode, the instances follow, DCGM is stopped around it.
    assert result["changed"] and result["applied"] and result["gpus"][0]["reset"]
    assert result["gpus"][0]["mig_enabled"] and not result["gpus"][0]["pending"]
    assert result["clients_stopped"] == ["nvidia-dcgm.service"] and node.unit_calls == []
    assert "mode: -> Enabled" in result["diff"][0]["after"]
    assert "reset GPU 2 (nvidia-smi -i 2 -r)" in result["diff"][0]["after"]
    # The instances that follow the reset are part of the plan.
    assert "create 3g.40gb at 0 (3g.40gb)" in result["diff"][0]["after"]
    assert sorted(c["profile"] for c in result["gpus"][0]["create"]) == ["1g.10gb", "1g.10gb", "3g.40gb"]
    assert result["layouts"] == {"2": {"mig_enabled": True, "mig_devices": LAYOUT}}
    assert node.modes(2) == ("Disabled", "Disabled") and not node.ran("-r") and not node.ran("-mig")


def test_an_unchanged_run_returns_the_layouts(mig_node):
    mig_node()
    assert not run_mig(layouts=mig_layouts(g0=LAYOUT))["failed"]
    again = run_mig(layouts=mig_layouts(g0=LAYOUT), require_applied=True)
    assert not again["changed"] and again["applied"] and not again["failed"]
    assert again["layouts"] == {"0": {"mig_enabled": True, "mig_devices": LAYOUT}}


def test_a_demanding_user_without_resets_fails_while_the_mode_is_pending(mig_node):
    node = mig_node(mig_gpus=(0,))
    first = run_mig(layouts=mig_layouts(g2=LAYOUT), reset=False, require_applied=True)
    assert first["failed"] and "the declared MIG layout was not reached: GPU 2" in first["msg"]
    assert first["gpus"][0]["reset_required"] and not first["applied"] and node.modes(2) == ("Disabled", "Enabled")
    # Nothing left to change, still pending: still a failure.
    again = run_mig(layouts=mig_layouts(g2=LAYOUT), reset=False, require_applied=True)
    assert again["failed"] and not again["changed"] and "waits for a GPU reset or a reboot" in again["msg"]


def test_clients_that_do_not_start_again_fail_the_task_with_the_gpus_reported(mig_node):
    node = mig_node(mig_gpus=(0,))
    node.failing_start.add("nvidia-dcgm.service")
    result = run_mig(layouts=mig_layouts(g2=LAYOUT))
    assert result["failed"] and "the MIG changes are made, but these GPU clients did not start again" in result["msg"]
    assert result["applied"] and len(node.instances(2)) == 3
