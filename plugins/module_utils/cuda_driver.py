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

:data:`NVML_FUNCTIONS` is the same for the few NVML functions that read a GPU's
PCIe link while the copies run (``libnvidia-ml.so.1``, also installed with every
driver). Source: the NVML API Reference, https://docs.nvidia.com/deploy/nvml-api/
(sections "Initialization and Cleanup", "Error reporting", "Device Queries"); the
``_v2`` names are those nvml.h maps the documented names to.

Nothing here changes a GPU setting: it retains the primary context, allocates
and copies memory, reads the link, and frees and releases what it took.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ctypes
import json
import sys
import threading
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

NVML_LIBRARY = "libnvidia-ml.so.1"

# nvml.h: typedef enum nvmlReturn_enum nvmlReturn_t; typedef struct nvmlDevice_st* nvmlDevice_t.
nvmlReturn_t = ctypes.c_int
nvmlDevice_t = ctypes.c_void_p

NVML_FUNCTIONS = (
    ("nvmlInit_v2", nvmlReturn_t, ()),
    ("nvmlDeviceGetHandleByPciBusId_v2", nvmlReturn_t, (ctypes.c_char_p, ctypes.POINTER(nvmlDevice_t))),
    ("nvmlDeviceGetCurrPcieLinkGeneration", nvmlReturn_t, (nvmlDevice_t, ctypes.POINTER(ctypes.c_uint))),
    ("nvmlDeviceGetMaxPcieLinkGeneration", nvmlReturn_t, (nvmlDevice_t, ctypes.POINTER(ctypes.c_uint))),
    ("nvmlDeviceGetCurrPcieLinkWidth", nvmlReturn_t, (nvmlDevice_t, ctypes.POINTER(ctypes.c_uint))),
    ("nvmlDeviceGetMaxPcieLinkWidth", nvmlReturn_t, (nvmlDevice_t, ctypes.POINTER(ctypes.c_uint))),
    ("nvmlShutdown", nvmlReturn_t, ()),
    ("nvmlErrorString", ctypes.c_char_p, (nvmlReturn_t,)),
)

NVML_SUCCESS = 0
NVML_ERROR_NOT_SUPPORTED = 3

# What the link read answers, in the order the NVML functions are called.
LINK_READINGS = (
    ("gen_current", "nvmlDeviceGetCurrPcieLinkGeneration"),
    ("gen_max", "nvmlDeviceGetMaxPcieLinkGeneration"),
    ("width_current", "nvmlDeviceGetCurrPcieLinkWidth"),
    ("width_max", "nvmlDeviceGetMaxPcieLinkWidth"),
)


def bind_signatures(library, functions):
    """Set each (symbol, restype, argtypes) signature on the library; the first symbol it lacks, or None."""
    for name, restype, argtypes in functions:
        try:
            function = getattr(library, name)
        except AttributeError:
            return name
        function.restype = restype
        function.argtypes = list(argtypes)
    return None


class CudaError(Exception):
    """A driver call that did not return CUDA_SUCCESS, or a library that cannot be loaded."""


class Driver(object):
    """The driver functions of :data:`FUNCTIONS`, with their signatures set, and error checking."""

    def __init__(self, library):
        self.library = library
        missing = bind_signatures(library, FUNCTIONS)
        if missing:
            # A driver older than the function (the _v2 names came with CUDA 11).
            raise CudaError("the CUDA driver library has no %s; the driver is too old" % missing)

    def error_text(self, code):
        text = ctypes.c_char_p()
        if self.library.cuGetErrorString(code, ctypes.byref(text)) == CUDA_SUCCESS and text.value:
            return "%s (%d)" % (text.value.decode("utf-8", "replace"), code)
        return "CUDA error %d" % code

    def call(self, name, *args):
        code = getattr(self.library, name)(*args)
        if code != CUDA_SUCCESS:
            raise CudaError("%s: %s" % (name, self.error_text(code)))


class NvmlError(Exception):
    """An NVML call that did not return NVML_SUCCESS, or a library that cannot be loaded."""

    def __init__(self, message, unsupported=False):
        super(NvmlError, self).__init__(message)
        self.unsupported = unsupported


class Nvml(object):
    """The NVML functions of :data:`NVML_FUNCTIONS`, with their signatures set, and error checking."""

    def __init__(self, library):
        self.library = library
        missing = bind_signatures(library, NVML_FUNCTIONS)
        if missing:
            raise NvmlError("the NVML library has no %s; the driver is too old" % missing, unsupported=True)

    def call(self, name, *args):
        code = getattr(self.library, name)(*args)
        if code != NVML_SUCCESS:
            text = self.library.nvmlErrorString(code)
            raise NvmlError("%s: %s (%d)" % (name, (text or b"NVML error").decode("utf-8", "replace"), code),
                            unsupported=code == NVML_ERROR_NOT_SUPPORTED)

    def device(self, pci_bus_id):
        """The device handle of the GPU at this PCI address (after nvmlInit_v2)."""
        handle = nvmlDevice_t()
        self.call("nvmlDeviceGetHandleByPciBusId_v2", pci_bus_id.encode("ascii"), ctypes.byref(handle))
        return handle

    def link(self, handle):
        """{"gen_current", "gen_max", "width_current", "width_max"} of the device's PCIe link, as NVML reads it now."""
        found = {}
        for key, name in LINK_READINGS:
            value = ctypes.c_uint()
            self.call(name, handle, ctypes.byref(value))
            found[key] = value.value
        return found

    def close(self):
        self.call("nvmlShutdown")


def load_nvml(path=NVML_LIBRARY):
    """NVML, or NvmlError saying why it cannot be loaded."""
    try:
        return Nvml(ctypes.CDLL(path))
    except OSError as problem:
        raise NvmlError("%s cannot be loaded: %s" % (path, problem), unsupported=True)


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


def read_while_copying(copy_once, read, limit_seconds, clock=time.monotonic):
    """{"ok": True, "link": read()'s answer, "copies": n, "copies_before": n} or {"ok": False, "error": why}.

    The copies run back to back in this thread, where the context is current; read() runs in another thread once
    the first copy has finished (the GPU has left idle), and the copies go on until it has returned. This thread
    holds the GIL except inside its driver calls (ctypes releases it there), where it spends all but microseconds
    of each turn, so read() runs while a copy is in flight, never before or after the loop. Both stop after
    limit_seconds: a read that has not returned by then is an error.
    """
    copies = [0]
    first_copy_done, read_done = threading.Event(), threading.Event()
    outcome = {}

    def reader():
        try:
            if first_copy_done.wait(limit_seconds):
                outcome["copies_before"] = copies[0]
                outcome["link"] = read()
        except NvmlError as problem:
            outcome["error"], outcome["unsupported"] = str(problem), problem.unsupported
        finally:
            read_done.set()

    thread = threading.Thread(target=reader, name="link-read")
    thread.daemon = True  # a read stuck in the driver must not keep the process alive
    thread.start()
    deadline = clock() + limit_seconds
    while not read_done.is_set() and clock() < deadline:
        copy_once()
        copies[0] += 1
        first_copy_done.set()
    if not read_done.is_set() or not outcome:
        return {"ok": False, "error": "the link read did not return within %s seconds of copies (%d copies ran)" % (
            limit_seconds, copies[0])}
    if "error" in outcome:
        return {"ok": False, "error": outcome["error"], "unsupported": outcome["unsupported"]}
    return {"ok": True, "link": outcome["link"], "copies": copies[0], "copies_before": outcome["copies_before"]}


class LinkUnderLoad(object):
    """Reads one GPU's PCIe link through NVML while the largest pinned host-to-device copy runs in a loop.

    NVML is loaded and the device opened before the copies, so that only the four link queries run under load.
    ``outcome`` is read_while_copying()'s answer, with the copy size, or why there is none.
    """

    def __init__(self, pci_bus_id, limit_seconds, library=NVML_LIBRARY, loader=load_nvml):
        self.pci_bus_id = pci_bus_id
        self.limit_seconds = limit_seconds
        self.library = library
        self.loader = loader
        self.outcome = {"ok": False, "error": "no pinned host-to-device copy ran"}

    def during(self, copy_once, size):
        try:
            nvml = self.loader(self.library)
            nvml.call("nvmlInit_v2")
        except NvmlError as problem:
            self.outcome = {"ok": False, "error": str(problem), "unsupported": problem.unsupported}
            return
        try:
            handle = nvml.device(self.pci_bus_id)
            self.outcome = dict(read_while_copying(copy_once, lambda: nvml.link(handle), self.limit_seconds),
                                bytes=size)
        except NvmlError as problem:
            self.outcome = {"ok": False, "error": str(problem), "unsupported": problem.unsupported}
        finally:
            try:
                nvml.close()
            except NvmlError:
                pass  # the reading is taken; a failed shutdown changes nothing on the GPU


def measure_copies(driver, pci_bus_id, cases, repeats, clock=time.perf_counter, under_load=None):
    """{"<direction>/<memory>/<bytes>": [seconds per run]} for each case (direction, memory, bytes).

    One device buffer and one host buffer of each kind, as large as the largest
    case, serve every case; each case copies once untimed first (warm-up).
    Right after the timed runs of the largest pinned host-to-device case,
    under_load.during(copy_once, bytes) may go on copying while it reads the link.
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
            if under_load and (direction, memory, size) == ("h2d", "pinned", largest):
                under_load.during(lambda address=host_address, size=size: _copy_once(
                    driver, "h2d", device_pointer, address, size, clock), size)
        return results
    finally:
        for free, handle in reversed(to_free):
            driver.call(free, handle)
        driver.call("cuDevicePrimaryCtxRelease_v2", device)


def answer(request, loader=load, nvml_loader=load_nvml):
    """The JSON-ready answer to one request: {"ok": true, ...} or {"ok": false, "error": why}.

    A copy request with "link" ({"library", "seconds"}) also reads the PCIe link under load (LinkUnderLoad).
    """
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
            link = request.get("link")
            under_load = LinkUnderLoad(request["pci_bus_id"], float(link["seconds"]), link.get("library") or NVML_LIBRARY,
                                       nvml_loader) if link else None
            found = {"ok": True, "seconds": measure_copies(driver, request["pci_bus_id"], cases, int(request["repeats"]),
                                                           under_load=under_load)}
            if under_load:
                found["link"] = under_load.outcome
            return found
        return {"ok": False, "error": "unknown op %r" % request.get("op")}
    except CudaError as problem:
        return {"ok": False, "error": str(problem)}


def main(argv):
    sys.stdout.write(json.dumps(answer(json.loads(argv[1]))) + "\n")


if __name__ == "__main__":
    main(sys.argv)
