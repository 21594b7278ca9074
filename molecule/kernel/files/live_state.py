"""Prints the VM's live tuning state as one JSON document, read the way an
operator would read it (sysctl, sysfs, swapon, su -, systemctl), so that each
check costs no extra round trip to the slow TCG guest.

Usage: python3 - USER SERVICE [SYSCTL_KEY ...]   (this file arrives on stdin)
"""
import json
import os
import re
import subprocess
import sys

THP = "/sys/kernel/mm/transparent_hugepage"


def run(*argv):
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False)
    return proc.stdout.strip()


def read(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return None


def selected(choices):
    """'always [madvise] never' -> 'madvise'."""
    found = re.search(r"\[([^\]]+)\]", choices or "")
    return found.group(1) if found else choices


def thp_build_default():
    """The THP mode the running kernel boots with when nothing changes it."""
    config = read("/boot/config-" + os.uname().release) or ""
    for mode in ("always", "madvise"):
        if "CONFIG_TRANSPARENT_HUGEPAGE_%s=y" % mode.upper() in config:
            return mode
    return None


def fstab_swap_lines():
    active, commented = [], []
    with open("/etc/fstab", encoding="utf-8") as handle:
        for line in handle:
            text = line.strip()
            fields = text.lstrip("#").split()
            if len(fields) >= 3 and fields[2] == "swap":
                (commented if text.startswith("#") else active).append(text)
    return active, commented


def process_memlock(service):
    """The soft RLIMIT_MEMLOCK the service's running process really has."""
    pid = run("systemctl", "show", service, "-p", "MainPID", "--value")
    limits = read("/proc/%s/limits" % pid) if pid not in ("", "0") else None
    for line in (limits or "").splitlines():
        if line.startswith("Max locked memory"):
            return line.split()[3]
    return None


def main():
    user, service, sysctl_keys = sys.argv[1], sys.argv[2], sys.argv[3:]
    fstab_active, fstab_commented = fstab_swap_lines()
    state = {
        "boot_id": read("/proc/sys/kernel/random/boot_id"),
        "cmdline": read("/proc/cmdline"),
        "sysctl": {key: run("sysctl", "-n", key) for key in sysctl_keys},
        "thp_enabled": selected(read(THP + "/enabled")),
        "thp_build_default": thp_build_default(),
        "thp_defrag": selected(read(THP + "/defrag")),
        "thp_khugepaged_defrag": read(THP + "/khugepaged/defrag"),
        "swapon_show": run("swapon", "--show"),
        "fstab_swap_active": fstab_active,
        "fstab_swap_commented": fstab_commented,
        "login_memlock": run("su", "-", user, "-c", "ulimit -l"),
        "default_limit_memlock": run("systemctl", "show", "-p", "DefaultLimitMEMLOCK", "--value"),
        "service_limit_memlock": run("systemctl", "show", service, "-p", "LimitMEMLOCK", "--value"),
        "service_process_memlock": process_memlock(service),
    }
    print(json.dumps(state))


main()
