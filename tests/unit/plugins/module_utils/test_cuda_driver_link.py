# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The PCIe link read under load: NVML's ctypes table against its documented prototypes, and the read taken while
the copies run, against a fake driver and a fake NVML whose link drops when no copy has run for a while."""

from __future__ import annotations

import ctypes
import threading
import time

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import cuda_driver
from ansible_collections.gpuops.hardening.tests.unit.plugins.module_utils.test_cuda_driver import FakeLibrary

# The prototypes as the NVML API Reference documents them (https://docs.nvidia.com/deploy/nvml-api/, "Initialization
# and Cleanup", "Error reporting", "Device Queries"), keyed by the symbol nvml.h maps each name to.
NVML_DOCUMENTED = {
    "nvmlInit_v2": "nvmlReturn_t nvmlInit_v2 ( void )",
    "nvmlDeviceGetHandleByPciBusId_v2": "nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2 ( const char* pciBusId, "
                                        "nvmlDevice_t* device )",
    "nvmlDeviceGetCurrPcieLinkGeneration": "nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration ( nvmlDevice_t device, "
                                           "unsigned int* currLinkGen )",
    "nvmlDeviceGetMaxPcieLinkGeneration": "nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration ( nvmlDevice_t device, "
                                          "unsigned int* maxLinkGen )",
    "nvmlDeviceGetCurrPcieLinkWidth": "nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth ( nvmlDevice_t device, "
                                      "unsigned int* currLinkWidth )",
    "nvmlDeviceGetMaxPcieLinkWidth": "nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth ( nvmlDevice_t device, "
                                     "unsigned int* maxLinkWidth )",
    "nvmlShutdown": "nvmlReturn_t nvmlShutdown ( void )",
    "nvmlErrorString": "const char* nvmlErrorString ( nvmlReturn_t result )",
}

# nvml.h's typedefs and C's own types, as ctypes types.
NVML_TYPES = {
    "nvmlReturn_t": ctypes.c_int,  # typedef enum nvmlReturn_enum nvmlReturn_t (an int-sized enum)
    "nvmlDevice_t": ctypes.c_void_p,  # typedef struct nvmlDevice_st* nvmlDevice_t
    "unsigned int": ctypes.c_uint,
    "char*": ctypes.c_char_p,
}


def nvml_type(declaration):
    text = declaration.replace("const ", "").replace(" *", "*").strip()
    if text in NVML_TYPES:
        return NVML_TYPES[text]
    assert text.endswith("*"), "no ctypes mapping for %r" % declaration
    return ctypes.POINTER(nvml_type(text[:-1]))


def nvml_prototype(prototype):
    """(name, restype, [argtypes]) of a prototype as the reference prints it."""
    head, parameters = prototype.split("(", 1)
    restype, name = head.strip().rsplit(" ", 1)
    argtypes = [nvml_type(parameter.strip().rsplit(" ", 1)[0]) for parameter in parameters.rstrip(" )").split(",")
                if parameter.strip() != "void"]
    return name, nvml_type(restype), argtypes


def test_every_nvml_function_is_documented_and_nothing_else_is_listed():
    assert sorted(name for name, _restype, _argtypes in cuda_driver.NVML_FUNCTIONS) == sorted(NVML_DOCUMENTED)


@pytest.mark.parametrize("symbol, restype, argtypes", cuda_driver.NVML_FUNCTIONS,
                         ids=[row[0] for row in cuda_driver.NVML_FUNCTIONS])
def test_the_nvml_table_matches_the_documented_prototype(symbol, restype, argtypes):
    name, documented_restype, documented_argtypes = nvml_prototype(NVML_DOCUMENTED[symbol])
    assert symbol == name
    assert restype is documented_restype
    assert list(argtypes) == documented_argtypes


def error_string(code):
    return {3: b"Not Supported", 999: b"Unknown Error"}.get(code)


class FakeNvml:
    """libnvidia-ml's functions as plain Python functions, reading a link that runs at its maximum while copies
    run and for `linger` seconds after the last one, and at `idle_gen` otherwise, as a real link that saves power."""

    def __init__(self, copies, gen_max=4, width_max=16, idle_gen=1, cap=None, fail=None, linger=0.5, read_delay=0.0):
        self.copies = copies
        self.gen_max, self.width_max, self.idle_gen = gen_max, width_max, idle_gen
        self.cap = cap or {}
        self.fail = fail or {}
        self.linger = linger
        self.read_delay = read_delay
        self.calls = []
        for name, _restype, _argtypes in cuda_driver.NVML_FUNCTIONS:
            setattr(self, name, self._function(name))
        self.nvmlErrorString = error_string

    def _function(self, name):
        def function(*args):
            self.calls.append(name)
            if name in self.fail:
                return self.fail[name]
            handler = getattr(self, "_" + name, None)
            if handler:
                handler(*args)
            return 0
        return function

    def loaded(self):
        return self.copies.in_flight or time.monotonic() - self.copies.last_end < self.linger

    def _set(self, pointer, value):
        time.sleep(self.read_delay)
        pointer._obj.value = value

    def _nvmlDeviceGetHandleByPciBusId_v2(self, _bus_id, handle):
        handle._obj.value = 0x2000

    def _nvmlDeviceGetCurrPcieLinkGeneration(self, _handle, value):
        self.read_after = self.copies.copies
        self._set(value, self.cap.get("gen", self.gen_max) if self.loaded() else self.idle_gen)

    def _nvmlDeviceGetMaxPcieLinkGeneration(self, _handle, value):
        self._set(value, self.gen_max)

    def _nvmlDeviceGetCurrPcieLinkWidth(self, _handle, value):
        self._set(value, self.cap.get("width", self.width_max))

    def _nvmlDeviceGetMaxPcieLinkWidth(self, _handle, value):
        self._set(value, self.width_max)


class CopyingLibrary(FakeLibrary):
    """A fake libcuda whose host-to-device copy takes `seconds`, releasing the GIL as a ctypes call does."""

    def __init__(self, seconds=0.005, fail=None):
        super(CopyingLibrary, self).__init__(fail)
        self.seconds = seconds
        self.in_flight = False
        self.last_end = float("-inf")
        self.copies = 0
        self.lock = threading.Lock()

    def _cuMemcpyHtoD_v2(self, *_args):
        self.in_flight = True
        time.sleep(self.seconds)
        with self.lock:
            self.copies += 1
        self.last_end = time.monotonic()
        self.in_flight = False


def copy_answer(library, nvml, seconds=5.0, cases=(("h2d", "pinned", 4096), ("h2d", "pinned", 64)), repeats=2):
    request = {"op": "copy", "pci_bus_id": "0000:3b:00.0", "cases": [list(case) for case in cases], "repeats": repeats,
               "link": {"library": "libnvidia-ml.so.1", "seconds": seconds}}
    return cuda_driver.answer(request, lambda _path: cuda_driver.Driver(library),
                              lambda _path: cuda_driver.Nvml(nvml) if isinstance(nvml, FakeNvml) else nvml(_path))


def test_the_link_is_read_while_the_largest_pinned_copy_runs_and_reads_its_maximum():
    library = CopyingLibrary()
    nvml = FakeNvml(library, linger=0.0)
    # At idle, before any copy, the same link reads Gen1: the read under load is what lifts it.
    idle = cuda_driver.Nvml(FakeNvml(library, linger=0.0))
    assert idle.link(idle.device("0000:3b:00.0"))["gen_current"] == 1
    answer = copy_answer(library, nvml)
    assert answer["ok"] and sorted(answer["seconds"]) == ["h2d/pinned/4096", "h2d/pinned/64"]
    link = answer["link"]
    assert link["ok"] and link["link"] == {"gen_current": 4, "gen_max": 4, "width_current": 16, "width_max": 16}
    assert link["bytes"] == 4096 and 1 <= link["copies_before"] <= link["copies"]
    # NVML opened before the copies and shut down after; only the four link queries ran under load.
    assert nvml.calls[:2] == ["nvmlInit_v2", "nvmlDeviceGetHandleByPciBusId_v2"] and nvml.calls[-1] == "nvmlShutdown"


def test_the_read_comes_after_the_timed_runs_of_the_largest_pinned_case_and_the_copies_go_on_until_it_returns():
    library = CopyingLibrary()
    nvml = FakeNvml(library, read_delay=0.03)
    answer = copy_answer(library, nvml, cases=(("h2d", "pinned", 4096), ("h2d", "pageable", 4096)), repeats=3)
    link = answer["link"]
    # 3 timed runs and a warm-up per case, the loop's copies on top.
    assert library.copies == 2 * (1 + 3) + link["copies"]
    # Four reads of 30 ms each outlast a 5 ms copy: the copies went on through the read.
    assert link["copies"] - link["copies_before"] >= 10
    # Read after the warm-up and the timed runs of the pinned case, before the pageable case's copies.
    assert 4 + link["copies_before"] <= nvml.read_after < 4 + link["copies"]


def test_a_link_capped_under_load_reads_the_cap():
    library = CopyingLibrary()
    link = copy_answer(library, FakeNvml(library, cap={"gen": 2, "width": 8}))["link"]
    assert link["link"] == {"gen_current": 2, "gen_max": 4, "width_current": 8, "width_max": 16}


def test_a_read_that_does_not_return_in_time_is_an_error_and_the_copies_stop():
    library = CopyingLibrary()
    started = time.monotonic()
    link = copy_answer(library, FakeNvml(library, read_delay=1.0), seconds=0.3)["link"]
    assert time.monotonic() - started < 1.0
    assert link["ok"] is False and link["error"].startswith("the link read did not return within 0.3 seconds of copies")


def test_a_link_nvml_does_not_report_is_unsupported():
    library = CopyingLibrary()
    link = copy_answer(library, FakeNvml(library, fail={"nvmlDeviceGetCurrPcieLinkGeneration": 3}))["link"]
    assert link == {"ok": False, "error": "nvmlDeviceGetCurrPcieLinkGeneration: Not Supported (3)", "unsupported": True,
                    "bytes": 4096}
    other = copy_answer(library, FakeNvml(library, fail={"nvmlDeviceGetHandleByPciBusId_v2": 999}))["link"]
    assert other["unsupported"] is False and other["error"] == "nvmlDeviceGetHandleByPciBusId_v2: Unknown Error (999)"


def test_without_nvml_the_copies_are_measured_and_the_link_says_why():
    answer = copy_answer(CopyingLibrary(), cuda_driver.load_nvml)
    assert answer["ok"] and answer["seconds"]
    assert answer["link"]["ok"] is False and answer["link"]["unsupported"] is True
    answer = cuda_driver.answer({"op": "copy", "pci_bus_id": "0000:3b:00.0", "cases": [["h2d", "pinned", 64]],
                                 "repeats": 1, "link": {"library": "libnvml-not-here.so.1", "seconds": 1}},
                                lambda _path: cuda_driver.Driver(CopyingLibrary()))
    assert answer["link"]["error"].startswith("libnvml-not-here.so.1 cannot be loaded: ")


def test_without_a_pinned_case_nothing_is_read():
    answer = copy_answer(CopyingLibrary(), FakeNvml(CopyingLibrary()), cases=(("h2d", "pageable", 64),))
    assert answer["link"] == {"ok": False, "error": "no pinned host-to-device copy ran"}


def test_a_copy_request_without_link_reads_nothing():
    answer = cuda_driver.answer({"op": "copy", "pci_bus_id": "0000:3b:00.0", "cases": [["h2d", "pinned", 64]],
                                 "repeats": 1}, lambda _path: cuda_driver.Driver(CopyingLibrary()))
    assert "link" not in answer


def test_a_failed_copy_under_load_still_frees_and_shuts_nvml_down():
    library = CopyingLibrary()
    nvml = FakeNvml(library, read_delay=0.05)
    calls = []

    def failing_after_timed_runs(*_args):
        calls.append(1)
        return 2 if len(calls) > 3 else 0  # the warm-up and two timed runs succeed, the loop's first copy fails

    library.cuMemcpyHtoD_v2 = failing_after_timed_runs
    answer = copy_answer(library, nvml, cases=(("h2d", "pinned", 64),))
    assert answer == {"ok": False, "error": "cuMemcpyHtoD_v2: out of memory (2)"}
    assert "cuMemFreeHost" in library.calls and nvml.calls[-1] == "nvmlShutdown"
