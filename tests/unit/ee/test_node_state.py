# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AWX job test's reading of the node after the MPS job, on systemctl and nvidia-smi text written here in
the layout systemd 252 and nvidia-smi print it (systemctl(1) --plain --no-legend; systemd.exec(5) Environment=)."""

from __future__ import annotations

from ansible_collections.gpuops.hardening.tests.ee import node_state

UUIDS = ["GPU-0a1b2c3d-0000-1111-2222-333344445555", "GPU-0a1b2c3d-0000-1111-2222-333344445556"]


def test_each_active_unit_is_its_first_column():
    listed = ("gpuops-mps-all.service loaded active running NVIDIA MPS control daemon all (gpuops.hardening)\n"
              "gpuops-mps-b.service   loaded active running NVIDIA MPS control daemon b (gpuops.hardening)\n\n")
    assert node_state.active_units(listed) == ["gpuops-mps-all.service", "gpuops-mps-b.service"]
    assert node_state.active_units("") == []


def test_the_gpus_a_daemon_serves_are_its_visible_devices():
    shown = ("Environment=CUDA_MPS_PIPE_DIRECTORY=/run/gpuops-mps/all CUDA_MPS_LOG_DIRECTORY=/var/log/gpuops-mps/all "
             "CUDA_VISIBLE_DEVICES=%s\n" % ",".join(UUIDS))
    assert node_state.visible_devices(shown) == UUIDS
    assert node_state.visible_devices("Environment=CUDA_MPS_PIPE_DIRECTORY=/run/x\n") == []
    assert node_state.visible_devices("Environment=\n") == []


def test_the_node_gpus_are_one_uuid_a_line():
    assert node_state.gpu_uuids("%s\n%s\n" % tuple(UUIDS)) == UUIDS
