# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Driver floors for CUDA and MIG, model matching, version parsing and every preflight verdict."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.plugin_utils.driver_compat import (
    CUDA_DRIVER_FLOORS,
    VERDICTS,
    cuda_driver_floor,
    driver_at_least,
    driver_supports_cuda,
    driver_supports_mig,
    known_cuda_majors,
    mig_driver_floor,
    parse_cuda_version,
    parse_driver_version,
    preflight_checks,
)

CHECK_KEYS = {"id", "area", "title", "verdict", "expected", "actual", "reason"}


def _gpu(index, name, mig_mode="Disabled", pending=None, devices=None):
    return {"index": index, "name": name, "mig_mode": mig_mode,
            "mig_mode_pending": mig_mode if pending is None else pending, "mig_devices": devices or []}


def _by_id(checks):
    for check in checks:
        assert set(check) == CHECK_KEYS
        assert all(isinstance(value, str) for value in check.values()), check
        assert check["area"] == "driver"
        assert check["verdict"] in VERDICTS
        assert "\n" not in check["reason"]
    ids = [check["id"] for check in checks]
    assert len(ids) == len(set(ids))
    return dict((check["id"], check) for check in checks)


# --- version parsing -------------------------------------------------------------------

@pytest.mark.parametrize("text, parsed", [
    ("450.80.02", (450, 80, 2)),
    ("525.60.13", (525, 60, 13)),
    ("580", (580, 0, 0)),
    ("580.00", (580, 0, 0)),
    ("575.64", (575, 64, 0)),
    ("580.159.04", (580, 159, 4)),
    (" 570.124.06\n", (570, 124, 6)),
    (580, (580, 0, 0)),
])
def test_parse_driver_version(text, parsed):
    assert parse_driver_version(text) == parsed


@pytest.mark.parametrize("text", ["", "r570", "570.124.06.1", "570..1", "570.", ".570", "570-124", "latest", None,
                                  True, ["570"]])
def test_parse_driver_version_refuses(text):
    with pytest.raises(ValueError, match="driver version"):
        parse_driver_version(text)


@pytest.mark.parametrize("text, parsed", [("12", (12, 0)), ("12.4", (12, 4)), ("13.0", (13, 0)), ("11.8", (11, 8)),
                                          ("12.10", (12, 10)), (13, (13, 0))])
def test_parse_cuda_version(text, parsed):
    assert parse_cuda_version(text) == parsed


@pytest.mark.parametrize("text", ["", "12.4.1", "v12.4", "12.", "twelve", "12.x", None])
def test_parse_cuda_version_refuses(text):
    with pytest.raises(ValueError, match="CUDA version"):
        parse_cuda_version(text)


def test_a_yaml_float_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="quote it"):
        parse_cuda_version(12.1)


def test_components_compare_as_numbers_not_text():
    assert driver_at_least("525.105.17", "525.85.12")
    assert not driver_at_least("525.60.13", "525.85.12")
    assert driver_at_least("580.65.06", "580")
    assert driver_at_least("580", "580.00")
    assert not driver_at_least("575.64.05", "580")
    assert driver_at_least("1000.1", "580.82.07")


# --- CUDA floors -----------------------------------------------------------------------

def test_known_cuda_majors_follow_the_table():
    assert known_cuda_majors() == [11, 12, 13] == sorted(CUDA_DRIVER_FLOORS)


@pytest.mark.parametrize("version, floor", [("11", "450.80.02"), ("11.8", "450.80.02"), ("12", "525.60.13"),
                                            ("12.4", "525.60.13"), ("12.9", "525.60.13"), ("13.0", "580")])
def test_cuda_driver_floor(version, floor):
    assert cuda_driver_floor(version) == floor


def test_unknown_cuda_major_names_the_version_and_the_known_majors():
    with pytest.raises(ValueError) as error:
        cuda_driver_floor("14.2")
    assert "CUDA 14.2" in str(error.value)
    assert "known majors: 11, 12, 13" in str(error.value)
    with pytest.raises(ValueError, match="known majors"):
        cuda_driver_floor("10.2")


@pytest.mark.parametrize("driver, cuda, supported", [
    ("570.124.06", "12.8", True),
    ("525.60.13", "12.8", True),   # minor-version compatibility: the major's floor is enough
    ("525.60.12", "12.0", False),
    ("520.61.05", "12.0", False),
    ("450.80.02", "11.0", True),
    ("570.124.06", "11.8", True),  # newer drivers keep running older majors
    ("575.64.05", "13.0", False),
    ("580.65.06", "13.0", True),
    ("580", "13", True),
])
def test_driver_supports_cuda(driver, cuda, supported):
    assert driver_supports_cuda(driver, cuda) is supported


# --- MIG floors and model matching -----------------------------------------------------

@pytest.mark.parametrize("name, family, floor", [
    ("NVIDIA A100-SXM4-80GB", "A100", "450.80.02"),
    ("NVIDIA A100-SXM4-40GB", "A100", "450.80.02"),
    ("NVIDIA A100 80GB PCIe", "A100", "450.80.02"),
    ("NVIDIA A100-PCIE-40GB", "A100", "450.80.02"),
    ("NVIDIA A30", "A30", "460.73.01"),
    ("NVIDIA H100 80GB HBM3", "H100", "525.85.12"),
    ("NVIDIA H100 PCIe", "H100", "525.85.12"),
    ("NVIDIA H100 NVL", "H100", "525.85.12"),
    ("NVIDIA GH200 480GB", "H100", "525.85.12"),
    ("NVIDIA H20", "H20", "535.161.07"),
    ("NVIDIA H200", "H200", "550.90.07"),
    ("NVIDIA H200 NVL", "H200", "550.90.07"),
    ("NVIDIA B200", "B200", "570.133.20"),
    ("NVIDIA GB200", "GB200", "570.133.20"),
    ("NVIDIA B300 SXM6 AC", "B300", "580.82.07"),
])
def test_mig_driver_floor(name, family, floor):
    assert mig_driver_floor(name) == (family, floor)


@pytest.mark.parametrize("name", ["NVIDIA A300", "NVIDIA A3000", "NVIDIA RTX A3000 Laptop GPU", "NVIDIA H2000",
                                  "NVIDIA H1000", "NVIDIA A1000", "NVIDIA L40S", "NVIDIA RTX 6000 Ada Generation",
                                  "Tesla P100-PCIE-16GB", "NVIDIA H800", "", None])
def test_unknown_models_are_refused_with_the_known_families(name):
    with pytest.raises(ValueError) as error:
        mig_driver_floor(name)
    message = str(error.value)
    assert message.startswith("unknown GPU model %r" % (name,))
    assert "not in the MIG driver table (known: A100, A30, H100, H20, H200, B200, GB200, B300)" in message


def test_driver_supports_mig():
    assert driver_supports_mig("525.85.12", "NVIDIA H100 80GB HBM3")
    assert not driver_supports_mig("525.60.13", "NVIDIA H100 80GB HBM3")
    assert driver_supports_mig("525.60.13", "NVIDIA A100-SXM4-80GB")
    assert not driver_supports_mig("560.35.03", "NVIDIA B200")
    with pytest.raises(ValueError, match="unknown GPU model"):
        driver_supports_mig("570.124.06", "NVIDIA L40S")
    with pytest.raises(ValueError, match="driver version"):
        driver_supports_mig("570.x", "NVIDIA A100-SXM4-80GB")


# --- preflight: CUDA checks ------------------------------------------------------------

def _cuda(driver, driver_cuda, *versions):
    return _by_id(preflight_checks(driver, driver_cuda, [], list(versions)))


def test_cuda_pass_when_the_floor_is_met_and_the_driver_reports_the_version():
    check = _cuda("570.124.06", "12.8", "12.4")["driver.cuda.12.4"]
    assert check["verdict"] == "PASS"
    assert check["title"] == "CUDA 12.4 driver floor"
    assert check["expected"] == "driver ≥ 525.60.13 (CUDA 12.x)"
    assert check["actual"] == "570.124.06 (CUDA 12.8)"


def test_cuda_pass_for_an_older_major_on_a_newer_driver():
    assert _cuda("580.65.06", "13.0", "12.8")["driver.cuda.12.8"]["verdict"] == "PASS"


def test_cuda_warn_under_minor_version_compatibility():
    check = _cuda("525.60.13", "12.0", "12.4")["driver.cuda.12.4"]
    assert check["verdict"] == "WARN"
    assert "minor-version compatibility" in check["reason"]
    assert "12.0" in check["reason"]


def test_cuda_warn_when_the_driver_reports_no_cuda_version():
    check = _cuda("570.124.06", None, "12.4")["driver.cuda.12.4"]
    assert check["verdict"] == "WARN"
    assert check["actual"] == "570.124.06 (no CUDA version reported)"


def test_cuda_fail_below_the_floor_names_driver_floor_and_table():
    check = _cuda("525.60.13", "12.0", "13.0")["driver.cuda.13.0"]
    assert check["verdict"] == "FAIL"
    assert check["expected"] == "driver ≥ 580 (CUDA 13.x)"
    for part in ("525.60.13", "580", "CUDA Toolkit release notes"):
        assert part in check["reason"]


@pytest.mark.parametrize("version, words", [("14.2", "known majors: 11, 12, 13"), ("twelve", "invalid CUDA version"),
                                            (12.4, "quote it")])
def test_cuda_fail_never_pass_for_a_version_without_a_floor(version, words):
    checks = preflight_checks("580.65.06", "13.0", [], [version])
    check = _by_id(checks)["driver.cuda.%s" % version]
    assert check["verdict"] == "FAIL"
    assert words in check["reason"]
    assert check["expected"] == "a CUDA major with a known driver floor (11, 12, 13)"


def test_cuda_fail_when_the_driver_reports_an_unreadable_cuda_version():
    assert _cuda("570.124.06", "12.x", "12.4")["driver.cuda.12.4"]["verdict"] == "FAIL"


def test_one_cuda_check_per_declared_version_in_order_without_duplicates():
    checks = preflight_checks("570.124.06", "12.8", [], ["12.4", "11.8", "12.4", " 13 "])
    assert [check["id"] for check in checks][:3] == ["driver.cuda.12.4", "driver.cuda.11.8", "driver.cuda.13"]
    assert [check["verdict"] for check in checks][:3] == ["PASS", "PASS", "FAIL"]


@pytest.mark.parametrize("declared", [[], None])
def test_no_cuda_version_declared_is_one_skip_naming_the_variable(declared):
    checks = _by_id(preflight_checks("570.124.06", "12.8", [], declared))
    check = checks["driver.cuda"]
    assert check["verdict"] == "SKIP"
    assert "no CUDA versions were declared" in check["reason"]
    assert "audit_cuda_versions" in check["reason"]
    assert not [check_id for check_id in checks if check_id.startswith("driver.cuda.")]


def test_cuda_versions_must_be_a_list():
    with pytest.raises(TypeError, match="list"):
        preflight_checks("570.124.06", "12.8", [], "12.4")


# --- preflight: no driver, unreadable driver -------------------------------------------

def test_no_driver_skips_every_check():
    checks = _by_id(preflight_checks(None, None, [], ["12.4", "13.0"]))
    assert sorted(checks) == ["driver.cuda.12.4", "driver.cuda.13.0", "driver.mig_floor"]
    for check in checks.values():
        assert check["verdict"] == "SKIP"
        assert check["reason"] == "no NVIDIA driver found"


def test_an_unreadable_driver_version_fails_every_check():
    checks = _by_id(preflight_checks("570.x", "12.8", [_gpu(0, "NVIDIA A100-SXM4-80GB")], ["12.4"]))
    assert sorted(checks) == ["driver.cuda.12.4", "driver.mig_floor"]
    for check in checks.values():
        assert check["verdict"] == "FAIL"
        assert "invalid NVIDIA driver version '570.x'" in check["reason"]


# --- preflight: MIG checks -------------------------------------------------------------

def _mig(driver, *gpus):
    return _by_id(preflight_checks(driver, "12.8", list(gpus), ["12.4"]))


def test_mig_pass_at_or_above_the_floor():
    checks = _mig("570.124.06", _gpu(0, "NVIDIA A100-SXM4-80GB", "Enabled"), _gpu(1, "NVIDIA A100-SXM4-80GB"))
    for index in (0, 1):
        check = checks["driver.mig_floor.gpu%d" % index]
        assert check["verdict"] == "PASS"
        assert check["title"] == "GPU %d MIG driver floor" % index
        assert check["expected"] == "driver ≥ 450.80.02 (A100 MIG)"
        assert check["actual"] == "570.124.06"
    assert _mig("525.85.12", _gpu(0, "NVIDIA H100 80GB HBM3"))["driver.mig_floor.gpu0"]["verdict"] == "PASS"


def test_mig_warn_below_the_floor_when_mig_is_not_in_use():
    check = _mig("525.60.13", _gpu(3, "NVIDIA H100 80GB HBM3"))["driver.mig_floor.gpu3"]
    assert check["verdict"] == "WARN"
    assert "MIG cannot be enabled on this driver" in check["reason"]
    assert "525.85.12" in check["reason"] and "MIG user guide" in check["reason"]


@pytest.mark.parametrize("gpu, words", [
    (_gpu(2, "NVIDIA H100 80GB HBM3", "Enabled"), "MIG mode is Enabled"),
    (_gpu(2, "NVIDIA H100 80GB HBM3", "Disabled", pending="Enabled"), "MIG mode Enabled is pending"),
    (_gpu(2, "NVIDIA H100 80GB HBM3", "Disabled", devices=[{"index": 0}]), "1 MIG device(s) exist"),
])
def test_mig_fail_below_the_floor_when_mig_is_in_use(gpu, words):
    check = _mig("525.60.13", gpu)["driver.mig_floor.gpu2"]
    assert check["verdict"] == "FAIL"
    assert words in check["reason"]
    assert "below the H100 MIG floor 525.85.12" in check["reason"]


def test_mig_fail_for_a_mig_capable_gpu_the_table_does_not_know():
    check = _mig("570.124.06", _gpu(0, "NVIDIA H800", "Disabled"))["driver.mig_floor.gpu0"]
    assert check["verdict"] == "FAIL"
    assert "unknown GPU model 'NVIDIA H800'" in check["reason"]


@pytest.mark.parametrize("mode", [None, "N/A", "[N/A]", "Not Supported"])
def test_gpus_without_mig_get_one_skip_for_the_node(mode):
    checks = _mig("570.124.06", _gpu(0, "NVIDIA L40S", mode), _gpu(1, "NVIDIA L40S", mode))
    assert sorted(checks) == ["driver.cuda.12.4", "driver.mig_floor"]
    assert checks["driver.mig_floor"]["verdict"] == "SKIP"
    assert checks["driver.mig_floor"]["reason"] == "no GPU on this node is MIG-capable"


def test_mixed_node_checks_only_its_mig_capable_gpus_in_the_fact_order():
    checks = preflight_checks("525.60.13", "12.0", [_gpu(0, "NVIDIA L40S", None), _gpu(1, "NVIDIA H100 PCIe"),
                                                    _gpu(2, "NVIDIA A100 80GB PCIe", "Enabled")], ["12.0"])
    assert [(check["id"], check["verdict"]) for check in checks] == [
        ("driver.cuda.12.0", "PASS"), ("driver.mig_floor.gpu1", "WARN"), ("driver.mig_floor.gpu2", "PASS")]
