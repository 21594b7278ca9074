# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure swap helpers: /proc parsing, the swapoff safety check, fstab and zram-generator."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import swap, systemd

PROC_SWAPS = (
    "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
    "/dev/sda2                               partition\t2097148\t\t524288\t\t-2\n"
    "/var/lib/my\\040swap                     file\t\t1048572\t\t0\t\t-3\n"
    "/dev/zram0                              partition\t4194300\t\t1024\t\t100\n"
)

MEMINFO = "MemTotal:       16314984 kB\nMemFree:         1203300 kB\nMemAvailable:    8123456 kB\nHugePages_Total:       0\n"


def test_parse_proc_swaps():
    swaps = swap.parse_proc_swaps(PROC_SWAPS)
    assert swaps[0] == {"path": "/dev/sda2", "type": "partition", "size_kib": 2097148, "used_kib": 524288, "priority": -2}
    assert swaps[1]["path"] == "/var/lib/my swap"
    assert [s["path"] for s in swaps] == ["/dev/sda2", "/var/lib/my swap", "/dev/zram0"]


def test_parse_proc_swaps_header_only():
    assert swap.parse_proc_swaps("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n") == []
    assert swap.parse_proc_swaps(None) == []


def test_parse_meminfo():
    info = swap.parse_meminfo(MEMINFO)
    assert info["MemAvailable"] == 8123456
    assert info["HugePages_Total"] == 0


@pytest.mark.parametrize("used, available, margin, refused", [
    (0, 0, 0, False),
    (1000, 3000, 2000, False),  # exactly fits
    (1001, 3000, 2000, True),
    (500, 400, 0, True),
    (1, 1000, 2000, True),  # margin larger than what is available
])
def test_swapoff_refusal(used, available, margin, refused):
    assert (swap.swapoff_refusal(used, available, margin) is not None) is refused


def test_swapoff_refusal_names_the_numbers():
    message = swap.swapoff_refusal(3 * 1024 * 1024, 2 * 1024 * 1024, 1024 * 1024)
    assert "3072 MiB of swap is in use" in message
    assert "2048 MiB of memory is available" in message
    assert "margin is 1024 MiB" in message


FSTAB = (
    "# /etc/fstab: static file system information.\n"
    "UUID=0a1b-2c3d /               ext4    errors=remount-ro 0       1\n"
    "UUID=5e6f-7a8b none            swap    sw              0       0\n"
    "\n"
    "/swapfile\tnone\tswap\tsw,noauto\t0\t0\n"
    "#/dev/sdc1 none swap sw 0 0\n"
    "/dev/sdb1 /swapdata ext4 defaults 0 2\n"
    "server:/export /mnt/swap nfs defaults 0 0\n"
    "LABEL=fast\\040swap none swap sw 0 0"
)


def test_comment_out_swap_touches_only_swap_lines():
    new, commented = swap.comment_out_swap(FSTAB)
    assert commented == [
        "UUID=5e6f-7a8b none            swap    sw              0       0",
        "/swapfile\tnone\tswap\tsw,noauto\t0\t0",
        "LABEL=fast\\040swap none swap sw 0 0",
    ]
    old_lines = FSTAB.splitlines()
    new_lines = new.splitlines()
    # Every non-swap line survives byte for byte, in order.
    assert [line for line in new_lines if not line.startswith("#")] == [
        line for line in old_lines if not line.startswith("#") and line not in commented]
    assert "#UUID=5e6f-7a8b none            swap    sw              0       0" in new_lines
    assert new_lines.count(swap.FSTAB_MARKER) == 3
    assert new_lines[new_lines.index("#/swapfile\tnone\tswap\tsw,noauto\t0\t0") - 1] == swap.FSTAB_MARKER
    # The file had no final newline; the last entry still has none.
    assert new.endswith("#LABEL=fast\\040swap none swap sw 0 0")


def test_comment_out_swap_is_idempotent():
    once, dummy = swap.comment_out_swap(FSTAB)
    twice, commented = swap.comment_out_swap(once)
    assert twice == once and commented == []


def test_comment_out_swap_keeps_crlf_and_does_not_repeat_the_marker():
    text = "%s\r\n/swapfile none swap sw 0 0\r\n" % swap.FSTAB_MARKER
    new, dummy = swap.comment_out_swap(text)
    assert new == "%s\r\n#/swapfile none swap sw 0 0\r\n" % swap.FSTAB_MARKER


def test_comment_out_swap_without_swap_is_unchanged():
    text = "# UNCONFIGURED FSTAB FOR BASE SYSTEM\n"
    assert swap.comment_out_swap(text) == (text, [])
    assert swap.comment_out_swap("") == ("", [])


@pytest.mark.parametrize("spec, device", [
    ("UUID=5e6f-7a8b", "/dev/disk/by-uuid/5e6f-7a8b"),
    ('UUID="5e6f-7a8b"', "/dev/disk/by-uuid/5e6f-7a8b"),
    ("PARTUUID=1234-01", "/dev/disk/by-partuuid/1234-01"),
    ("LABEL=fast\\040swap", "/dev/disk/by-label/fast\\x20swap"),
    ("LABEL=a/b", "/dev/disk/by-label/a\\x2fb"),
    ("/dev/sda2", "/dev/sda2"),
    ("/var/lib/my\\040swap", "/var/lib/my swap"),
])
def test_fstab_device(spec, device):
    assert swap.fstab_device(spec) == device


# Expected links checked against ID_FS_LABEL_ENC from `blkid -o udev -p` (util-linux 2.38) on
# swap areas made with `mkswap -L LABEL`: udev names /dev/disk/by-label/ after it.
@pytest.mark.parametrize("name, encoded", [
    ("GPU swap (nvme,", "GPU\\x20swap\\x20\\x28nvme\\x2c"),
    (".swap", ".swap"),
    (u"swap_\u00e9", u"swap_\u00e9"),
    ("x;y", "x\\x3by"),
    ("a#b+c=d@e:f", "a#b+c=d@e:f"),
    ("back\\slash", "back\\x5cslash"),
    ("a/b", "a\\x2fb"),
    ("tab\there", "tab\\x09here"),
    (u"raw\udcffbyte", "raw\\xffbyte"),
])
def test_encode_devnode_name(name, encoded):
    assert swap.encode_devnode_name(name) == encoded


# Expected names checked against `systemd-escape --path --suffix=swap` (systemd 252) of the
# udev link: the link's own backslashes are escaped again.
@pytest.mark.parametrize("spec, unit", [
    ("LABEL=GPU\\040swap\\040(nvme,", "dev-disk-by\\x2dlabel-GPU\\x5cx20swap\\x5cx20\\x5cx28nvme\\x5cx2c.swap"),
    ('LABEL=".swap"', "dev-disk-by\\x2dlabel-.swap.swap"),
    ("LABEL='x;y'", "dev-disk-by\\x2dlabel-x\\x5cx3by.swap"),
    ("LABEL=back\\134slash", "dev-disk-by\\x2dlabel-back\\x5cx5cslash.swap"),
    ("PARTLABEL=swap\\040(a)", "dev-disk-by\\x2dpartlabel-swap\\x5cx20\\x5cx28a\\x5cx29.swap"),
    ('UUID="5e6f-7a8b"', "dev-disk-by\\x2duuid-5e6f\\x2d7a8b.swap"),
])
def test_swap_unit_of_tagged_fstab_entries(spec, unit):
    assert swap.unit_name_from_path(swap.fstab_device(spec), "swap") == unit


# Expected names checked against `systemd-escape --path --suffix=swap` (systemd 252).
@pytest.mark.parametrize("path, unit", [
    ("/dev/sda2", "dev-sda2.swap"),
    ("/swapfile", "swapfile.swap"),
    ("/dev/disk/by-uuid/ab-cd", "dev-disk-by\\x2duuid-ab\\x2dcd.swap"),
    ("/var/lib/my swap", "var-lib-my\\x20swap.swap"),
    ("/.hidden", "\\x2ehidden.swap"),
    ("/", "-.swap"),
    ("//dev//zram0/", "dev-zram0.swap"),
    ("/dev/disk/by-label/x\\x2fy", "dev-disk-by\\x2dlabel-x\\x5cx2fy.swap"),
    (u"/opt/\u00e9", "opt-\\xc3\\xa9.swap"),
])
def test_unit_name_from_path(path, unit):
    assert swap.unit_name_from_path(path, "swap") == unit


def test_zram_devices_merge_and_skip_file_systems():
    main = "[zram0]\nzram-size = ram / 2\n\n[zram1]\nmount-point = /var/compressed\n\n[other]\nx = 1\n"
    dropin = "[zram2]\nfs-type = ext4\n[zram3]\n"
    override = "[zram2]\nfs-type = swap\n"
    assert swap.zram_devices([main, dropin]) == {"zram0": True, "zram1": False, "zram2": False, "zram3": True}
    assert swap.zram_devices([main, dropin, override])["zram2"] is True


def test_render_zram_dropin():
    text = swap.render_zram_dropin(["zram10", "zram2"])
    sections = systemd.parse_ini_sections(text)
    assert sections == [("zram2", {"host-memory-limit": "0"}), ("zram10", {"host-memory-limit": "0"})]
    assert text.startswith("# ")


def test_zram_config_files_precedence(tmp_path):
    for relative in ("usr/lib/systemd", "etc/systemd", "etc/systemd/zram-generator.conf.d",
                     "usr/lib/systemd/zram-generator.conf.d", "run/systemd/zram-generator.conf.d"):
        (tmp_path / relative).mkdir(parents=True, exist_ok=True)
    (tmp_path / "usr/lib/systemd/zram-generator.conf").write_text("[zram0]\n")
    assert swap.zram_config_files(str(tmp_path)) == [str(tmp_path / "usr/lib/systemd/zram-generator.conf")]
    (tmp_path / "etc/systemd/zram-generator.conf").write_text("[zram1]\n")  # the admin's main file wins
    (tmp_path / "usr/lib/systemd/zram-generator.conf.d/50-a.conf").write_text("")
    (tmp_path / "etc/systemd/zram-generator.conf.d/50-a.conf").write_text("")  # same name: /etc replaces /usr
    (tmp_path / "run/systemd/zram-generator.conf.d/10-b.conf").write_text("")
    (tmp_path / "etc/systemd/zram-generator.conf.d/99-ours.conf").write_text("")
    ours = str(tmp_path / "etc/systemd/zram-generator.conf.d/99-ours.conf")
    assert swap.zram_config_files(str(tmp_path), exclude=ours) == [
        str(tmp_path / "etc/systemd/zram-generator.conf"),
        str(tmp_path / "run/systemd/zram-generator.conf.d/10-b.conf"),
        str(tmp_path / "etc/systemd/zram-generator.conf.d/50-a.conf"),
    ]


def test_zram_generator_installed(tmp_path):
    assert not swap.zram_generator_installed(str(tmp_path))
    (tmp_path / "usr/lib/systemd/system-generators").mkdir(parents=True)
    (tmp_path / "usr/lib/systemd/system-generators/zram-generator").write_text("")
    assert swap.zram_generator_installed(str(tmp_path))
