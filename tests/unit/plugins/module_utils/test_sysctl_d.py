# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sysctl.d parsing and boot-time precedence, against temporary directory trees."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import sysctl_d

OURS = "vm.swappiness = 0\nkernel.numa_balancing = 0\n"
WANTED = {"vm.swappiness": "0", "kernel.numa_balancing": "0"}


@pytest.mark.parametrize("key, path, canonical", [
    ("vm.swappiness", "vm/swappiness", "vm.swappiness"),
    ("vm/swappiness", "vm/swappiness", "vm.swappiness"),
    # The sysctl.d(5) examples: the first separator decides.
    ("net.ipv4.conf.enp3s0/200.forwarding", "net/ipv4/conf/enp3s0.200/forwarding", "net.ipv4.conf.enp3s0/200.forwarding"),
    ("net/ipv4/conf/enp3s0.200/forwarding", "net/ipv4/conf/enp3s0.200/forwarding", "net.ipv4.conf.enp3s0/200.forwarding"),
    ("  kernel.numa_balancing ", "kernel/numa_balancing", "kernel.numa_balancing"),
    ("/vm/swappiness", "vm/swappiness", "vm.swappiness"),
])
def test_key_forms(key, path, canonical):
    assert sysctl_d.proc_path(key) == path
    assert sysctl_d.canonical_key(key) == canonical


@pytest.mark.parametrize("key, valid", [
    ("vm.swappiness", True),
    ("vm/swappiness", True),
    ("net.ipv4.conf.eth0/100.rp_filter", True),
    ("swappiness", False),
    ("vm..swappiness", False),
    ("vm/../../etc/passwd", False),
    ("net.ipv4.conf.*.rp_filter", False),
])
def test_valid_key(key, valid):
    assert sysctl_d.valid_key(key) is valid


def test_parse_skips_comments_globs_and_exclusions():
    text = (
        "# comment\n"
        "; also a comment\n"
        "\n"
        "vm.swappiness=10\n"
        "  vm/max_map_count =  262144  \n"
        "-kernel.numa_balancing = 1\n"
        "net.ipv4.conf.*.rp_filter = 2\n"
        "-net.ipv4.conf.all.rp_filter\n"
        "net.ipv4.ip_local_port_range = 1024\t65000\n"
        "no equals sign here\n"
    )
    found = sysctl_d.parse(text, "/x.conf")
    assert [(a.key, a.value, a.line) for a in found] == [
        ("vm.swappiness", "10", 4),
        ("vm.max_map_count", "262144", 5),
        ("kernel.numa_balancing", "1", 6),
        ("net.ipv4.ip_local_port_range", "1024 65000", 9),
    ]
    assert all(a.path == "/x.conf" for a in found)


def test_render_round_trips_through_parse():
    text = sysctl_d.render(WANTED)
    assert dict((a.key, a.value) for a in sysctl_d.parse(text)) == WANTED


def test_render_sorts_keys_and_comments_notes_and_description():
    text = sysctl_d.render(WANTED, notes={"vm/swappiness": "Swap is off.", "vm.other": "unused"},
                           description="Kernel VM settings:\ntraining profile.")
    lines = text.splitlines()
    assert lines[0].startswith("# Managed by gpuops.hardening")
    assert lines[1:3] == ["# Kernel VM settings:", "# training profile."]
    body = lines[lines.index("kernel.numa_balancing = 0") - 1:]
    assert body == ["", "kernel.numa_balancing = 0", "", "# Swap is off.", "vm.swappiness = 0"]
    assert "unused" not in text


@pytest.mark.parametrize("base, overrides, merged", [
    ({"vm.swappiness": 0}, {"vm/swappiness": 10}, {"vm.swappiness": 10}),
    ({"vm/swappiness": 0}, {"vm.swappiness": 10}, {"vm.swappiness": 10}),
    ({"vm.dirty_bytes": 1, "vm.swappiness": 0}, {"vm/dirty_bytes": None, "vm.dirty_ratio": 20},
     {"vm.swappiness": 0, "vm.dirty_ratio": 20}),
    ({"vm.swappiness": None}, {}, {}),
    ({}, {"net/ipv4/conf/eth0.100/rp_filter": 1}, {"net.ipv4.conf.eth0/100.rp_filter": 1}),
    (None, None, {}),
])
def test_merge_settings_overrides_by_canonical_key(base, overrides, merged):
    assert sysctl_d.merge_settings(base, overrides) == merged


def test_merge_settings_leaves_its_inputs_alone():
    base = {"vm/swappiness": 0}
    sysctl_d.merge_settings(base, {"vm.swappiness": None})
    assert base == {"vm/swappiness": 0}


@pytest.fixture
def tree(tmp_path):
    """etc/run/usr/lib sysctl.d directories and an /etc/sysctl.conf, all empty."""
    dirs = [tmp_path / "etc/sysctl.d", tmp_path / "run/sysctl.d", tmp_path / "usr/local/lib/sysctl.d", tmp_path / "usr/lib/sysctl.d"]
    for directory in dirs:
        directory.mkdir(parents=True)
    conf = tmp_path / "etc/sysctl.conf"
    conf.write_text("# nothing set\n")
    return {"dirs": [str(d) for d in dirs], "etc": dirs[0], "run": dirs[1], "usr": dirs[3], "conf": conf,
            "own": str(dirs[0] / "90-gpuops-hardening.conf")}


def _conflicts(tree, wanted=None, content=OURS):
    return sysctl_d.boot_conflicts(wanted or WANTED, tree["own"], content, tree["dirs"], str(tree["conf"]))


def test_boot_files_mask_by_name_and_sort_by_name(tree):
    (tree["usr"] / "50-default.conf").write_text("a.b = 1\n")
    (tree["usr"] / "99-protect.conf").write_text("a.b = 2\n")
    (tree["run"] / "50-default.conf").write_text("a.b = 3\n")  # hides the /usr one
    (tree["etc"] / "10-early.conf").write_text("a.b = 4\n")
    (tree["etc"] / "99-protect.conf").symlink_to("/dev/null")  # masks the name entirely
    (tree["etc"] / ".hidden.conf").write_text("a.b = 5\n")
    (tree["etc"] / "README").write_text("not a .conf\n")
    (tree["etc"] / "dir.conf").mkdir()
    assert sysctl_d.boot_files(tree["dirs"]) == [
        ("10-early.conf", str(tree["etc"] / "10-early.conf")),
        ("50-default.conf", str(tree["run"] / "50-default.conf")),
    ]


def test_later_file_wins_at_boot(tree):
    (tree["etc"] / "99-local.conf").write_text("# local\nvm.swappiness = 10\n")
    conflicts = _conflicts(tree)
    assert [(c.key, c.wanted, c.value, c.path, c.line) for c in conflicts] == [
        ("vm.swappiness", "0", "10", str(tree["etc"] / "99-local.conf"), 2)]
    assert conflicts[0].applied_by == "systemd-sysctl and sysctl --system"
    assert "99-local.conf line 2 sets 10, which overrides 0" in sysctl_d.describe(conflicts[0], tree["own"])


def test_later_file_in_a_vendor_dir_also_wins(tree):
    (tree["usr"] / "95-vendor.conf").write_text("kernel.numa_balancing = 1\n")
    assert [(c.key, c.value) for c in _conflicts(tree)] == [("kernel.numa_balancing", "1")]


def test_earlier_file_loses(tree):
    (tree["etc"] / "10-early.conf").write_text("vm.swappiness = 60\n")
    (tree["usr"] / "50-vendor.conf").write_text("kernel.numa_balancing = 1\n")
    assert _conflicts(tree) == []


def test_later_file_with_the_same_value_is_no_conflict(tree):
    (tree["etc"] / "99-local.conf").write_text("vm.swappiness=0\n")
    assert _conflicts(tree) == []


def test_an_even_later_file_restoring_our_value_is_no_conflict(tree):
    (tree["etc"] / "95-a.conf").write_text("vm.swappiness = 10\n")
    (tree["usr"] / "97-b.conf").write_text("vm.swappiness = 0\n")
    assert _conflicts(tree) == []


def test_slash_keys_and_ignore_prefix_are_recognised(tree):
    (tree["etc"] / "99-local.conf").write_text("vm/swappiness = 10\n-kernel.numa_balancing = 1\n")
    assert sorted(c.key for c in _conflicts(tree)) == ["kernel.numa_balancing", "vm.swappiness"]


def test_globs_never_override_explicit_keys(tree):
    wanted = {"net.ipv4.conf.all.rp_filter": "1"}
    (tree["etc"] / "99-glob.conf").write_text("net.ipv4.conf.*.rp_filter = 2\n")
    assert _conflicts(tree, wanted, "net.ipv4.conf.all.rp_filter = 1\n") == []


def test_masked_later_file_is_no_conflict(tree):
    (tree["usr"] / "99-vendor.conf").write_text("vm.swappiness = 30\n")
    (tree["etc"] / "99-vendor.conf").symlink_to("/dev/null")
    (tree["run"] / "99-local.conf").write_text("vm.swappiness = 30\n")
    (tree["etc"] / "99-local.conf").write_text("# emptied by the admin\n")
    assert _conflicts(tree) == []


def test_linked_sysctl_conf_wins_for_both_tools(tree):
    """Debian and EL: /etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf."""
    tree["conf"].write_text("vm.swappiness = 60\n")
    (tree["etc"] / "99-sysctl.conf").symlink_to("../sysctl.conf")
    conflicts = _conflicts(tree)
    assert len(conflicts) == 1
    assert conflicts[0].path == str(tree["etc"] / "99-sysctl.conf")
    assert conflicts[0].applied_by == "systemd-sysctl and sysctl --system"
    assert "-> %s" % tree["conf"] in sysctl_d.describe(conflicts[0], tree["own"])


def test_unlinked_sysctl_conf_wins_only_for_procps(tree):
    tree["conf"].write_text("vm.swappiness = 60\n")
    conflicts = _conflicts(tree)
    assert [(c.path, c.applied_by) for c in conflicts] == [(str(tree["conf"]), "sysctl --system")]
    assert "systemd-sysctl skips that file" in sysctl_d.describe(conflicts[0], tree["own"])


def test_each_tool_reports_its_own_winner(tree):
    """A file after 99-sysctl.conf wins for systemd; procps re-reads sysctl.conf last."""
    tree["conf"].write_text("vm.swappiness = 60\n")
    (tree["etc"] / "99-sysctl.conf").symlink_to("../sysctl.conf")
    (tree["etc"] / "99-zz-local.conf").write_text("vm.swappiness = 10\n")
    conflicts = _conflicts(tree)
    assert sorted((c.value, c.applied_by) for c in conflicts) == [("10", "systemd-sysctl"), ("60", "sysctl --system")]


def test_our_wanted_content_counts_not_the_file_on_disk(tree):
    with open(tree["own"], "w") as handle:
        handle.write("vm.swappiness = 99\n")
    (tree["etc"] / "10-early.conf").write_text("vm.swappiness = 99\n")
    assert _conflicts(tree) == []


def test_masked_by_an_earlier_directory(tree):
    own = str(tree["usr"] / "90-gpuops-hardening.conf")
    assert sysctl_d.masked_by(own, tree["dirs"]) is None
    (tree["run"] / "90-gpuops-hardening.conf").write_text("")
    assert "hides %s" % own in sysctl_d.masked_by(own, tree["dirs"])
    # Hidden, so other files' values win even where ours would sort later.
    (tree["etc"] / "10-early.conf").write_text("vm.swappiness = 60\n")
    conflicts = sysctl_d.boot_conflicts(WANTED, own, OURS, tree["dirs"], str(tree["conf"]))
    assert [(c.key, c.value) for c in conflicts] == [("vm.swappiness", "60")]


def test_file_outside_the_directories_is_reported(tree, tmp_path):
    assert "not in a sysctl.d directory" in sysctl_d.masked_by(str(tmp_path / "elsewhere.conf"), tree["dirs"])


def test_application_order_puts_ours_by_name(tree):
    (tree["etc"] / "99-sysctl.conf").symlink_to("../sysctl.conf")
    (tree["usr"] / "50-pid-max.conf").write_text("kernel.pid_max = 4194304\n")
    orders = sysctl_d.application_orders(tree["own"], OURS, tree["dirs"], str(tree["conf"]))
    names = [os.path.basename(path) for path, dummy in orders[sysctl_d.SYSTEMD]]
    assert names == ["50-pid-max.conf", "90-gpuops-hardening.conf", "99-sysctl.conf"]
    assert orders[sysctl_d.PROCPS][-1][0] == str(tree["conf"])
    assert dict(orders[sysctl_d.SYSTEMD])[tree["own"]] == OURS


DIRTY = "vm.dirty_bytes = 8589934592\nvm.dirty_background_bytes = 1073741824\n"
DIRTY_WANTED = {"vm.dirty_bytes": "8589934592", "vm.dirty_background_bytes": "1073741824"}


def _dirty_conflicts(tree):
    return _conflicts(tree, DIRTY_WANTED, DIRTY)


def test_partner_key_in_a_later_file_zeroes_ours(tree):
    (tree["etc"] / "95-local.conf").write_text("# local\nvm.dirty_ratio = 20\n")
    conflicts = _dirty_conflicts(tree)
    assert [(c.key, c.other_key, c.value, c.path, c.line) for c in conflicts] == [
        ("vm.dirty_bytes", "vm.dirty_ratio", "20", str(tree["etc"] / "95-local.conf"), 2)]
    assert conflicts[0].applied_by == "systemd-sysctl and sysctl --system"
    message = sysctl_d.describe(conflicts[0], tree["own"])
    assert "sets vm.dirty_ratio = 20 after %s" % tree["own"] in message
    assert "zeroes vm.dirty_bytes (wanted 8589934592)" in message


def test_background_partner_in_a_vendor_dir_zeroes_ours(tree):
    (tree["usr"] / "99-vendor.conf").write_text("vm.dirty_background_ratio = 5\n")
    assert [(c.key, c.other_key) for c in _dirty_conflicts(tree)] == [("vm.dirty_background_bytes", "vm.dirty_background_ratio")]


def test_partner_key_in_an_earlier_file_is_zeroed_by_ours(tree):
    (tree["etc"] / "10-early.conf").write_text("vm.dirty_ratio = 20\nvm.dirty_background_ratio = 10\n")
    assert _dirty_conflicts(tree) == []


def test_our_key_set_again_after_the_partner_wins_back(tree):
    (tree["etc"] / "95-a.conf").write_text("vm.dirty_ratio = 20\n")
    (tree["etc"] / "97-b.conf").write_text("vm.dirty_bytes = 8589934592\n")
    assert _dirty_conflicts(tree) == []


def test_partner_before_our_key_in_the_same_later_file_is_no_conflict(tree):
    (tree["etc"] / "95-a.conf").write_text("vm.dirty_ratio = 20\nvm.dirty_bytes = 8589934592\n")
    assert _dirty_conflicts(tree) == []


def test_later_zero_dirty_ratio_leaves_dirty_bytes_alone(tree):
    """dirty_ratio_handler zeroes dirty_bytes only when the ratio changes, and ours already zeroed it."""
    (tree["etc"] / "95-a.conf").write_text("vm.dirty_ratio = 0\n")
    assert _dirty_conflicts(tree) == []


def test_later_zero_background_ratio_still_zeroes_background_bytes(tree):
    """dirty_background_ratio_handler zeroes its partner on every write."""
    (tree["etc"] / "95-a.conf").write_text("vm.dirty_background_ratio = 0\n")
    assert [c.key for c in _dirty_conflicts(tree)] == ["vm.dirty_background_bytes"]


def test_partner_in_unlinked_sysctl_conf_zeroes_ours_for_procps_only(tree):
    tree["conf"].write_text("vm.dirty_ratio = 20\n")
    assert [(c.key, c.applied_by) for c in _dirty_conflicts(tree)] == [("vm.dirty_bytes", "sysctl --system")]
