# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""faults.nvidia_drm "loaded": the display module holds the GPUs.

The reset failure is the one NVIDIA/mig-parted #181 shows (4 GPUs, plural text) and
ComputeCanada/puppet-magic_castle #387 (1 GPU); both go away once nvidia_drm is unloaded.
"""

from __future__ import annotations

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import enable_mig

USED_BY_OTHERS = ("currently being used by one or more other processes (e.g., Fabric Manager, CUDA application, "
                  "graphics application such as an X server, or a monitoring application such as another instance "
                  "of nvidia-smi). Please first kill all processes using")


def drm_loaded(state):
    state["faults"]["nvidia_drm"] = "loaded"


def test_reset_of_every_gpu_is_refused_with_the_plural_text(make_state, smi):
    path = make_state("a100_8x_mig", drm_loaded)
    rc, out, _err = smi(path, "-i", "0,1,2,3", "-r")
    assert rc == 255
    lines = out.splitlines()
    assert lines[0] == "The following GPUs could not be reset:"
    assert lines[1:5] == ["  GPU %s: In use by another client" % bus for bus in
                          ("00000000:07:00.0", "00000000:0F:00.0", "00000000:47:00.0", "00000000:4E:00.0")]
    assert lines[5] == ""
    assert lines[6] == "4 devices are " + USED_BY_OTHERS + " these devices and all compute applications running in the system."


def test_reset_of_one_gpu_uses_the_singular_text(make_state, smi):
    path = make_state("a100_8x_mig", drm_loaded)
    rc, out, _err = smi(path, "-i", "0", "-r")
    assert rc == 255
    assert out.splitlines()[-1] == "1 device is " + USED_BY_OTHERS + " this device and all compute applications running in the system."


def test_mig_mode_change_stays_pending_until_the_module_is_unloaded(make_state, smi):
    def edit(state):
        drm_loaded(state)
        state["settings"]["mig_mode_apply"] = "immediate"
    path = make_state("a100_8x_mig", edit)
    rc, out, _err = smi(path, "-i", "0", "-mig", "1")
    assert rc == 0
    assert out.splitlines()[0] == "Warning: MIG mode is in pending enable state for GPU 00000000:07:00.0:In use by another client"
    assert out.splitlines()[1].startswith("00000000:07:00.0 is currently being used by one or more other processes")
    assert api.read_state(path)["gpus"][0]["mig"] == {"current": "Disabled", "pending": "Enabled"}
    assert smi(path, "-i", "0", "-r")[0] == 255
    state = api.read_state(path)
    state["faults"]["nvidia_drm"] = None  # rmmod nvidia_drm
    api.write_state(state, path)
    assert smi(path, "-i", "0", "-r") == (0, "GPU 00000000:07:00.0 was successfully reset.\n", "")
    assert api.read_state(path)["gpus"][0]["mig"]["current"] == "Enabled"


def test_mig_instances_can_still_be_created(make_state, smi):
    def edit(state):
        drm_loaded(state)
        enable_mig(state, 0)
    path = make_state("a100_8x_mig", edit)
    rc, out, _err = smi(path, "mig", "-i", "0", "-cgi", "9", "-C")
    assert rc == 0 and out.startswith("Successfully created GPU instance ID")
