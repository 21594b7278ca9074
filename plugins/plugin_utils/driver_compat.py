# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA driver floors for CUDA and MIG, and the audit's driver preflight checks.

Standard library only: the filter and test plugins ``gpuops.hardening.cuda_driver_floor``,
``mig_driver_floor``, ``driver_supports_cuda`` and ``driver_supports_mig`` wrap these
functions, and the audit turns :func:`preflight_checks` into its report rows.
"""

from __future__ import annotations

import re

# CUDA major -> the oldest driver that runs every toolkit of that major under CUDA
# minor-version compatibility. Source: NVIDIA CUDA Toolkit Release Notes, table "CUDA
# Toolkit and Minimum Required Driver Version for CUDA Minor Version Compatibility",
# https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/ (read 2026-12-01).
# The table gives CUDA 13.x only the branch (>= 580); missing components compare as 0.
CUDA_DRIVER_FLOORS = {
    11: "450.80.02",
    12: "525.60.13",
    13: "580",
}
CUDA_FLOOR_SOURCE = "CUDA Toolkit release notes, minimum driver for CUDA minor version compatibility"

# (family, minimum driver, model-name pattern). The pattern is matched as whole tokens of
# the nvidia-smi product name ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"), so GH200
# is not H200, H20 is not H200 and A30 is not A300. Source: NVIDIA Multi-Instance GPU
# User Guide, "Deployment Considerations", R620 edition,
# https://docs.nvidia.com/datacenter/tesla/mig-user-guide/620/deployment-considerations.html
# (read 2026-12-01).
MIG_DRIVER_FLOORS = (
    ("A100", "450.80.02", r"A100"),
    ("A30", "460.73.01", r"A30"),
    # GH200: the guide's "Supported GPUs" page lists its GPU as "H100 on GH200".
    ("H100", "525.85.12", r"H100|GH200"),
    ("H20", "535.161.07", r"H20"),
    ("H200", "550.90.07", r"H200"),
    ("B200", "570.133.20", r"B200"),
    ("GB200", "570.133.20", r"GB200"),
    ("B300", "580.82.07", r"B300"),
)
MIG_FLOOR_SOURCE = "MIG user guide, Deployment Considerations"

VERDICTS = ("PASS", "FAIL", "WARN", "SKIP")
AREA = "driver"
# What nvidia-smi prints (and the gpu_topology fact keeps as None) for a GPU without MIG.
_MIG_NOT_AVAILABLE = (None, "", "N/A", "[N/A]", "Not Supported", "[Not Supported]")
_DRIVER_VERSION = re.compile(r"^\d+(?:\.\d+){0,2}$")
_CUDA_VERSION = re.compile(r"^\d+(?:\.\d+)?$")
_MIG_PATTERNS = tuple((family, floor, re.compile(r"(?<![A-Z0-9])(?:%s)(?![A-Z0-9])" % pattern, re.IGNORECASE))
                      for family, floor, pattern in MIG_DRIVER_FLOORS)


def _version_text(value, kind, example):
    """The version as stripped text; YAML floats are refused because 12.10 would read as 12.1."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        hint = " (quote it: a YAML number such as 12.10 loses its trailing zero)" if isinstance(value, float) else ""
        raise ValueError("%s version must be a string such as %r, got %r%s" % (kind, example, value, hint))
    return str(value).strip()


def parse_driver_version(version) -> tuple:
    """'570.124.06' -> (570, 124, 6); '580' -> (580, 0, 0). ValueError for anything else."""
    text = _version_text(version, "driver", "570.124.06")
    if not _DRIVER_VERSION.match(text):
        raise ValueError("invalid NVIDIA driver version %r: expected MAJOR[.MINOR[.PATCH]] digits, "
                         "such as '570.124.06' or '580'" % (version,))
    parts = [int(part) for part in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def parse_cuda_version(version) -> tuple:
    """'12.4' -> (12, 4); '12' -> (12, 0). ValueError for anything else."""
    text = _version_text(version, "CUDA", "12.4")
    if not _CUDA_VERSION.match(text):
        raise ValueError("invalid CUDA version %r: expected MAJOR or MAJOR.MINOR digits, such as '12' or '12.4'"
                         % (version,))
    parts = [int(part) for part in text.split(".")]
    return tuple(parts + [0] * (2 - len(parts)))


def known_cuda_majors() -> list:
    """The CUDA majors whose driver floor is known, ascending: [11, 12, 13]."""
    return sorted(CUDA_DRIVER_FLOORS)


def cuda_driver_floor(cuda_version) -> str:
    """Minimum driver for a CUDA version ('12.4' -> '525.60.13'); ValueError for an unknown major."""
    major = parse_cuda_version(cuda_version)[0]
    if major not in CUDA_DRIVER_FLOORS:
        raise ValueError("no minimum driver is known for CUDA %s: CUDA %d is not in the driver floor table "
                         "(known majors: %s)" % (str(cuda_version).strip(), major,
                                                 ", ".join(str(known) for known in known_cuda_majors())))
    return CUDA_DRIVER_FLOORS[major]


def driver_at_least(driver_version, floor) -> bool:
    """Whether driver_version >= floor, compared numerically component by component."""
    return parse_driver_version(driver_version) >= parse_driver_version(floor)


def driver_supports_cuda(driver_version, cuda_version) -> bool:
    """Whether the driver runs CUDA cuda_version applications, at least under minor-version compatibility."""
    return driver_at_least(driver_version, cuda_driver_floor(cuda_version))


def mig_driver_floor(model_name) -> tuple:
    """('H100', '525.85.12') for 'NVIDIA H100 80GB HBM3'; ValueError for a model not in the table."""
    name = model_name.strip() if isinstance(model_name, str) else ""
    for family, floor, pattern in _MIG_PATTERNS:
        if name and pattern.search(name):
            return family, floor
    raise ValueError("unknown GPU model %r: it is not in the MIG driver table (known: %s)"
                     % (model_name, ", ".join(family for family, _floor, _pattern in MIG_DRIVER_FLOORS)))


def driver_supports_mig(driver_version, model_name) -> bool:
    """Whether the driver is recent enough for MIG on this GPU model."""
    return driver_at_least(driver_version, mig_driver_floor(model_name)[1])


def _check(check_id, title, verdict, expected, actual, reason):
    return {"id": check_id, "area": AREA, "title": title, "verdict": verdict,
            "expected": expected, "actual": actual, "reason": reason}


def _cuda_check(version, driver, driver_cuda):
    """One driver.cuda.<version> check. driver is the version text, known to parse."""
    label = str(version).strip()
    check_id, title = "driver.cuda.%s" % label, "CUDA %s driver floor" % label
    actual = "%s (CUDA %s)" % (driver, driver_cuda) if driver_cuda else "%s (no CUDA version reported)" % driver
    try:
        floor = cuda_driver_floor(version)
        wanted = parse_cuda_version(version)
    except ValueError as error:
        known = ", ".join(str(major) for major in known_cuda_majors())
        return _check(check_id, title, "FAIL", "a CUDA major with a known driver floor (%s)" % known, actual, str(error))
    major = wanted[0]
    expected = "driver ≥ %s (CUDA %d.x)" % (floor, major)
    if not driver_at_least(driver, floor):
        return _check(check_id, title, "FAIL", expected, actual,
                      "driver %s is below %s, the minimum for CUDA %d.x (%s)" % (driver, floor, major, CUDA_FLOOR_SOURCE))
    if not driver_cuda:
        return _check(check_id, title, "WARN", expected, actual,
                      "driver %s meets the CUDA %d.x floor but reports no CUDA version, so full support "
                      "for CUDA %s is unconfirmed" % (driver, major, label))
    try:
        reported = parse_cuda_version(driver_cuda)
    except ValueError as error:
        return _check(check_id, title, "FAIL", expected, actual, "the driver's CUDA version: %s" % error)
    if reported < wanted:
        return _check(check_id, title, "WARN", expected, actual,
                      "driver %s reports CUDA %s, older than %s: CUDA %s applications run only under CUDA "
                      "minor-version compatibility, without features that need a newer driver"
                      % (driver, driver_cuda, label, label))
    return _check(check_id, title, "PASS", expected, actual,
                  "driver %s meets the CUDA %d.x floor %s and reports CUDA %s" % (driver, major, floor, driver_cuda))


def cuda_judgement(cuda_version, driver, driver_cuda):
    """(verdict, expected, reason) of CUDA cuda_version applications on this driver, as the driver.cuda check
    gives them (the containers audit judges each image's CUDA with it)."""
    found = _cuda_check(cuda_version, driver, driver_cuda)
    return found["verdict"], found["expected"], found["reason"]


def mig_capable(gpu):
    """Whether nvidia-smi reports a MIG mode for the GPU (a gpu_topology entry); the audit's MIG checks use it too."""
    return gpu.get("mig_mode") not in _MIG_NOT_AVAILABLE or gpu.get("mig_mode_pending") not in _MIG_NOT_AVAILABLE


def _mig_use(gpu):
    """How MIG is in use on the GPU, as words for a reason, or None."""
    uses = []
    if gpu.get("mig_mode") == "Enabled":
        uses.append("MIG mode is Enabled")
    elif gpu.get("mig_mode_pending") == "Enabled":
        uses.append("MIG mode Enabled is pending")
    if gpu.get("mig_devices"):
        uses.append("%d MIG device(s) exist" % len(gpu["mig_devices"]))
    return " and ".join(uses) or None


def _mig_check(gpu, driver):
    index = gpu.get("index")
    check_id, title = "driver.mig_floor.gpu%s" % index, "GPU %s MIG driver floor" % index
    try:
        family, floor = mig_driver_floor(gpu.get("name"))
    except ValueError as error:
        return _check(check_id, title, "FAIL", "a GPU model in the MIG driver table", driver, str(error))
    expected = "driver ≥ %s (%s MIG)" % (floor, family)
    if driver_at_least(driver, floor):
        return _check(check_id, title, "PASS", expected, driver,
                      "driver %s meets the %s MIG floor %s" % (driver, family, floor))
    below = "driver %s is below the %s MIG floor %s (%s)" % (driver, family, floor, MIG_FLOOR_SOURCE)
    in_use = _mig_use(gpu)
    if in_use:
        return _check(check_id, title, "FAIL", expected, driver, "%s, and on this GPU %s" % (below, in_use))
    return _check(check_id, title, "WARN", expected, driver, "%s: MIG cannot be enabled on this driver" % below)


def preflight_checks(driver_version, driver_cuda_version, gpus, cuda_versions) -> list:
    """The driver preflight as audit check dicts.

    driver_version, driver_cuda_version: what nvidia-smi reports (None without a driver).
    gpus: the gpu_topology fact's GPUs (index, name, mig_mode, mig_mode_pending, mig_devices).
    cuda_versions: the CUDA versions the node must run ('12.4', '13'); None or [] when none is declared.

    One ``driver.cuda.<version>`` check per CUDA version (or one ``driver.cuda`` SKIP when
    none is declared), then one ``driver.mig_floor.gpu<index>`` check per MIG-capable GPU
    in the fact's order (or one ``driver.mig_floor`` SKIP when no GPU is MIG-capable).
    Every value is a string.
    """
    cuda_versions = [] if cuda_versions is None else cuda_versions
    if isinstance(cuda_versions, (str, bytes)) or not isinstance(cuda_versions, (list, tuple)):
        raise TypeError("cuda_versions must be a list of CUDA versions, got %r" % (cuda_versions,))
    driver = None if driver_version is None else str(driver_version).strip()
    driver_error = None
    if driver is not None:
        try:
            parse_driver_version(driver)
        except ValueError as error:
            driver_error = str(error)
    usable = driver is not None and driver_error is None

    checks = []
    labels = []
    for version in cuda_versions:
        label = str(version).strip()
        if label in labels:
            continue
        labels.append(label)
        if usable:
            checks.append(_cuda_check(version, driver, driver_cuda_version))
        else:
            checks.append(_no_driver("driver.cuda.%s" % label, "CUDA %s driver floor" % label, driver, driver_error))
    if not labels:
        checks.append(_check("driver.cuda", "CUDA driver floor", "SKIP", "CUDA versions to check", "none declared",
                             "no CUDA versions were declared: set audit_cuda_versions to the CUDA versions "
                             "this node must run"))

    if not usable:
        checks.append(_no_driver("driver.mig_floor", "MIG driver floor", driver, driver_error))
        return checks
    mig_gpus = [gpu for gpu in gpus or [] if mig_capable(gpu)]
    if not mig_gpus:
        checks.append(_check("driver.mig_floor", "MIG driver floor", "SKIP", "a MIG-capable GPU", "none",
                             "no GPU on this node is MIG-capable"))
    checks.extend(_mig_check(gpu, driver) for gpu in mig_gpus)
    return checks


def _no_driver(check_id, title, driver, error):
    """SKIP without a driver; FAIL when nvidia-smi printed a version that cannot be read."""
    if error:
        return _check(check_id, title, "FAIL", "a readable driver version", driver, error)
    return _check(check_id, title, "SKIP", "an NVIDIA driver", "no driver", "no NVIDIA driver found")
