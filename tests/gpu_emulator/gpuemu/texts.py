# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Messages and exit codes of the real tools, kept in one place so tests and
parsers meet the same wording."""

# nvidia-smi exit codes (documented in nvidia-smi(1)).
RC_OK = 0
RC_INVALID_ARGUMENT = 2
RC_NOT_SUPPORTED = 3
RC_QUERY_FAILED = 6
RC_NO_PERMISSION = 4
RC_DRIVER_NOT_LOADED = 9
RC_OTHER = 255
RC_COMMAND_NOT_FOUND = 127

DRIVER_NOT_LOADED = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running.\n\n"
)
NO_DEVICES = "No devices were found\n"
VERSION_MISMATCH = "Failed to initialize NVML: Driver/library version mismatch\n"

# Canned failures selectable with faults.driver: (rc, stdout).
DRIVER_FAULTS = {
    "not_loaded": (RC_DRIVER_NOT_LOADED, DRIVER_NOT_LOADED),
    "no_devices": (RC_QUERY_FAILED, NO_DEVICES),
    "version_mismatch": (18, VERSION_MISMATCH),
}

INVALID_COMBINATION = "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n"
UNKNOWN_OPTION = "ERROR: Option %s is not recognized. Please run 'nvidia-smi -h'.\n\n"
OPTION_NOT_VALID = "ERROR: Option %s is not valid for this command. Please run 'nvidia-smi -h' for help.\n\n"
XML_NEEDS_QUERY = ("Invalid combination of input arguments. Specify -q/--query and -x/--xml-format to run an XML query.  "
                   "Please run 'nvidia-smi -h' for help.\n")
FORMAT_MODIFIER = "Format modifier is not recognized.\n"
INVALID_FIELD = 'Field "%s" is not a valid field to query.\n\n'
ALL_DONE = "All done.\n"

IN_USE = "In use by another client"
NOT_SUPPORTED = "Not Supported"
# After a refused reset; the plural form is the one NVIDIA/mig-parted #181 shows for 4 GPUs.
IN_USE_DEVICES = (
    "%d %s currently being used by one or more other processes (e.g., Fabric Manager, "
    "CUDA application, graphics application such as an X server, or a monitoring application "
    "such as another instance of nvidia-smi). Please first kill all processes using %s "
    "and all compute applications running in the system.\n"
)


def in_use_devices(count):
    if count == 1:
        return IN_USE_DEVICES % (count, "device is", "this device")
    return IN_USE_DEVICES % (count, "devices are", "these devices")


MIG_PENDING = "Warning: MIG mode is in pending %s state for GPU %s:%s\n"
MIG_PENDING_IN_USE = (
    "%s is currently being used by one or more other processes (e.g. CUDA application or a "
    "monitoring application such as another instance of nvidia-smi). Please first kill all "
    "processes using the device and retry the command or reboot the system to make MIG mode effective.\n"
)
MIG_PENDING_RESET = "Reboot the system or try nvidia-smi --gpu-reset to make MIG mode effective on GPU %s\n"
# A setter run by a non-root user. The -pm line is the real one (a captured session,
# "Unable to set persistence mode for GPU ...: Insufficient Permissions"); -c and -mig
# follow the same "Unable to ... for GPU <id>: <NVML error>" form nvidia-smi uses for
# their other failures, and -r the reset failure list. Exit code 4 is nvidia-smi(1)'s
# "the current user does not have permission to access this device or perform this
# operation".
INSUFFICIENT_PERMISSIONS = "Insufficient Permissions"
SETTER_DENIED = {
    "pm": "Unable to set persistence mode for GPU %s: " + INSUFFICIENT_PERMISSIONS + "\n",
    "compute": "Unable to set the compute mode for GPU %s: " + INSUFFICIENT_PERMISSIONS + "\n",
    "mig_enable": "Unable to enable MIG Mode for GPU %s: " + INSUFFICIENT_PERMISSIONS + "\n",
    "mig_disable": "Unable to disable MIG Mode for GPU %s: " + INSUFFICIENT_PERMISSIONS + "\n",
}
TERMINATING = "Terminating early due to previous errors.\n"
TREATING_AS_WARNING = "Treating as warning and moving on.\n"

NO_MIG_SUPPORTED = "No MIG-supported devices found.\n"
NO_MIG_ENABLED = "No MIG-enabled devices found.\n"
NO_GPU_INSTANCES = "No GPU instances found: Not Found\n"
NO_COMPUTE_INSTANCES = "No compute instances found: Not Found\n"

PERSISTENCED_FAILED = "nvidia-persistenced failed to initialize. Check syslog for more details.\n"
PERSISTENCED_BAD_OPTION = ('nvidia-persistenced: unrecognized option: "%s"\n\n'
                           "ERROR: Invalid commandline, please run `nvidia-persistenced --help` for usage information.\n\n")

MPS_NO_DAEMON = "Cannot find MPS control daemon process\n"
MPS_ALREADY_RUNNING = "An instance of this daemon is already running\n"
# Assumptions (no source shows the real texts): -multiuser-server refused.
MPS_MULTIUSER_NEEDS_ROOT = "The MPS multi-user server must be started by the superuser\n"
MPS_MULTIUSER_NOT_SUPPORTED = "The MPS multi-user server is not supported on GPUs older than Volta\n"

# CUDA runtime errors of the emulated CUDA application: (code, name, the text
# cudaGetErrorString gives). Codes and names: CUDA runtime API, cudaError. The text
# for cudaErrorDevicesUnavailable is the one CUDA 11 and later print (ggml-org/llama.cpp
# #11841, pytorch/pytorch #100691); releases before said "all CUDA-capable devices are
# busy or unavailable" (NVIDIA/DIGITS #2005, error 46). The text for cudaErrorNoDevice
# is an assumption. The line around them is the emulator's own.
CUDA_DEVICES_UNAVAILABLE = (46, "cudaErrorDevicesUnavailable", "CUDA-capable device(s) is/are busy or unavailable")
CUDA_NO_DEVICE = (100, "cudaErrorNoDevice", "no CUDA-capable device is detected")
# Code, name and text as CUDA's bandwidthTest sample prints them on an NVSwitch node
# without Fabric Manager (pytorch/pytorch #35710: "code=802(cudaErrorSystemNotReady)",
# "system not yet initialized").
CUDA_SYSTEM_NOT_READY = (802, "cudaErrorSystemNotReady", "system not yet initialized")
CUDA_ERROR = "gpuemu-cuda-app: CUDA error %d (%s): %s\n"

# nv-fabricmanager. --version: "Fabric Manager version is : 535.161.08" (leptonai/gpud's
# parser test of the real output). The version check's log line, as journald shows it
# (NVIDIA/gpu-operator #544, siderolabs/pkgs #720, NVIDIA/nvtrust #55): first the
# package's own version, then the loaded driver's. Without NVSwitches (two RTX 4090,
# data-infra/cube-studio #29) the NVSwitch query fails with the warning below. Both
# end the start with exit status 1 ("status=1/FAILURE" in those journals).
FM_VERSION = "Fabric Manager version is : %s\n"
FM_VERSION_MISMATCH = ("fabric manager NVIDIA GPU driver interface version %s don't match with driver version %s. "
                       "Please update with matching NVIDIA driver package.\n")
FM_NO_NVSWITCH = ("request to query NVSwitch device information from NVSwitch driver failed with "
                  "error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]\n")
