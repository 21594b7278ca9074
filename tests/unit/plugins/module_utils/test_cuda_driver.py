# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ctypes table against the CUDA Driver API's prototypes, and the measurements against a fake driver."""

from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess
import sys

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import cuda_driver

# The prototypes as the CUDA Driver API reference documents them
# (https://docs.nvidia.com/cuda/cuda-driver-api/, modules Initialization, Version
# Management, Device Management, Primary Context Management, Context Management,
# Memory Management, Error Handling), keyed by the symbol cuda.h maps each name to
# on a 64-bit build (#define cuMemAlloc cuMemAlloc_v2 and so on).
DOCUMENTED = {
    "cuInit": "CUresult cuInit ( unsigned int Flags )",
    "cuDriverGetVersion": "CUresult cuDriverGetVersion ( int* driverVersion )",
    "cuDeviceGetByPCIBusId": "CUresult cuDeviceGetByPCIBusId ( CUdevice* dev, const char* pciBusId )",
    "cuDevicePrimaryCtxRetain": "CUresult cuDevicePrimaryCtxRetain ( CUcontext* pctx, CUdevice dev )",
    "cuCtxSetCurrent": "CUresult cuCtxSetCurrent ( CUcontext ctx )",
    "cuDevicePrimaryCtxRelease_v2": "CUresult cuDevicePrimaryCtxRelease ( CUdevice dev )",
    "cuCtxSynchronize": "CUresult cuCtxSynchronize ( void )",
    "cuMemAlloc_v2": "CUresult cuMemAlloc ( CUdeviceptr* dptr, size_t bytesize )",
    "cuMemFree_v2": "CUresult cuMemFree ( CUdeviceptr dptr )",
    "cuMemAllocHost_v2": "CUresult cuMemAllocHost ( void** pp, size_t bytesize )",
    "cuMemFreeHost": "CUresult cuMemFreeHost ( void* p )",
    "cuMemcpyHtoD_v2": "CUresult cuMemcpyHtoD ( CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount )",
    "cuMemcpyDtoH_v2": "CUresult cuMemcpyDtoH ( void* dstHost, CUdeviceptr srcDevice, size_t ByteCount )",
    "cuGetErrorString": "CUresult cuGetErrorString ( CUresult error, const char** pStr )",
}

# cuda.h's typedefs on a 64-bit build, and C's own types, as ctypes types.
C_TYPES = {
    "CUresult": ctypes.c_int,  # typedef enum cudaError_enum CUresult (an int-sized enum)
    "CUdevice": ctypes.c_int,  # typedef CUdevice_v1 CUdevice; typedef int CUdevice_v1
    "CUdeviceptr": ctypes.c_ulonglong,  # typedef unsigned long long CUdeviceptr_v2
    "CUcontext": ctypes.c_void_p,  # typedef struct CUctx_st *CUcontext
    "unsigned int": ctypes.c_uint,
    "int": ctypes.c_int,
    "size_t": ctypes.c_size_t,
    "void*": ctypes.c_void_p,
    "char*": ctypes.c_char_p,
}


def ctypes_of(declaration):
    """The ctypes type of a C parameter or return type as the reference spells it."""
    text = re.sub(r"\bconst\s+", "", declaration).replace(" *", "*").strip()
    if text in C_TYPES:
        return C_TYPES[text]
    assert text.endswith("*"), "no ctypes mapping for %r" % declaration
    return ctypes.POINTER(ctypes_of(text[:-1]))


def parse(prototype):
    """(name, restype, [argtypes]) of a prototype as the reference prints it."""
    match = re.match(r"^\s*(\w+)\s+(\w+)\s*\((.*)\)\s*$", prototype)
    restype, name, parameters = match.groups()
    argtypes = []
    for parameter in parameters.split(","):
        parameter = parameter.strip()
        if parameter == "void":
            continue
        # The last word is the parameter's name; what is before it is its type.
        argtypes.append(ctypes_of(re.match(r"^(.*?)\s*\w+$", parameter).group(1)))
    return name, C_TYPES[restype], argtypes


def test_every_function_is_documented_and_nothing_else_is_listed():
    assert sorted(name for name, _restype, _argtypes in cuda_driver.FUNCTIONS) == sorted(DOCUMENTED)


@pytest.mark.parametrize("symbol, restype, argtypes", cuda_driver.FUNCTIONS, ids=[row[0] for row in cuda_driver.FUNCTIONS])
def test_the_table_matches_the_documented_prototype(symbol, restype, argtypes):
    name, documented_restype, documented_argtypes = parse(DOCUMENTED[symbol])
    assert symbol.split("_v2")[0] == name
    assert restype is documented_restype
    assert list(argtypes) == documented_argtypes


def test_a_pointer_of_a_pointer_parses():
    assert parse("CUresult f ( const char** p )")[2] == [ctypes.POINTER(ctypes.c_char_p)]


def test_sizes_are_those_of_a_64_bit_build():
    assert ctypes.sizeof(cuda_driver.CUdeviceptr) == 8
    assert ctypes.sizeof(cuda_driver.CUcontext) == ctypes.sizeof(ctypes.c_void_p)


class FakeLibrary:
    """libcuda's functions as plain Python functions: each records its call and succeeds unless told otherwise."""

    def __init__(self, fail=None):
        self.calls = []
        self.fail = fail or {}
        self.allocated = 0
        for name, _restype, _argtypes in cuda_driver.FUNCTIONS:
            setattr(self, name, self._function(name))

    def _function(self, name):
        def function(*args):
            self.calls.append(name)
            if name in self.fail:
                return self.fail[name]
            handler = getattr(self, "_" + name, None)
            if handler:
                handler(*args)
            return 0
        # A plain function, like a ctypes function pointer, takes argtypes and restype attributes.
        return function

    def _cuDriverGetVersion(self, version):
        version._obj.value = 12040

    def _cuDevicePrimaryCtxRetain(self, context, _device):
        context._obj.value = 0x1000

    def _cuMemAlloc_v2(self, pointer, size):
        pointer._obj.value = 0x7f0000000000
        self.allocated += size

    def _cuMemAllocHost_v2(self, pointer, size):
        self.pinned = (ctypes.c_char * size)()
        pointer._obj.value = ctypes.addressof(self.pinned)
        self.allocated += size

    def _cuGetErrorString(self, code, text):
        text._obj.value = b"out of memory" if code == 2 else None


def fake_driver(**fail):
    return cuda_driver.Driver(FakeLibrary(fail))


def test_the_binding_sets_every_signature():
    driver = fake_driver()
    for name, restype, argtypes in cuda_driver.FUNCTIONS:
        assert getattr(driver.library, name).restype is restype
        assert getattr(driver.library, name).argtypes == list(argtypes)


def test_a_missing_symbol_is_a_cuda_error():
    library = FakeLibrary()
    del library.cuDevicePrimaryCtxRelease_v2
    with pytest.raises(cuda_driver.CudaError, match="no cuDevicePrimaryCtxRelease_v2; the driver is too old"):
        cuda_driver.Driver(library)


def test_an_error_names_the_call_and_the_driver_text():
    driver = fake_driver(cuMemAlloc_v2=2)
    with pytest.raises(cuda_driver.CudaError, match=r"cuMemAlloc_v2: out of memory \(2\)"):
        driver.call("cuMemAlloc_v2", ctypes.byref(cuda_driver.CUdeviceptr()), 1)


def test_an_unknown_error_code_is_said_as_a_number():
    assert fake_driver().error_text(999) == "CUDA error 999"


def ticking_clock(step=0.01):
    now = [0.0]

    def clock():
        now[0] += step
        return now[0]
    return clock


def test_copies_time_each_case_after_a_warm_up_and_free_everything():
    driver = fake_driver()
    cases = [("h2d", "pinned", 1024), ("d2h", "pageable", 2048)]
    seconds = cuda_driver.measure_copies(driver, "0000:3b:00.0", cases, repeats=3, clock=ticking_clock())
    assert sorted(seconds) == ["d2h/pageable/2048", "h2d/pinned/1024"]
    assert all(len(runs) == 3 and all(value > 0 for value in runs) for runs in seconds.values())
    calls = driver.library.calls
    # 1 warm-up + 3 timed copies per case
    assert calls.count("cuMemcpyHtoD_v2") == 4 and calls.count("cuMemcpyDtoH_v2") == 4
    assert calls.count("cuMemAlloc_v2") == calls.count("cuMemFree_v2") == 1
    assert calls.count("cuMemAllocHost_v2") == calls.count("cuMemFreeHost") == 1
    assert calls[-1] == "cuDevicePrimaryCtxRelease_v2"
    # One buffer of each kind, as large as the largest case.
    assert driver.library.allocated == 2 * 2048


def test_a_failed_copy_still_frees_what_was_allocated():
    driver = fake_driver(cuMemcpyHtoD_v2=2)
    with pytest.raises(cuda_driver.CudaError):
        cuda_driver.measure_copies(driver, "0000:3b:00.0", [("h2d", "pinned", 64)], repeats=1)
    calls = driver.library.calls
    assert "cuMemFreeHost" in calls and "cuMemFree_v2" in calls and calls[-1] == "cuDevicePrimaryCtxRelease_v2"


def test_no_pinned_buffer_without_a_pinned_case():
    driver = fake_driver()
    cuda_driver.measure_copies(driver, "0000:3b:00.0", [("h2d", "pageable", 64)], repeats=1)
    assert "cuMemAllocHost_v2" not in driver.library.calls


def test_startup_runs_from_cuinit_to_a_current_primary_context():
    driver = fake_driver()
    assert cuda_driver.measure_startup(driver, "0000:3b:00.0", clock=ticking_clock(0.25)) == pytest.approx(0.25)
    assert driver.library.calls == ["cuInit", "cuDeviceGetByPCIBusId", "cuDevicePrimaryCtxRetain", "cuCtxSetCurrent",
                                    "cuCtxSynchronize", "cuDevicePrimaryCtxRelease_v2"]


def test_answers():
    def loader(_path):
        return fake_driver()
    assert cuda_driver.answer({"op": "probe"}, loader) == {"ok": True, "driver_api_version": 12040}
    assert cuda_driver.answer({"op": "startup", "pci_bus_id": "0000:3b:00.0"}, loader)["ok"]
    copy = cuda_driver.answer({"op": "copy", "pci_bus_id": "0000:3b:00.0", "cases": [["h2d", "pinned", 64]], "repeats": 2}, loader)
    assert list(copy["seconds"]) == ["h2d/pinned/64"]
    assert cuda_driver.answer({"op": "nothing"}, loader)["ok"] is False


def test_a_missing_library_is_an_answer_not_a_traceback():
    answer = cuda_driver.answer({"op": "probe", "library": "libcuda-not-here.so.1"})
    assert answer["ok"] is False
    assert answer["error"].startswith("libcuda-not-here.so.1 cannot be loaded: ")


def test_the_file_runs_alone_from_stdin_as_the_module_runs_it():
    """Only the standard library: the module sends this file's text to `python3 -` in a fresh process."""
    with open(cuda_driver.__file__, encoding="utf-8") as handle:
        source = handle.read()
    request = json.dumps({"op": "probe", "library": "libcuda-not-here.so.1"})
    done = subprocess.run([sys.executable, "-", request], input=source, capture_output=True, text=True, check=True,
                          timeout=60, env=dict(os.environ, PYTHONPATH=""), cwd="/")
    assert json.loads(done.stdout.strip().splitlines()[-1])["ok"] is False


def test_the_pageable_buffer_is_written_before_it_is_timed():
    # calloc'd pages would all be the kernel's zero page until written.
    assert set(cuda_driver._pageable(3 * 4096).raw) == {1}
