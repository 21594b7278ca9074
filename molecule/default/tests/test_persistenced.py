# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-persistenced on the converged lab: each node has another packaged unit
(inventory/lab.yml, gpuops_lab_persistenced_unit) and every GPU reads persistence
mode Enabled through nvidia-smi."""

from __future__ import annotations

UNIT = "nvidia-persistenced.service"
PACKAGED = "/lib/systemd/system/nvidia-persistenced.service"
DROPIN = "/etc/systemd/system/nvidia-persistenced.service.d/90-gpuops-persistenced.conf"
WANTS_LINK = "/etc/systemd/system/multi-user.target.wants/nvidia-persistenced.service"

# node: (GPUs in its emulated profile, the ExecStart the drop-in must give the daemon)
NODES = {
    "gpu-train": (8, "/usr/bin/nvidia-persistenced --user nvidia-persistenced --persistence-mode"),
    "gpu-infer": (4, "/usr/bin/nvidia-persistenced --user nvidia-persistenced --verbose --persistence-mode"),
    "gpu-mig": (8, "/usr/bin/nvidia-persistenced --user nvpd --group video --persistence-mode"),
}


def _node(host):
    return host.backend.get_hostname()


def test_every_gpu_reads_persistence_enabled(host):
    gpus, dummy = NODES[_node(host)]
    query = host.run("nvidia-smi --query-gpu=index,uuid,persistence_mode --format=csv,noheader")
    assert query.rc == 0, query.stderr
    modes = [line.split(",")[2].strip() for line in query.stdout.splitlines()]
    assert modes == ["Enabled"] * gpus, query.stdout
    assert host.service(UNIT).is_running


def test_drop_in_keeps_the_packaged_arguments_and_needs_a_gpu(host):
    dummy, exec_start = NODES[_node(host)]
    dropin = host.file(DROPIN)
    assert dropin.is_file and dropin.mode == 0o644
    assert "\n[Service]\nExecStart=\nExecStart=%s\n" % exec_start in dropin.content_string
    assert "\n[Unit]\nConditionPathExists=/dev/nvidiactl\n" in dropin.content_string
    # systemd runs what the drop-in says, not the packaged line.
    shown = host.check_output("systemctl show --property=ExecStart %s", UNIT)
    assert "--persistence-mode" in shown and "--no-persistence-mode" not in shown


def test_every_unit_is_wanted_by_multi_user_static_or_not(host):
    link = host.file(WANTS_LINK)
    # linked_to resolves every link, /lib of a merged /usr included.
    assert link.is_symlink and link.linked_to == host.check_output("readlink -f %s", PACKAGED)
    # systemd counts a link in /etc/systemd/system/*.wants as enabled, [Install] or not.
    assert host.check_output("systemctl is-enabled %s", UNIT) == "enabled"
    packaged = host.file(PACKAGED).content_string
    if _node(host) == "gpu-infer":
        # Ubuntu's unit has no [Install]: the role made the link above itself.
        assert "[Install]" not in packaged
    else:
        # systemctl enable made the link from the unit's [Install] section.
        assert "\n[Install]\nWantedBy=multi-user.target\n" in packaged
