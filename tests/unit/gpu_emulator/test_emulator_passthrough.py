# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""settings.mig_mode_apply "reboot": a GPU passed through to a VM.

The MIG mode change prints the warning captured in a cloud VM; the reset it suggests
is not exposed to the guest (NVML nvmlDeviceSetMigMode: "VM reboot is required";
kubernetes-sigs/dra-driver-nvidia-gpu #883: --gpu-reset answers Not Supported), so
only a reboot applies the change.
"""

from __future__ import annotations

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit import real_captures
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import body_lines, single_gpu

VM_CAPTURE = "a100_40gb_vm_nvidia_smi_i0_mig_1_pending_enable_warning.txt"


def passthrough_vm(make_state):
    def edit(state):
        single_gpu("NVIDIA A100-SXM4-40GB", "0000:00:03.0")(state)
        state["settings"]["mig_mode_apply"] = "reboot"
    return make_state("a100_8x_mig", edit)


def test_mig_enable_prints_the_captured_vm_warning(make_state, smi):
    path = passthrough_vm(make_state)
    rc, out, _err = smi(path, "-i", "0", "-mig", "1")
    assert rc == 0
    assert body_lines(out) == body_lines(real_captures.load(VM_CAPTURE))
    assert api.read_state(path)["gpus"][0]["mig"] == {"current": "Disabled", "pending": "Enabled"}


def test_reset_is_not_supported_and_leaves_the_change_pending(make_state, smi):
    path = passthrough_vm(make_state)
    smi(path, "-i", "0", "-mig", "1")
    assert smi(path, "-i", "0", "-r") == (255, "The following GPUs could not be reset:\n  GPU 00000000:00:03.0: Not Supported\n", "")
    assert api.read_state(path)["gpus"][0]["mig"] == {"current": "Disabled", "pending": "Enabled"}


def test_only_a_reboot_applies_the_change(make_state, smi):
    path = passthrough_vm(make_state)
    smi(path, "-i", "0", "-mig", "1")
    api.reboot(path)
    rc, out, _err = smi(path, "-i", "0", "--query-gpu=mig.mode.current,mig.mode.pending", "--format=csv,noheader")
    assert (rc, out) == (0, "Enabled, Enabled\n")
    # Disabling again takes another reboot.
    smi(path, "-i", "0", "-mig", "0")
    assert smi(path, "-i", "0", "-r")[0] == 255
    api.reboot(path)
    assert api.read_state(path)["gpus"][0]["mig"] == {"current": "Disabled", "pending": "Disabled"}
