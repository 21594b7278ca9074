# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CUDA driver API through ctypes, and the measurements that use it.

``libcuda.so.1`` comes with every NVIDIA driver, so nothing else (no CUDA toolkit,
no compiler, no PyTorch) is needed on the node. This file imports only the
standard library: gpuops.hardening.gpu_baseline runs it as it is, in a fresh
``python3 -c`` process per measurement (optionally under ``numactl``), with one
JSON request as its argument (the program itself comes on stdin, ``python3 -``);
it prints one JSON answer.

:data:`FUNCTIONS` is the ctypes signature of every driver function used. Source:
the CUDA Driver API reference, https://docs.nvidia.com/cuda/cuda-driver-api/
(sections "Initialization", "Version Management", "Device Management", "Primary
Context Management", "Context Management", "Memory Management", "Error Handling"). The ``_v2`` names are the
symbols cuda.h maps the documented names to on 64-bit builds. A unit test checks
the table against the documented C prototypes.

Nothing here changes a GPU setting: it retains the primary context, allocates
and copies memory, and frees and releases what it took.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ctypes
import json
import sys
import time

LIBRARY = "libcuda.so.1"

# cuda.h: typedef enum cudaError_enum CUresult; typedef int CUdevice;
# typedef unsigned long long CUdeviceptr (64-bit); typedef struct CUctx_st *CUcontext.
CUresult = ctypes.c_int
CUdevice = ctypes.c_int
CUdeviceptr = ctypes.c_ulonglong
CUcontext = ctypes.c_void_p

# (symbol, restype, argtypes), in the order the measurements use them.
FUNCTIONS = (
    ("cuInit", CUresult, (ctypes.c_uint,)),
    ("cuDriverGetVersion", CUresult, (ctypes.POINTER(ctypes.c_int),)),
    ("cuDeviceGetByPCIBusId", CUresult, (ctypes.POINTER(CUdevice), ctypes.c_char_p)),
    ("cuDevicePrimaryCtxRetain", CUresult, (ctypes.POINTER(CUcontext), CUdevice)),
    ("cuCtxSetCurrent", CUresult, (CUcontext,)),
    ("cuDevicePrimaryCtxRelease_v2", CUresult, (CUdevice,)),
    ("cuCtxSynchronize", CUresult, ()),
    ("cuMemAlloc_v2", CUresult, (ctypes.POINTER(CUdeviceptr), ctypes.c_size_t)),
    ("cuMemFree_v2", CUresult, (CUdeviceptr,)),
    ("cuMemAllocHost_v2", CUresult, (ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t)),
    ("cuMemFreeHost", CUresult, (ctypes.c_void_p,)),
    ("cuMemcpyHtoD_v2", CUresult, (CUdeviceptr, ctypes.c_void_p, ctypes.c_size_t)),
    ("cuMemcpyDtoH_v2", CUresult, (ctypes.c_void_p, CUdeviceptr, ctypes.c_size_t)),
    ("cuGetErrorString", CUresult, (CUresult, ctypes.POINTER(ctypes.c_char_p))),
)

CUDA_SUCCESS = 0


class CudaError(Exception):
    """A driver call that did not return CUDA_SUCCESS, or a library that cannot be loaded."""


class Driver(object):
    """The driver functions of :data:`FUNCTIONS`, with their signatures set, and error checking."""

    def __init__(self, library):
        self.library = library
        for name, restype, argtypes in FUNCTIONS:
            try:
                function = getattr(library, name)
            except AttributeError:
                # A driver older than the function (the _v2 names came with CUDA 11).
                raise CudaError("the CUDA driver library has no %s; the driver is too old" % name)
            function.restype = restype
            function.argtypes = list(argtypes)

    def error_text(self, code):
        text = ctypes.c_char_p()
        if self.library.cuGetErrorString(code, ctypes.byref(text)) == CUDA_SUCCESS and text.value:
            return "%s (%d)" % (text.value.decode("utf-8", "replace"), code)
        return "CUDA error %d" % code

    def call(self, name, *args):
        code = getattr(self.library, name)(*args)
        if code != CUDA_SUCCESS:
            raise CudaError("%s: %s" % (name, self.error_text(code)))


def load(path=LIBRARY):
    """The driver, or CudaError saying why libcuda cannot be loaded."""
    try:
        return Driver(ctypes.CDLL(path))
    except OSError as problem:
        raise CudaError("%s cannot be loaded: %s" % (path, problem))


def open_context(driver, pci_bus_id):
    """The device of the GPU at this PCI address, its primary context current.

    cuInit, then the primary context: the one context the CUDA runtime (and so
    PyTorch and most applications) creates on its first call.
    """
    driver.call("cuInit", 0)
    device = CUdevice()
    driver.call("cuDeviceGetByPCIBusId", ctypes.byref(device), pci_bus_id.encode("ascii"))
    context = CUcontext()
    driver.call("cuDevicePrimaryCtxRetain", ctypes.byref(context), device)
    driver.call("cuCtxSetCurrent", context)
    return device


def measure_startup(driver, pci_bus_id, clock=time.perf_counter):
    """Seconds from cuInit to a usable context: what the first CUDA call of a fresh process costs."""
    started = clock()
    device = open_context(driver, pci_bus_id)
    driver.call("cuCtxSynchronize")
    elapsed = clock() - started
    driver.call("cuDevicePrimaryCtxRelease_v2", device)
    return elapsed


def _pageable(size):
    """Ordinary (pageable) process memory, every page written.

    A large ctypes array comes from calloc, whose pages are mapped lazily: a copy
    from them would read the kernel's shared zero page. Writing them first makes
    the buffer what an application copies from.
    """
    buffer = (ctypes.c_char * size)()
    ctypes.memset(buffer, 1, size)
    return buffer


def _copy_once(driver, direction, device_pointer, host_address, size, clock):
    started = clock()
    if direction == "h2d":
        driver.call("cuMemcpyHtoD_v2", device_pointer, host_address, size)
    else:
        driver.call("cuMemcpyDtoH_v2", host_address, device_pointer, size)
    driver.call("cuCtxSynchronize")
    return clock() - started


def measure_copies(driver, pci_bus_id, cases, repeats, clock=time.perf_counter):
    """{"<direction>/<memory>/<bytes>": [seconds per run]} for each case (direction, memory, bytes).

    One device buffer and one host buffer of each kind, as large as the largest
    case, serve every case; each case copies once untimed first (warm-up).
    Everything allocated is freed, also on error.
    """
    largest = max(size for _direction, _memory, size in cases)
    device = open_context(driver, pci_bus_id)
    device_pointer = CUdeviceptr()
    pinned = ctypes.c_void_p()
    pageable = None
    to_free = []  # (free function, handle), in the order allocated
    try:
        driver.call("cuMemAlloc_v2", ctypes.byref(device_pointer), largest)
        to_free.append(("cuMemFree_v2", device_pointer))
        if any(memory == "pinned" for _direction, memory, _size in cases):
            driver.call("cuMemAllocHost_v2", ctypes.byref(pinned), largest)
            to_free.append(("cuMemFreeHost", pinned))
        if any(memory == "pageable" for _direction, memory, _size in cases):
            pageable = _pageable(largest)
        results = {}
        for direction, memory, size in cases:
            host_address = pinned.value if memory == "pinned" else ctypes.addressof(pageable)
            _copy_once(driver, direction, device_pointer, host_address, size, clock)
            results["%s/%s/%d" % (direction, memory, size)] = [
                _copy_once(driver, direction, device_pointer, host_address, size, clock) for _run in range(repeats)]
        return results
    finally:
        for free, handle in reversed(to_free):
            driver.call(free, handle)
        driver.call("cuDevicePrimaryCtxRelease_v2", device)


def answer(request, loader=load):
    """The JSON-ready answer to one request: {"ok": true, ...} or {"ok": false, "error": why}."""
    try:
        driver = loader(request.get("library") or LIBRARY)
        if request["op"] == "probe":
            driver.call("cuInit", 0)
            version = ctypes.c_int()
            driver.call("cuDriverGetVersion", ctypes.byref(version))
            return {"ok": True, "driver_api_version": version.value}
        if request["op"] == "startup":
            return {"ok": True, "seconds": measure_startup(driver, request["pci_bus_id"])}
        if request["op"] == "copy":
            cases = [tuple(case) for case in request["cases"]]
            return {"ok": True, "seconds": measure_copies(driver, request["pci_bus_id"], cases, int(request["repeats"]))}
        return {"ok": False, "error": "unknown op %r" % request.get("op")}
    except CudaError as problem:
        return {"ok": False, "error": str(problem)}


def main(argv):
    sys.stdout.write(json.dumps(answer(json.loads(argv[1]))) + "\n")


if __name__ == "__main__":
    main(sys.argv)
