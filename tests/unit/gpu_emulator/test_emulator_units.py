# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvidia-persistenced unit flavours of `gpuemu install`, each checked for the
lines of the packaged unit it follows (sources in gpuemu/units.py)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api, catalog, installer, units

UNIT = os.path.join("lib", "systemd", "system", "nvidia-persistenced.service")
MASK = os.path.join("etc", "systemd", "system", "nvidia-persistenced.service")
RULES = os.path.join("lib", "udev", "rules.d", "71-nvidia.rules")


def _read(root, path):
    with open(os.path.join(root, path), encoding="utf-8") as handle:
        return handle.read()


def _exec_start(text):
    return [line for line in text.splitlines() if line.startswith("ExecStart=")]


@pytest.mark.parametrize("flavour, exec_start, has_install", [
    ("default", "/usr/bin/nvidia-persistenced --verbose", True),
    ("upstream", "/usr/bin/nvidia-persistenced --user nvidia-persistenced", True),
    ("debian", "/usr/bin/nvidia-persistenced --user nvpd --group video", True),
    ("ubuntu", "/usr/bin/nvidia-persistenced --user nvidia-persistenced --no-persistence-mode --verbose", False),
    ("nvidia-ubuntu", "/usr/bin/nvidia-persistenced --user root --no-persistence-mode --verbose", False),
])
def test_each_flavour_has_its_packaging_lines(tmp_path, flavour, exec_start, has_install):
    root = str(tmp_path)
    installer.install("l40s_4x", root=root, unit=flavour)
    text = _read(root, UNIT)
    assert _exec_start(text) == ["ExecStart=" + exec_start]
    assert "Type=forking" in text
    assert ("[Install]\nWantedBy=multi-user.target" in text) is has_install
    assert ("PIDFile=" in text) is (flavour == "default")
    assert os.path.exists(os.path.join(root, RULES)) is (flavour == "ubuntu")
    assert not os.path.lexists(os.path.join(root, MASK))


def test_ubuntu_flavour_starts_the_daemon_from_udev(tmp_path):
    root = str(tmp_path)
    installer.install("l40s_4x", root=root, unit="ubuntu")
    assert 'DEVPATH=="/module/nvidia"' in _read(root, RULES)
    assert "systemctl start --no-block nvidia-persistenced.service" in _read(root, RULES)
    # Another flavour takes the rule away again, but only the installer's own.
    installer.install("l40s_4x", root=root, unit="upstream")
    assert not os.path.exists(os.path.join(root, RULES))


def test_foreign_udev_rules_are_kept(tmp_path):
    root = str(tmp_path)
    os.makedirs(os.path.join(root, os.path.dirname(RULES)))
    with open(os.path.join(root, RULES), "w", encoding="utf-8") as handle:
        handle.write("# the node's own rules\n")
    installer.install("l40s_4x", root=root, unit="upstream")
    assert _read(root, RULES) == "# the node's own rules\n"


def test_masked_flavour_links_the_unit_to_dev_null(tmp_path):
    root = str(tmp_path)
    changed = installer.install("l40s_4x", root=root, unit="masked")
    mask = os.path.join(root, MASK)
    assert os.readlink(mask) == "/dev/null" and mask in changed
    assert _exec_start(_read(root, UNIT)) == ["ExecStart=/usr/bin/nvidia-persistenced --user nvidia-persistenced"]
    assert installer.install("l40s_4x", root=root, unit="masked") == []


def test_profile_picks_the_flavour_and_the_option_wins(tmp_path):
    profile = catalog.load_profile("l40s_4x")
    profile["persistenced_unit"] = "nvidia-ubuntu"
    path = str(tmp_path / "profile.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(profile, handle)
    installer.install(path, root=str(tmp_path / "a"))
    assert "--user root" in _read(str(tmp_path / "a"), UNIT)
    installer.install(path, root=str(tmp_path / "b"), unit="debian")
    assert "--user nvpd" in _read(str(tmp_path / "b"), UNIT)


def test_unknown_flavour_is_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown unit flavour"):
        installer.install("l40s_4x", root=str(tmp_path), unit="gentoo")
    assert set(units.FLAVOURS) == {"default", "upstream", "debian", "ubuntu", "nvidia-ubuntu", "masked"}


def test_install_command_takes_the_flavour(tmp_path):
    env = dict(os.environ, PYTHONPATH=api.PACKAGE_PARENT)
    root = str(tmp_path)
    done = subprocess.run(["python3", "-m", "gpuemu", "install", "--profile", "l40s_4x", "--root", root,
                           "--persistenced-unit", "ubuntu"], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "changed: %s" % os.path.join(root, RULES) in done.stdout.splitlines()
    assert "[Install]" not in _read(root, UNIT)
