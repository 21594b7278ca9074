# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a machine lets the container lab's engines grant, and the verdicts the audit owes the lab's containers,
read from procfs and sysfs text (proc(5): /proc/<pid>/status CapEff, /proc/<pid>/limits; the block layer's
queue/rotational, Documentation/ABI/stable/sysfs-block in the kernel source)."""

from __future__ import annotations

# capabilities(7): the bit of CAP_SYS_RESOURCE, which lets a process raise a hard rlimit.
CAP_SYS_RESOURCE = 24
MEMLOCK_ROW = "Max locked memory"
UNLIMITED = "unlimited"
# The unit test that proves the PASS an unlimited container gets, for the lab case that cannot start one.
UNLIMITED_PASS_PROOF = ("tests/unit/plugins/plugin_utils/test_audit_container_checks.py::"
                        "test_a_tuned_gpu_container_on_local_flash_passes_and_the_image_below_its_floor_fails")


def holds_capability(status_text, bit):
    """Whether the effective set (CapEff, hexadecimal) of a /proc/<pid>/status holds capability BIT."""
    for line in status_text.splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split(":", 1)[1].strip(), 16) >> bit & 1)
    raise ValueError("no CapEff line in the status text")


def hard_memlock(limits_text):
    """The hard locked-memory limit of a /proc/<pid>/limits in bytes; None when unlimited."""
    for line in limits_text.splitlines():
        if line.startswith(MEMLOCK_ROW):
            hard = line[len(MEMLOCK_ROW):].split()[1]
            return None if hard == UNLIMITED else int(hard)
    raise ValueError("no %r row in the limits text" % MEMLOCK_ROW)


def unlimited_memlock_withheld(status_text, limits_text):
    """Why a process with this status and these limits cannot give a child memlock unlimited, or None when it can.

    setrlimit(2) raises a hard limit only with CAP_SYS_RESOURCE; an unlimited hard limit needs no raising."""
    hard = hard_memlock(limits_text)
    if holds_capability(status_text, CAP_SYS_RESOURCE) or hard is None:
        return None
    return ("the engine lacks CAP_SYS_RESOURCE and its hard memlock limit is %d KiB, so no container it starts may "
            "have memlock unlimited; the PASS an unlimited container gets is proven by %s"
            % (hard // 1024, UNLIMITED_PASS_PROOF))


def memlock_verdict(soft, hard):
    """The audit's memlock verdict for a container whose limits are these `ulimit -Sl` / `ulimit -Hl` words."""
    return "PASS" if soft == UNLIMITED and hard == UNLIMITED else "FAIL"


def data_root_verdict(rotational):
    """The audit's verdict for a local data root whose disk's queue/rotational reads ROTATIONAL ('' when no disk)."""
    return "WARN" if rotational.strip() == "1" else "PASS"
