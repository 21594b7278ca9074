# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm GRES lines for a node's GPUs, and merging them into gres.conf and cgroup.conf.

Pure: the CPUs' cores come from sysfs_topology.read_cpu_cores.

``Cores=`` in gres.conf takes Slurm's logical core indexes, not CPU ids (gres.conf(5),
Slurm 22.05, "Cores": core 0 is the first core of the first socket, core 1 the
second core of the first socket, the same numbering as ``Core L#`` in ``lstopo -l``).
hwloc gives logical indexes in topology order: sockets in turn, and within a
socket, cores in the order of their first CPU. A core's hyperthreads share its
index, and sysfs ``core_id`` is not that index: it has gaps on many hosts
and starts again at 0 on every socket.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.hardening.plugins.module_utils.cpulist import format_cpulist, try_parse_cpulist

BLOCK_BEGIN = "# BEGIN gpuops.hardening slurm_gres: managed GPU lines, do not edit"
BLOCK_END = "# END gpuops.hardening slurm_gres"

# Words of nvidia-smi's product name that say nothing about the model.
_BRANDS = {"nvidia", "tesla", "quadro", "geforce", "titan"}
# A word from which on the name describes memory or form factor, not the model.
_TAIL = re.compile(r"^(\d+gb|sxm\d*|pcie|hbm\d*e?|nvl|generation|mig)$")
MIG_MINORS_PATH = "/proc/driver/nvidia-caps/mig-minors"
_MIG_MINOR_LINE = re.compile(r"^\s*(\S+)\s+(\d+)\s*$")
# The GPU instance part of a MIG profile name: "3g.20gb" in "1c.3g.20gb" or "1g.10gb+me".
_GI_PROFILE = re.compile(r"\d+g\.\d+gb")


class GresError(ValueError):
    """The facts do not allow a correct gres.conf (say why, name the GPU)."""


def core_index_map(cpu_cores):
    """{CPU id: Slurm core index} for CPUs given as [{"cpu", "core_id", "socket"}].

    Sockets in the order of their lowest CPU, cores within a socket in the order
    of their lowest CPU: hwloc's logical order, which Slurm's Cores= uses.
    """
    first_cpu = {}
    for item in cpu_cores:
        key = (item["socket"], item["core_id"])
        first_cpu[key] = min(first_cpu.get(key, item["cpu"]), item["cpu"])
    socket_first = {}
    for (socket, _core), cpu in first_cpu.items():
        socket_first[socket] = min(socket_first.get(socket, cpu), cpu)
    ordered = sorted(first_cpu, key=lambda key: (socket_first[key[0]], first_cpu[key]))
    index = dict((key, number) for number, key in enumerate(ordered))
    return dict((item["cpu"], index[(item["socket"], item["core_id"])]) for item in cpu_cores)


def cores_of_cpus(cpus, index_map):
    """Sorted Slurm core indexes of a CPU list; GresError names CPUs the map lacks."""
    missing = sorted(set(cpus) - set(index_map))
    if missing:
        raise GresError("CPUs %s have no core in the CPU topology" % format_cpulist(missing))
    return sorted(set(index_map[cpu] for cpu in cpus))


def gpu_type(name):
    """A short model name for Type=: "NVIDIA H100 80GB HBM3" -> h100, "NVIDIA A100-SXM4-40GB" -> a100.

    Brand words (NVIDIA, Tesla, Quadro, GeForce, TITAN) go; the name stops at the first word
    about memory or form factor (80GB, SXM4, PCIe, HBM3, NVL, Generation); what remains is
    joined, lower-case, letters and digits only ("RTX 6000 Ada Generation" -> rtx6000ada).
    """
    words = [word for word in re.split(r"[\s\-_]+", (name or "").lower()) if word]
    kept = []
    for word in words:
        if word in _BRANDS:
            continue
        if _TAIL.match(word):
            break
        kept.append(re.sub(r"[^a-z0-9]", "", word))
    short = "".join(kept)
    return short or "gpu"


def gres_lines(gpus, index_map, type_override=None, mig_minors=None, warnings=None):
    """The gres.conf lines of the node's GPUs, in nvidia-smi index order.

    gpus: the gpu_topology fact's gpus (index, name, minor_number, cpus, mig_mode, mig_devices).
    A GPU with MIG off gives one File= line; one with MIG on gives a MultipleFiles= line per
    MIG device (mig_device_line). mig_minors: parse_mig_minors() of the node, needed only when a
    MIG device exists. A GPU with MIG on and no MIG device gives no line and a warning, appended
    to the list ``warnings`` when one is given.
    """
    lines = []
    for gpu in gpus:
        where = "GPU %s (%s)" % (gpu.get("index"), gpu.get("pci_bus_id"))
        minor = gpu.get("minor_number")
        if minor is None:
            raise GresError("%s: nvidia-smi reports no minor number, so its /dev/nvidia file is unknown" % where)
        if not gpu.get("cpus"):
            raise GresError("%s: its NUMA-local CPUs are unknown, so Cores= cannot be set" % where)
        cores = format_cpulist(cores_of_cpus(gpu["cpus"], index_map))
        model = type_override or gpu_type(gpu.get("name"))
        if gpu.get("mig_mode") != "Enabled":
            lines.append("Name=gpu Type=%s File=/dev/nvidia%d Cores=%s" % (model, minor, cores))
            continue
        devices = gpu.get("mig_devices") or []
        if not devices and warnings is not None:
            warnings.append("%s has MIG enabled but no MIG devices: gres.conf gets no line for it" % where)
        for device in devices:
            lines.append(mig_device_line(where, model, minor, device, mig_minors or {}, cores))
    return lines


def parse_mig_minors(text):
    """{capability name: minor} from /proc/driver/nvidia-caps/mig-minors.

    The driver prints one ``<name> <minor>`` line per capability, such as
    ``gpu0/gi1/access 12`` and ``gpu0/gi1/ci0/access 13``; the device node of a minor
    is /dev/nvidia-caps/nvidia-cap<minor> (NVIDIA Multi-Instance GPU User Guide,
    "Device Nodes and Capabilities"). Lines of another shape are ignored.
    """
    minors = {}
    for line in (text or "").splitlines():
        match = _MIG_MINOR_LINE.match(line)
        if match:
            minors[match.group(1)] = int(match.group(2))
    return minors


def mig_cap_files(mig_minors, gpu_minor, gpu_instance, compute_instance):
    """The device nodes that open one MIG device: its GPU instance's and its compute instance's
    access capabilities. The driver names them after the parent GPU's minor number (the N of
    /dev/nvidiaN), not its index; so does Slurm's NVML autodetection (gpu_nvml.c, mig-minors)."""
    names = ("gpu%d/gi%d/access" % (gpu_minor, gpu_instance),
             "gpu%d/gi%d/ci%d/access" % (gpu_minor, gpu_instance, compute_instance))
    missing = [name for name in names if name not in mig_minors]
    if missing:
        raise GresError("%s has no line %s" % (MIG_MINORS_PATH, " or ".join(repr(name) for name in missing)))
    return ["/dev/nvidia-caps/nvidia-cap%d" % mig_minors[name] for name in names]


def mig_type(model, profile):
    """Type= of a MIG device: the GPU's type, "_" and its GPU instance profile ("a100_3g.20gb").

    Slurm's NVML autodetection names MIG devices the same way (gpu_nvml.c: the product name,
    "_", then "<slices>g.<GB>gb"). A compute instance's share ("1c.") and a media suffix
    ("+me") are dropped, so every MIG device of one GPU instance profile has one type.
    """
    match = _GI_PROFILE.search(profile or "")
    if not match:
        raise GresError("MIG profile %r has no <slices>g.<size>gb part" % profile)
    return "%s_%s" % (model, match.group(0))


def mig_device_line(where, model, gpu_minor, device, mig_minors, cores):
    """One MultipleFiles= line for a MIG device (gres.conf(5), Slurm 22.05, MultipleFiles): the parent
    GPU's /dev/nvidiaN and the two capability nodes of mig_cap_files, with the parent GPU's cores."""
    name = "%s MIG device %s" % (where, device.get("index"))
    gpu_instance, compute_instance = device.get("gpu_instance_id"), device.get("compute_instance_id")
    if gpu_instance is None or compute_instance is None:
        raise GresError("%s: nvidia-smi -q -x reports no GPU or compute instance id for it" % name)
    try:
        files = ["/dev/nvidia%d" % gpu_minor] + mig_cap_files(mig_minors, gpu_minor, gpu_instance, compute_instance)
        device_type = mig_type(model, device.get("profile"))
    except GresError as error:
        raise GresError("%s: %s" % (name, error))
    return "Name=gpu Type=%s MultipleFiles=%s Cores=%s" % (device_type, ",".join(files), cores)


def managed_block(lines):
    """The marked block that holds the node's GPU lines."""
    return "\n".join([BLOCK_BEGIN] + list(lines) + [BLOCK_END]) + "\n"


def merge_block(text, lines):
    """text with the marked block replaced by lines (or added at the end); other lines kept as they are."""
    block = managed_block(lines)
    current = (text or "").splitlines(True)
    begin = _find(current, BLOCK_BEGIN)
    end = _find(current, BLOCK_END, begin + 1 if begin is not None else 0)
    if begin is not None and end is not None:
        return "".join(current[:begin]) + block + "".join(current[end + 1:])
    if begin is not None:
        raise GresError("gres.conf has the line %r but not %r; fix or remove the block by hand" % (
            BLOCK_BEGIN, BLOCK_END))
    head = "".join(current)
    if head and not head.endswith("\n"):
        head += "\n"
    return head + block


def _find(lines, marker, start=0):
    for number in range(start, len(lines)):
        if lines[number].strip() == marker:
            return number
    return None


def unmanaged_gpu_lines(text):
    """User lines outside the block that define Name=gpu: they would clash with the managed ones."""
    found = []
    inside = False
    for line in (text or "").splitlines():
        stripped = line.strip()
        if stripped == BLOCK_BEGIN:
            inside = True
        elif stripped == BLOCK_END:
            inside = False
        elif not inside and parse_gres_line(line).get("name") == "gpu":
            found.append(stripped)
    return found


def parse_gres_line(line):
    """{lower-case key: value} of one gres.conf line; comments and blanks give {}."""
    content = line.split("#", 1)[0].strip()
    pairs = {}
    for word in content.split():
        if "=" in word:
            key, value = word.split("=", 1)
            pairs[key.lower()] = value
    return pairs


def parse_gres_gpus(text):
    """The Name=gpu lines of a gres.conf: [{"file", "type", "cores"}], cores as a list or None."""
    gpus = []
    for line in (text or "").splitlines():
        pairs = parse_gres_line(line)
        if pairs.get("name") != "gpu":
            continue
        cores = pairs.get("cores")
        # A MIG device's line names its files in MultipleFiles=, the parent GPU's first.
        gpus.append({"file": pairs.get("file") or pairs.get("multiplefiles"), "type": pairs.get("type"),
                     "cores": try_parse_cpulist(cores) if cores is not None else None})
    return gpus


def has_autodetect_nvml(text):
    """Whether a gres.conf line sets AutoDetect=nvml."""
    return any(parse_gres_line(line).get("autodetect", "").lower() == "nvml" for line in (text or "").splitlines())


def merge_key_values(text, settings):
    """text with each key (case-insensitive, as Slurm reads it) set to its value; other lines kept.

    The first line of a key is rewritten in place, later ones are dropped (Slurm would
    take the last); missing keys are appended.
    """
    wanted = dict((key.lower(), (key, value)) for key, value in settings.items())
    seen = set()
    out = []
    for line in (text or "").splitlines(True):
        content = line.split("#", 1)[0].strip()
        key = content.split("=", 1)[0].strip().lower() if "=" in content else None
        if key in wanted:
            if key not in seen:
                name, value = wanted[key]
                out.append("%s=%s\n" % (name, value))
                seen.add(key)
            continue
        out.append(line)
    merged = "".join(out)
    if merged and not merged.endswith("\n"):
        merged += "\n"
    for key, (name, value) in wanted.items():
        if key not in seen:
            merged += "%s=%s\n" % (name, value)
    return merged
