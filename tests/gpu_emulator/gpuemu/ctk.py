# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-ctk, the NVIDIA Container Toolkit CLI, as of toolkit v1.19.1:
`--version`, `runtime configure` (ctk_runtime.py), `cdi generate` and `cdi list` (ctk_cdi.py).

Sources: NVIDIA/nvidia-container-toolkit v1.19.1 cmd/nvidia-ctk/main.go (the app name
"NVIDIA Container Toolkit CLI", --debug/--quiet, an error is logged and exits 1),
internal/info/version.go (the version, then `commit: <sha>`, the tag's commit),
cmd/nvidia-ctk/runtime/configure/configure.go, cmd/nvidia-ctk/cdi/generate/generate.go and
cmd/nvidia-ctk/cdi/list/list.go. urfave/cli prints `<name> version <version>`; a real
1.12.0 prints the same two lines (NVIDIA/nvidia-container-toolkit issue #50).
"""

import os
import tempfile

from . import ctk_cdi, ctk_json, ctk_log, ctk_runtime, ctk_yaml

VERSION = "1.19.1"
COMMIT = "09ceee5dde66ba9ce25c7cc69b1ebd5e6e3266fa"
APP_NAME = "NVIDIA Container Toolkit CLI"
CDI_SPEC_DIRS = ["/etc/cdi", "/var/run/cdi"]
GLOBAL_BOOLS = {"--debug": "debug", "-d": "debug", "--quiet": "quiet"}
CONFIGURE_FLAGS = {"--runtime": "runtime", "--config": "config", "--drop-in-config": "drop_in",
                   "--executable-path": "executable_path", "--config-mode": "config_mode",
                   "--config-source": "config_source", "--oci-hook-path": "oci_hook_path",
                   "--nvidia-runtime-name": "runtime_name", "--nvidia-runtime-path": "runtime_path",
                   "--runtime-path": "runtime_path", "--nvidia-runtime-hook-path": "hook_path"}
CONFIGURE_BOOLS = {"--dry-run": "dry_run", "--nvidia-set-as-default": "set_as_default",
                   "--set-as-default": "set_as_default", "--cdi.enabled": "cdi_enabled",
                   "--cdi.enable": "cdi_enabled", "--enable-cdi": "cdi_enabled"}
GENERATE_FLAGS = {"--output": "output", "--format": "format", "--mode": "mode", "--discovery-mode": "mode",
                  "--dev-root": "dev_root", "--driver-root": "driver_root", "--vendor": "vendor",
                  "--cdi-vendor": "vendor", "--class": "class", "--cdi-class": "class",
                  "--nvidia-cdi-hook-path": "hook_path", "--nvidia-ctk-path": "hook_path",
                  "--ldconfig-path": "ldconfig_path"}
GENERATE_LISTS = {"--device-name-strategy": "strategies"}
GENERATE_BOOLS = {"--no-all-device": "no_all_device"}
# pkg/nvcdi/mode.go: the modes there are; the emulator builds only the NVML one.
CDI_MODES = ("auto", "nvml", "csv", "wsl", "management", "gds", "mofed", "imex", "nvswitch", "gdrcopy")
# NVML's errors where the driver is not usable (nvml.h nvmlReturn_t names, as go-nvml prints them).
NVML_ERRORS = {"not_loaded": "ERROR_DRIVER_NOT_LOADED", "version_mismatch": "ERROR_LIB_RM_VERSION_MISMATCH"}


class UsageError(Exception):
    pass


def _parse(argv, values, bools, lists=None):
    """urfave/cli flags: `--name value`, `--name=value`, booleans with an optional =true/false.
    An unknown flag is answered with Go's flag package wording ("flag provided but not
    defined"); the "Incorrect Usage:" lead and exit code 1 are an assumption."""
    lists = lists or {}
    options, positional, index = {}, [], 0
    while index < len(argv):
        word = argv[index]
        name, has_value, value = word.partition("=")
        if name in bools:
            options[bools[name]] = value.lower() != "false" if has_value else True
        elif name in values or name in lists:
            if not has_value:
                index += 1
                if index >= len(argv):
                    raise UsageError("flag needs an argument: %s" % name)
                value = argv[index]
            if name in lists:
                options.setdefault(lists[name], []).append(value)
            else:
                options[values[name]] = value
        elif word.startswith("-") and word != "-":
            raise UsageError("flag provided but not defined: -%s" % word.lstrip("-").split("=")[0])
        else:
            positional.append(word)
        index += 1
    return options, positional


def _configure(argv, logger, stdout):
    parsed = _parse(argv, CONFIGURE_FLAGS, CONFIGURE_BOOLS)[0]
    options = {"runtime": "docker", "config": "", "drop_in": ctk_runtime.RUNTIME_SPECIFIC_DEFAULT,
               "executable_path": "", "config_mode": "", "config_source": "file", "runtime_name": "nvidia",
               "runtime_path": ctk_runtime.RUNTIME_EXECUTABLE, "dry_run": False, "set_as_default": False,
               "cdi_enabled": False}
    options.update(parsed)
    ctk_runtime.validate(options, logger)
    ctk_runtime.configure(options, logger, stdout)


def _write_spec(path, text):
    """The CDI cache's WriteSpec: a temporary file renamed over the target, then mode 0644."""
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o755, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".gpuemu-spec-")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    os.chmod(temporary, 0o644)
    os.replace(temporary, path)


def _generate(argv, state, environ, logger, stdout):
    parsed = _parse(argv, GENERATE_FLAGS, GENERATE_BOOLS, GENERATE_LISTS)[0]
    spec_format = parsed.get("format", environ.get("NVIDIA_CTK_CDI_GENERATE_OUTPUT_FORMAT", "yaml")).lower()
    if spec_format not in ("json", "yaml"):
        raise ctk_runtime.CtkError("invalid output format: %s" % spec_format)
    mode = parsed.get("mode", environ.get("NVIDIA_CTK_CDI_GENERATE_MODE", "auto")).lower()
    if mode not in CDI_MODES:
        raise ctk_runtime.CtkError("invalid discovery mode: %s" % mode)
    if mode not in ("auto", "nvml"):
        raise ctk_runtime.CtkError("gpuemu: discovery mode %s is not emulated" % mode)
    strategies = parsed.get("strategies") or list(ctk_cdi.DEFAULT_STRATEGIES)
    for strategy in strategies:
        if strategy not in ctk_cdi.STRATEGIES:
            raise ctk_runtime.CtkError("invalid device name strategy: %s" % strategy)
    output = parsed.get("output", environ.get("NVIDIA_CTK_CDI_OUTPUT_FILE_PATH", ""))
    implied = ctk_cdi.format_from_filename(output)
    if implied and "format" not in parsed:
        spec_format = implied
    elif implied and implied != spec_format:
        logger.warning('Requested output format "%s" does not match format implied by output file name: "%s"'
                       % (spec_format, implied))
    if state is None:
        raise ctk_runtime.CtkError("failed to generate CDI spec: failed to create device CDI specs: "
                                   "failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND")
    driver_fault = state["faults"].get("driver")
    if driver_fault in NVML_ERRORS:
        raise ctk_runtime.CtkError("failed to generate CDI spec: failed to create device CDI specs: "
                                   "failed to initialize NVML: %s" % NVML_ERRORS[driver_fault])
    if mode == "auto":
        logger.info("Auto-detected mode as 'nvml'")
    logger.info("Using driver version %s" % state["driver_version"])
    if driver_fault == "no_devices":
        state = dict(state, gpus=[])
    document = ctk_cdi.spec(state, strategies, not parsed.get("no_all_device"), parsed.get("vendor", "nvidia.com"),
                            parsed.get("class", "gpu"), parsed.get("driver_root", environ.get("NVIDIA_CTK_DRIVER_ROOT", "")),
                            parsed.get("dev_root", environ.get("NVIDIA_CTK_DEV_ROOT", "")))
    if parsed.get("hook_path"):
        for hook in document["containerEdits"]["hooks"]:
            hook["path"] = parsed["hook_path"]
    text = ctk_yaml.dumps(document) if spec_format == "yaml" else ctk_json.dumps(document, indent=None, sort_keys=False)
    if output:
        _write_spec(ctk_cdi.normalize_path(output, spec_format), text)
    else:
        stdout.write(text)
    logger.info("Generated CDI spec with version %s" % ctk_cdi.CDI_VERSION)


def _read_spec(path):
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    if path.endswith(".json"):
        document = ctk_json.loads(text)
        return document.get("kind"), [device.get("name") for device in document.get("devices") or []]
    return ctk_yaml.kind_and_names(text)


def _list(argv, logger, stdout):
    """list.go: the CDI cache over the spec folders, its errors as warnings, then one
    qualified device name (`vendor/class=name`) a line, sorted (the cache's ListDevices)."""
    parsed = _parse(argv, {}, {}, {"--spec-dir": "spec_dirs"})[0]
    names, errors = set(), {}
    for folder in parsed.get("spec_dirs") or CDI_SPEC_DIRS:
        try:
            files = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in files:
            if os.path.splitext(name)[1] not in (".json", ".yaml"):
                continue
            path = os.path.join(folder, name)
            try:
                kind, devices = _read_spec(path)
            except (OSError, ValueError) as error:
                errors[path] = error
                continue
            names.update("%s=%s" % (kind, device) for device in devices)
    if errors:
        logger.warning("The following registry errors were reported:")
        for path, error in errors.items():
            logger.warning("%s: %s" % (path, error))
    logger.info("Found %d CDI devices" % len(names))
    for name in sorted(names):
        stdout.write(name + "\n")


def main(argv, state, stdout, stderr, environ=None):
    environ = os.environ if environ is None else environ
    if argv[:1] in (["--version"], ["-v"]):
        stdout.write("%s version %s\ncommit: %s\n" % (APP_NAME, VERSION, COMMIT))
        return 0
    level = "info"
    while argv and argv[0] in GLOBAL_BOOLS:
        level = "error" if GLOBAL_BOOLS[argv[0]] == "quiet" else ("debug" if level != "error" else level)
        argv = argv[1:]
    logger = ctk_log.Logger(stderr, level)
    command = argv[:2]
    try:
        if command == ["runtime", "configure"]:
            _configure(argv[2:], logger, stdout)
        elif command == ["cdi", "generate"]:
            _generate(argv[2:], state, environ, logger, stdout)
        elif command == ["cdi", "list"]:
            _list(argv[2:], logger, stdout)
        else:
            stderr.write("gpuemu: nvidia-ctk %s is not emulated\n" % " ".join(argv))
            return 1
    except UsageError as error:
        stderr.write("Incorrect Usage: %s\n" % error)
        return 1
    except ctk_runtime.CtkError as error:
        logger.error(str(error))
        return 1
    return 0
