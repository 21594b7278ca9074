# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The boot order persistence, Fabric Manager, the MIG boot service, the GPU clients: the units the node gets
(the emulator's packaged units, the fabricmanager drop-in, the mig role's boot unit, an MPS daemon's unit) pass
systemd's own `systemd-analyze verify`, and their After=/Before= put them in that order, with the MIG boot
unit and without it (an NVSwitch node that does not partition)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import fabricmanager, mps
from ansible_collections.gpuops.hardening.plugins.module_utils.engines import mig_boot
from ansible_collections.gpuops.hardening.plugins.module_utils.engines.nvidia_mig import GPU_CLIENTS
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import last_setting
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import installer

ANALYZE = shutil.which("systemd-analyze")
MPS_UNIT = mps.unit_name("all")
# The GPU clients the MIG change stops (its one list), with one of the collection's MPS daemons.
CLIENTS = list(GPU_CLIENTS) + [MPS_UNIT]
MIG_UNIT, MIG_SCRIPT, MIG_RECORD = "gpuops-mig.service", "/usr/local/sbin/gpuops-mig-boot", "/etc/gpuops/mig.json"
BOOT_ORDER = ["nvidia-persistenced.service", fabricmanager.UNIT, MIG_UNIT] + CLIENTS
HOST_UNITS = "/lib/systemd/system"
MPS_TOOLS = {"nvidia-smi": "/usr/bin/nvidia-smi", "nvidia-cuda-mps-control": "/usr/bin/nvidia-cuda-mps-control",
             "sh": "/bin/sh"}
MPS_PATHS = {"pipe_directory": "/run/gpuops-mps/all", "log_directory": "/var/log/gpuops-mps/all",
             "commands": "/etc/gpuops-hardening/mps/all.commands"}


def install_units(root, with_mig):
    installer.install("dgx_h100", root=str(root), state_path="/state.json", fabric_manager=True)
    dropin = root / fabricmanager.DROPIN_PATH.lstrip("/")
    dropin.parent.mkdir(parents=True)
    dropin.write_text(fabricmanager.render_dropin("/lib/systemd/system/" + fabricmanager.UNIT, GPU_CLIENTS))
    units = root / "etc/systemd/system"
    (units / MPS_UNIT).write_text(mps.render_unit("all", [{"uuid": "GPU-0"}], MPS_PATHS, MPS_TOOLS, [], False))
    # The clients the node does not run are stand-ins: verify wants every unit it is given to exist.
    for client in GPU_CLIENTS:
        if not any((root / folder / client).exists() for folder in ("lib/systemd/system", "etc/systemd/system")):
            (units / client).write_text("[Service]\nExecStart=/bin/true\n")
    if with_mig:
        (units / MIG_UNIT).write_text(mig_boot.UNIT_TEXT.format(
            clients=" ".join(CLIENTS), record=MIG_RECORD, script=MIG_SCRIPT, boot_timeout=900))
        script = root / MIG_SCRIPT.lstrip("/")
        script.parent.mkdir(parents=True)
        script.write_text("#!/bin/sh\n")
        script.chmod(0o755)


@pytest.fixture(params=[True, False], ids=["with-mig-boot-unit", "without-mig-boot-unit"])
def node_root(request, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    install_units(root, with_mig=request.param)
    return root


def unit_texts(root, unit):
    """The unit file and its drop-ins, in the order systemd reads them."""
    texts = []
    for folder in ("lib/systemd/system", "etc/systemd/system"):
        path = root / folder / unit
        if path.is_file():
            texts.append(path.read_text())
    dropins = root / "etc/systemd/system" / (unit + ".d")
    texts += [path.read_text() for path in sorted(dropins.glob("*.conf"))] if dropins.is_dir() else []
    return texts


def ordering(root, units):
    """{(earlier, later)} from every After= and Before= among units."""
    pairs = set()
    for unit in units:
        for text in unit_texts(root, unit):
            for other in (last_setting(text, "Unit", "After") or "").split():
                pairs.add((other, unit))
            for other in (last_setting(text, "Unit", "Before") or "").split():
                pairs.add((unit, other))
    return set(pair for pair in pairs if pair[0] in units and pair[1] in units)


def installed(root, units):
    return [unit for unit in units if unit_texts(root, unit)]


def test_the_units_order_persistence_fabric_manager_mig_then_the_clients(node_root):
    pairs = ordering(node_root, BOOT_ORDER)
    chain = [("nvidia-persistenced.service", fabricmanager.UNIT)]
    chain += [(fabricmanager.UNIT, client) for client in CLIENTS]
    if installed(node_root, [MIG_UNIT]):
        chain += [(fabricmanager.UNIT, MIG_UNIT)] + [(MIG_UNIT, client) for client in CLIENTS]
    assert set(chain) <= pairs, sorted(set(chain) - pairs)
    assert all(BOOT_ORDER.index(earlier) < BOOT_ORDER.index(later) for earlier, later in pairs), pairs


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed here")
def test_systemd_analyze_verify_accepts_the_units_with_the_dropin(node_root):
    # verify --root looks below the root for what the units name: the host's targets (network-online.target,
    # multi-user.target) and the tools the units run (the packaged units' ExecStopPost=, the MPS unit's and the stand-ins' commands).
    for target in os.listdir(HOST_UNITS):
        if target.endswith(".target"):
            shutil.copy(os.path.join(HOST_UNITS, target), str(node_root / "lib/systemd/system" / target))
    (node_root / "bin").mkdir(exist_ok=True)
    for tool in ("rm", "true", "sh"):
        shutil.copy("/bin/" + tool, str(node_root / "bin" / tool))
    done = subprocess.run([ANALYZE, "verify", "--root=%s" % node_root, "--man=no"] + installed(node_root, BOOT_ORDER),
                          capture_output=True, text=True, timeout=60, env=dict(os.environ, LC_ALL="C"), check=False)
    assert (done.returncode, done.stderr.strip()) == (0, ""), done.stderr
