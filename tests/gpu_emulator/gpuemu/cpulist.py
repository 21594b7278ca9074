# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""CPU list strings ("0-55,112-167") and the kernel's hex CPU masks."""


def parse(text):
    """Sorted CPU numbers of a kernel-style list; an empty string is no CPU."""
    cpus = set()
    for part in (text or "").strip().split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            first, last = part.split("-", 1)
            cpus.update(range(int(first), int(last) + 1))
        else:
            cpus.add(int(part))
    return sorted(cpus)


def format_list(cpus):
    """The kernel's compact form: runs joined with '-', separated by ','."""
    runs = []
    for cpu in sorted(set(cpus)):
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(str(a) if a == b else "%d-%d" % (a, b) for a, b in runs)


def format_mask(cpus, nr_cpus):
    """A cpumap / local_cpus mask: 32-bit hex words joined by ',', most significant
    first, the leading word only as wide as nr_cpus needs (like bitmap_print_to_pagebuf)."""
    value = 0
    for cpu in cpus:
        value |= 1 << cpu
    digits = max(1, (nr_cpus + 3) // 4)
    text = "%0*x" % (digits, value)
    words = []
    while text:
        words.insert(0, text[-8:])
        text = text[:-8]
    return ",".join(words)
