# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sysctl role's persisted state on every lab node, both profiles.

Inside the lab containers /proc/sys is read-only and /proc/swaps is the host's,
so live values are checked only where the node owns its kernel (the VM
scenario); everything persisted is checked everywhere.
"""

from __future__ import annotations

import re

import pytest

SYSCTL_FILE = "/etc/sysctl.d/90-gpuops-hardening.conf"
ZRAM_DROPIN = "/etc/systemd/zram-generator.conf.d/99-gpuops-hardening-no-swap.conf"
FSTAB_MARKER = "# gpuops.hardening: swap is off on this GPU node; the line below is the original entry"
ZRAM_CONFIGS = (
    "/run/systemd/zram-generator.conf",
    "/etc/systemd/zram-generator.conf",
    "/usr/local/lib/systemd/zram-generator.conf",
    "/usr/lib/systemd/zram-generator.conf",
)

COMMON = {
    "vm.swappiness": "0",
    "kernel.numa_balancing": "0",
    "vm.zone_reclaim_mode": "0",
    "vm.max_map_count": "1048576",
}
EXPECTED = {
    "training": dict(COMMON, **{"vm.dirty_background_bytes": "1073741824", "vm.dirty_bytes": "8589934592"}),
    "inference": dict(COMMON, **{"vm.dirty_background_bytes": "268435456", "vm.dirty_bytes": "1073741824"}),
}


def _profile(host):
    return host.ansible.get_variables().get("gpuops_profile", "training")


def _assignments(text):
    found = {}
    for line in text.splitlines():
        line = line.strip()
        if line and line[0] not in "#;" and "=" in line:
            key, dummy, value = line.partition("=")
            found[key.strip()] = " ".join(value.split())
    return found


def _in_container(host):
    return host.file("/.dockerenv").exists or host.file("/run/.containerenv").exists or \
        host.file("/run/systemd/container").exists


def _unit_masked(host, unit):
    link = host.file("/etc/systemd/system/" + unit)
    return link.is_symlink and link.linked_to == "/dev/null"


def test_sysctl_file_holds_the_profile_settings(host):
    conf = host.file(SYSCTL_FILE)
    assert conf.is_file
    assert conf.user == "root" and conf.mode == 0o644
    assert _assignments(conf.content_string) == EXPECTED[_profile(host)]
    assert "sysctl role, %s profile" % _profile(host) in conf.content_string


def test_systemd_sysctl_reads_the_file_at_boot(host):
    out = host.check_output("systemd-analyze cat-config sysctl.d")
    assert "# " + SYSCTL_FILE in out


def test_live_values_where_the_kernel_is_ours(host):
    if _in_container(host):
        pytest.skip("/proc/sys belongs to the host kernel inside a container; the VM scenario checks live values")
    for key, value in EXPECTED[_profile(host)].items():
        assert " ".join(host.file("/proc/sys/" + key.replace(".", "/")).content_string.split()) == value, key


def test_fstab_has_no_active_swap_entry(host):
    fstab = host.file("/etc/fstab").content_string
    for line in fstab.splitlines():
        fields = line.split()
        assert not (fields and not fields[0].startswith("#") and len(fields) >= 3 and fields[2] == "swap"), line


def test_commented_swap_entries_are_marked_and_backed_up(host):
    lines = host.file("/etc/fstab").content_string.splitlines()
    commented = [lines[i + 1] for i, line in enumerate(lines[:-1]) if line == FSTAB_MARKER]
    if not commented:
        pytest.skip("this node's fstab had no swap entries")
    assert all(re.match(r"^#\S+\s+\S+\s+swap\s", line) for line in commented), commented
    backups = host.check_output("ls /etc/ | grep -E '^fstab\\.[0-9]+\\..*~$' || true").split()
    assert backups, "no fstab backup beside /etc/fstab"
    original = host.file("/etc/" + sorted(backups)[0]).content_string
    for line in commented:
        assert line[1:] in original.splitlines()


def test_swap_target_and_swap_units_are_masked(host):
    assert _unit_masked(host, "swap.target")
    assert host.run("systemctl is-enabled swap.target").stdout.strip() == "masked"
    listed = host.check_output("systemctl list-unit-files --type=swap --no-legend --plain || true")
    for line in listed.splitlines():
        unit, state = line.split()[:2]
        assert state == "masked", line


def test_zram_swap_services_are_masked_where_installed(host):
    for unit in ("zramswap.service", "zram-config.service"):
        state = host.run("systemctl is-enabled %s" % unit).stdout.strip()
        if state in ("", "not-found") and not host.file("/etc/systemd/system/" + unit).exists:
            continue
        assert state == "masked", unit


def _zram_swap_devices(host):
    """Swap devices the node's zram-generator configuration defines, ours left out."""
    texts = []
    for path in ZRAM_CONFIGS:
        if host.file(path).exists:
            texts.append(host.file(path).content_string)
            break
    listed = host.check_output("ls /usr/lib/systemd/zram-generator.conf.d/*.conf /etc/systemd/zram-generator.conf.d/*.conf "
                               "/run/systemd/zram-generator.conf.d/*.conf 2>/dev/null || true")
    texts.extend(host.file(path).content_string for path in listed.split() if path != ZRAM_DROPIN)
    devices = {}
    section = None
    for text in texts:
        for line in text.splitlines():
            line = line.strip()
            if re.match(r"^\[zram[0-9]+\]$", line):
                section = line[1:-1]
                devices.setdefault(section, {})
            elif section and "=" in line and not line.startswith(("#", ";")):
                key, dummy, value = line.partition("=")
                devices[section][key.strip()] = value.strip()
    return sorted(name for name, conf in devices.items()
                  if not conf.get("mount-point") and conf.get("fs-type", "swap") in ("", "swap"))


def test_zram_generator_swap_devices_are_disabled(host):
    devices = _zram_swap_devices(host)
    if not devices:
        pytest.skip("no zram-generator swap device configured on this node")
    dropin = _assignments_by_section(host.file(ZRAM_DROPIN).content_string)
    for device in devices:
        assert dropin.get(device, {}).get("host-memory-limit") == "0", device
        assert _unit_masked(host, "dev-%s.swap" % device)
        assert _unit_masked(host, "systemd-zram-setup@%s.service" % device)


def _assignments_by_section(text):
    sections = {}
    current = None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
        elif current is not None and "=" in line and not line.startswith(("#", ";")):
            key, dummy, value = line.partition("=")
            current[key.strip()] = value.strip()
    return sections


def test_no_swap_is_active_where_the_kernel_is_ours(host):
    if _in_container(host):
        pytest.skip("/proc/swaps shows the host kernel's swap inside a container")
    assert host.file("/proc/swaps").content_string.strip().count("\n") == 0
