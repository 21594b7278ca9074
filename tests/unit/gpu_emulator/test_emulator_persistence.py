# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-persistenced is not a GPU holder while nvidia-smi can reach its socket
(NVIDIA/gpu-operator #118, NVIDIA/mig-parted #259); legacy persistence mode and a
daemon whose socket does not answer are (NVIDIA/NVSentinel #1690)."""

from __future__ import annotations

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import enable_mig, query

IN_USE_RESET = "The following GPUs could not be reset:\n  GPU 00000000:07:00.0: In use by another client\n"


def _mig_gpu0_pending(state):
    state["gpus"][0]["mig"] = {"current": "Disabled", "pending": "Disabled"}


def test_running_daemon_does_not_block_a_reset(make_state, smi):
    path = make_state("a100_8x_mig", enable_mig)
    assert api.run("nvidia-persistenced", [], path)[0] == 0
    assert query(smi, path, "persistence_mode") == "Enabled"
    assert smi(path, "-i", "0", "-r") == (0, "GPU 00000000:07:00.0 was successfully reset.\n", "")
    # The daemon keeps the GPU persistent across the reset.
    assert query(smi, path, "persistence_mode") == "Enabled"


def test_running_daemon_does_not_keep_a_mig_change_pending(make_state, smi):
    def immediate(state):
        _mig_gpu0_pending(state)
        state["settings"]["mig_mode_apply"] = "immediate"
    path = make_state("a100_8x_mig", immediate)
    assert api.run("nvidia-persistenced", [], path)[0] == 0
    assert smi(path, "-i", "0", "-mig", "1") == (0, "Enabled MIG Mode for GPU 00000000:07:00.0\nAll done.\n", "")
    assert query(smi, path, "mig.mode.current") == "Enabled"


def test_legacy_persistence_still_blocks_a_reset(make_state, smi):
    path = make_state("a100_8x_mig", lambda s: s["gpus"][0].update(persistence_legacy=True))
    rc, out, _err = smi(path, "-i", "0", "-r")
    assert rc == 255 and out.startswith(IN_USE_RESET)


def test_unreachable_socket_blocks_reset_and_mig_and_hides_persistence(make_state, smi):
    def unreachable(state):
        _mig_gpu0_pending(state)
        state["settings"]["mig_mode_apply"] = "immediate"
        state["faults"]["persistenced_socket"] = "unreachable"
    path = make_state("a100_8x_mig", unreachable)
    assert api.run("nvidia-persistenced", [], path)[0] == 0
    assert api.read_state(path)["daemons"]["persistenced"]["pid"]
    # Persistence reads Off when nvidia-smi cannot reach the daemon (NVIDIA/dgx-selinux #3).
    assert query(smi, path, "persistence_mode") == "Disabled"
    rc, out, _err = smi(path, "-i", "0", "-r")
    assert rc == 255 and out.startswith(IN_USE_RESET)
    rc, out, _err = smi(path, "-i", "0", "-mig", "1")
    assert rc == 0 and "Warning: MIG mode is in pending enable state for GPU 00000000:07:00.0:In use by another client" in out
    assert query(smi, path, "mig.mode.current,mig.mode.pending") == "Disabled, Enabled"
    # Without the socket, -pm can only set the legacy mode.
    assert smi(path, "-i", "0", "-pm", "1")[1] == "Enabled Legacy persistence mode for GPU 00000000:07:00.0.\nAll done.\n"


def test_daemon_without_persistence_mode_holds_nothing_even_unreachable(make_state, smi):
    path = make_state("a100_8x_mig", lambda s: s["faults"].update(persistenced_socket="unreachable"))
    assert api.run("nvidia-persistenced", ["--no-persistence-mode"], path)[0] == 0
    assert smi(path, "-i", "0", "-r")[0] == 0
