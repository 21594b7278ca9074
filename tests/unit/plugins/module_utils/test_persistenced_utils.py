# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-persistenced units: flavour, the drop-in's ExecStart, the unit search order, the query parser."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import persistenced
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import find_unit
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api, units

EXPECTED = {
    "upstream": ("upstream", "/usr/bin/nvidia-persistenced --user nvidia-persistenced --persistence-mode"),
    "debian": ("debian", "/usr/bin/nvidia-persistenced --user nvpd --group video --persistence-mode"),
    "ubuntu": ("ubuntu", "/usr/bin/nvidia-persistenced --user nvidia-persistenced --verbose --persistence-mode"),
    "nvidia-ubuntu": ("nvidia-ubuntu", "/usr/bin/nvidia-persistenced --user root --verbose --persistence-mode"),
    "default": ("custom", "/usr/bin/nvidia-persistenced --verbose --persistence-mode"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_flavour_and_exec_start_of_each_packaged_unit(name):
    text = units.UNITS[name]
    flavour, exec_start = EXPECTED[name]
    assert persistenced.flavour(text) == flavour
    dropin = persistenced.render_dropin(text, "/lib/systemd/system/nvidia-persistenced.service")
    assert "\n[Service]\nExecStart=\nExecStart=%s\n" % exec_start in dropin
    assert "\n[Unit]\nConditionPathExists=/dev/nvidiactl\n" in dropin
    assert "--no-persistence-mode" not in dropin.split("[Service]")[1]


@pytest.mark.parametrize("argv, user", [
    (["/usr/bin/nvidia-persistenced", "--user", "nvpd"], "nvpd"),
    (["/usr/bin/nvidia-persistenced", "--user=root", "--verbose"], "root"),
    (["/usr/bin/nvidia-persistenced", "-u", "nvidia-persistenced"], "nvidia-persistenced"),
    (["/usr/bin/nvidia-persistenced", "--verbose", "--user"], None),
])
def test_daemon_user_in_each_spelling(argv, user):
    assert persistenced.daemon_user(argv) == user


def test_static_means_no_install_target():
    assert persistenced.is_static(units.UNITS["ubuntu"])
    assert persistenced.is_static(units.UNITS["upstream"].replace("WantedBy=multi-user.target", ""))
    assert not persistenced.is_static(units.UNITS["debian"])


def test_exec_start_keeps_quoted_arguments_and_the_prefix():
    text = '[Service]\nExecStart=-/opt/nv/nvidia-persistenced --user "gpu ops" --persistence-mode\n[Install]\nWantedBy=x\n'
    assert persistenced.persistence_argv(text) == ["-/opt/nv/nvidia-persistenced", "--user", "gpu ops", "--persistence-mode"]
    assert 'ExecStart=-/opt/nv/nvidia-persistenced --user "gpu ops" --persistence-mode\n' in persistenced.render_dropin(text, "u")


def test_a_unit_without_exec_start_gives_no_command():
    assert persistenced.persistence_argv("[Unit]\nDescription=x\n") == []


def _unit(root, directory, text=None, mask=False):
    path = os.path.join(str(root), directory.lstrip("/"), persistenced.UNIT)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if mask:
        os.symlink("/dev/null", path)
    else:
        with open(path, "w") as handle:
            handle.write(text)


def test_find_unit_prefers_etc_and_reports_a_mask(tmp_path):
    assert find_unit(persistenced.UNIT, str(tmp_path)) == (None, None)
    _unit(tmp_path, "/lib/systemd/system", units.UNITS["debian"])
    assert find_unit(persistenced.UNIT, str(tmp_path)) == (None, "/lib/systemd/system/nvidia-persistenced.service")
    _unit(tmp_path, "/usr/lib/systemd/system", units.UNITS["upstream"])
    assert find_unit(persistenced.UNIT, str(tmp_path))[1] == "/usr/lib/systemd/system/nvidia-persistenced.service"
    _unit(tmp_path, "/etc/systemd/system", mask=True)
    assert find_unit(persistenced.UNIT, str(tmp_path)) == (
        "/etc/systemd/system/nvidia-persistenced.service", "/usr/lib/systemd/system/nvidia-persistenced.service")


def test_persistence_query_of_the_emulator(tmp_path):
    path = str(tmp_path / "state.json")
    state = api.new_state("l40s_4x")
    api.write_state(state, path)
    rc, out, err = api.run("nvidia-smi", persistenced.QUERY_ARGS, path)
    assert rc == 0, err
    gpus = persistenced.parse_persistence(out)
    assert [gpu["index"] for gpu in gpus] == [0, 1, 2, 3]
    assert [gpu["uuid"] for gpu in gpus] == [gpu["uuid"] for gpu in state["gpus"]]
    assert persistenced.not_persistent(gpus) == ["%d (%s): Disabled" % (gpu["index"], gpu["uuid"]) for gpu in gpus]


def test_not_persistent_is_empty_when_all_read_enabled():
    gpus = persistenced.parse_persistence("index, uuid, persistence_mode\n0, GPU-a, Enabled\n1, GPU-b, Enabled\n")
    assert len(gpus) == 2 and persistenced.not_persistent(gpus) == []


def test_persistence_query_skips_rows_without_an_index_and_names_an_unreadable_mode():
    text = ("WARNING: infoROM is corrupted at gpu 0000:07:00.0\n"
            "index, uuid, persistence_mode\n"
            "0, GPU-a, Enabled\n"
            "[N/A], GPU-b, Enabled\n"
            "2, GPU-c\n"
            "3, GPU-d, [N/A]\n")
    gpus = persistenced.parse_persistence(text)
    assert gpus == [{"index": 0, "uuid": "GPU-a", "persistence_mode": "Enabled"},
                    {"index": 3, "uuid": "GPU-d", "persistence_mode": "[N/A]"}]
    assert persistenced.not_persistent(gpus) == ["3 (GPU-d): [N/A]"]
    assert persistenced.parse_persistence("0, GPU-a, Enabled\n") == [] and persistenced.parse_persistence(None) == []


def test_legacy_unit_sets_persistence_at_boot_only_with_a_gpu():
    text = persistenced.render_legacy_unit("/usr/bin/nvidia-smi")
    assert "\nExecStart=/usr/bin/nvidia-smi -pm 1\n" in text
    assert "\nConditionPathExists=/dev/nvidiactl\n" in text
    assert "\n[Install]\nWantedBy=multi-user.target\n" in text
