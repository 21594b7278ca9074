# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`nvidia-ctk runtime configure` of NVIDIA Container Toolkit v1.19.1.

Sources, all NVIDIA/nvidia-container-toolkit at tag v1.19.1:
cmd/nvidia-ctk/runtime/configure/configure.go (flags, defaults, checks, the log lines),
pkg/config/engine/docker/docker.go and option.go, pkg/config/engine/containerd/
containerd.go, config.go and config_drop_in.go, pkg/config/engine/crio/crio.go,
pkg/config/engine/config.go and engine.go, pkg/config/toml/ and pkg/config/raw.go.
A daemon.json a real `nvidia-ctk runtime configure --runtime=docker` wrote, in
NVIDIA/nvidia-container-toolkit issue #378, has the same layout as this one's.

Not emulated: containerd version 1 configs, --config-mode oci-hook.
"""

import copy
import os
import subprocess

from . import ctk_json, ctk_toml

RUNTIMES = ("containerd", "crio", "docker")
DEFAULT_CONFIG = {"containerd": "/etc/containerd/config.toml", "crio": "/etc/crio/crio.conf",
                  "docker": "/etc/docker/daemon.json"}
# v1.19.1 moved the CRI-O drop-in from /etc/crio/conf.d (v1.18) to crio.conf.d, the folder
# CRI-O reads. Docker has no drop-in.
DEFAULT_DROP_IN = {"containerd": "/etc/containerd/conf.d/99-nvidia.toml",
                   "crio": "/etc/crio/crio.conf.d/99-nvidia.toml", "docker": ""}
RUNTIME_SPECIFIC_DEFAULT = "RUNTIME_SPECIFIC_DEFAULT"
RUNTIME_EXECUTABLE = "nvidia-container-runtime"
RUNTIME_EXECUTABLE_PATH = "/usr/bin/nvidia-container-runtime"
CONTAINERD_DEFAULT_VERSION = 2
CONTAINERD_RUNTIME_TYPE = "io.containerd.runc.v2"
# The import pattern written for a dry run (config_drop_in.go importPattern).
STDOUT_IMPORT = "/etc/containerd/conf.d/*.toml"


class CtkError(Exception):
    """A failure nvidia-ctk reports as `level=error msg=...` with exit code 1."""


def validate(options, logger):
    """configure.go validateFlags: fills the defaults in options (a dict) or raises."""
    runtime = options["runtime"]
    mode = options.get("config_mode") or ""
    if mode in ("oci-hook", "hook"):
        raise CtkError("gpuemu: --config-mode %s is not emulated" % mode)
    if mode not in ("", "config-file", "config"):
        logger.warning("Ignoring unsupported config mode for %s: %s" % (runtime, _go_quote(mode)))
    if runtime not in RUNTIMES:
        raise CtkError("unrecognized runtime '%s'" % runtime)
    if runtime in ("containerd", "crio"):
        if options["runtime_path"] == RUNTIME_EXECUTABLE:
            options["runtime_path"] = RUNTIME_EXECUTABLE_PATH
        if not os.path.isabs(options["runtime_path"]):
            raise CtkError("the NVIDIA runtime path %s is not an absolute path" % _go_quote(options["runtime_path"]))
    if runtime == "crio" and options["cdi_enabled"]:
        logger.warning("Ignoring cdi.enabled flag for crio")
        options["cdi_enabled"] = False
    if options.get("executable_path") and runtime == "docker":
        logger.warning("Ignoring executable-path=%s flag for docker" % _go_quote(options["executable_path"]))
        options["executable_path"] = ""
    source = options["config_source"]
    if source == "command" and runtime == "docker":
        logger.warning("A command Config Source is not supported for docker; using file")
        options["config_source"] = "file"
    elif source not in ("command", "file"):
        raise CtkError("unrecognized Config Source: %s" % source)
    if not options.get("config"):
        options["config"] = DEFAULT_CONFIG[runtime]
    if options["drop_in"] == RUNTIME_SPECIFIC_DEFAULT:
        options["drop_in"] = DEFAULT_DROP_IN[runtime]
    if options["drop_in"] and runtime == "docker":
        raise CtkError("runtime docker does not support drop-in configs")
    if options["drop_in"] and not os.path.isabs(options["drop_in"]):
        raise CtkError("the drop-in-config path %s is not an absolute path" % _go_quote(options["drop_in"]))


def _go_quote(text):
    return '"%s"' % text.replace("\\", "\\\\").replace('"', '\\"')


def configure(options, logger, stdout):
    """configure.go configureConfigFile, once validate() has run."""
    engine = {"docker": _Docker, "containerd": _Containerd, "crio": _Crio}[options["runtime"]](options, logger, stdout)
    engine.add_runtime(options["runtime_name"], options["runtime_path"], options["set_as_default"])
    if options["cdi_enabled"]:
        engine.enable_cdi()
    output = "" if options["dry_run"] else (options["drop_in"] or options["config"])
    written = engine.save(output)
    if output:
        if written == 0:
            logger.info("Removed empty config from %s" % output)
        else:
            logger.info("Wrote updated config to %s" % output)
        logger.info("It is recommended that %s daemon be restarted." % options["runtime"])


def write_raw(path, text, stdout):
    """pkg/config/raw.go Raw.Write: "" is stdout (plus a newline), empty output removes the
    file, otherwise the parent folders are made (0755) and the file replaced in place."""
    if not path:
        stdout.write(text + "\n")
        return len(text.encode())
    if not text:
        try:
            os.remove(path)
        except OSError as error:
            raise CtkError("unable to flush config: unable to remove empty file: %s" % error.strerror.lower()) from error
        return 0
    os.makedirs(os.path.dirname(path) or ".", mode=0o755, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return len(text.encode())


def _low_level_runtimes(default_runtime):
    """engine.go GetLowLevelRuntimes: the default runtime unless it is an nvidia* one, runc, crun."""
    names = [default_runtime] if default_runtime and not default_runtime.startswith("nvidia") else []
    return names + ["runc", "crun"]


def _run_config_command(argv):
    """pkg/config/toml/source-cli.go: the runtime's own config dump, as TOML."""
    try:
        output = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as error:
        raise CtkError("failed to run command %s: %s" % (argv, error)) from error
    return ctk_toml.loads(output)


class _Docker:
    """pkg/config/engine/docker: daemon.json as a map, written back whole."""

    def __init__(self, options, logger, stdout):
        self.stdout = stdout
        path = options["config"]
        if os.path.isdir(path):
            raise CtkError("unable to load config for runtime docker: config file is a directory")
        if not os.path.exists(path):
            logger.info("Config file does not exist; using empty config")
            self.config = {}
            return
        logger.info("Loading config from %s" % path)
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        if not text.strip():
            raise CtkError("unable to load config for runtime docker: EOF")
        try:
            self.config = ctk_json.loads(text)
        except ValueError as error:
            raise CtkError("unable to load config for runtime docker: %s" % error) from error

    def add_runtime(self, name, path, set_as_default):
        runtimes = self.config.get("runtimes", {})
        runtimes[name] = {"path": path, "args": []}
        self.config["runtimes"] = runtimes
        if set_as_default:
            self.config["default-runtime"] = name

    def enable_cdi(self):
        # docker.go EnableCDI asserts features to map[string]bool; a decoded daemon.json
        # object is map[string]interface{}, so the assertion fails and any other feature
        # flags are replaced by {"cdi": true}.
        self.config["features"] = {"cdi": True}

    def save(self, path):
        return write_raw(path, ctk_json.dumps(self.config), self.stdout)


class _Containerd:
    """pkg/config/engine/containerd for version 2 and 3 configs: the NVIDIA runtime goes to
    a drop-in that starts as a copy of the whole CRI plugin section of the source config
    (containerd before 2.1 replaces a plugin's table instead of merging it), and the
    top-level config gets the drop-in folder in `imports` and is rewritten."""

    def __init__(self, options, logger, stdout):
        self.stdout = stdout
        self.logger = logger
        self.top_level_path = options["config"]
        if options["config_source"] == "command":
            source = _run_config_command([options.get("executable_path") or "containerd", "config", "dump"])
        else:
            source = self._load(self.top_level_path)
        self.version = self._version(source)
        logger.info("Using config version %d" % self.version)
        if self.version == 1:
            raise CtkError("gpuemu: containerd config version 1 is not emulated")
        self.plugin = "io.containerd.grpc.v1.cri" if self.version == 2 else "io.containerd.cri.v1.runtime"
        logger.info('Using CRI runtime plugin name "%s"' % self.plugin)
        self.source = source
        self.top_level = self._load(self.top_level_path)
        self.drop_in = {}
        cri = ctk_toml.get_path(source, ["plugins", self.plugin])
        if cri is not None:
            ctk_toml.set_path(self.drop_in, ["plugins", self.plugin], copy.deepcopy(cri))

    @staticmethod
    def _load(path):
        if os.path.isdir(path):
            raise CtkError("unable to load config for runtime containerd: failed to load config: config file %s is a directory" % path)
        try:
            return ctk_toml.load_file(path)
        except ctk_toml.TomlError as error:
            raise CtkError("unable to load config for runtime containerd: failed to load config: %s" % error) from error

    @staticmethod
    def _version(tree):
        if not tree:
            return CONTAINERD_DEFAULT_VERSION
        version = tree.get("version")
        if version is None:
            return 1
        if not isinstance(version, int) or isinstance(version, bool):
            raise CtkError("unable to load config for runtime containerd: failed to parse config version: "
                           "unsupported type for version field: %s" % version)
        return version

    def _runtimes_path(self, *rest):
        return ["plugins", self.plugin, "containerd", "runtimes"] + list(rest)

    def _default_options(self):
        default = ctk_toml.get_path(self.source, ["plugins", self.plugin, "containerd", "default_runtime_name"])
        names = _low_level_runtimes(default if isinstance(default, str) else "")
        for name in names:
            options = ctk_toml.get_path(self.source, self._runtimes_path(name))
            if isinstance(options, dict):
                return copy.deepcopy(options)
        self.logger.warning("Could not infer options from runtimes [%s]" % " ".join(names))
        return {"runtime_type": CONTAINERD_RUNTIME_TYPE, "runtime_root": "", "runtime_engine": "",
                "privileged_without_host_devices": False}

    def add_runtime(self, name, path, set_as_default):
        options = self._default_options()
        self.drop_in["version"] = self.version
        ctk_toml.set_path(self.drop_in, self._runtimes_path(name), options)
        ctk_toml.set_path(self.drop_in, self._runtimes_path(name, "options", "BinaryName"), path)
        default_key = ["plugins", self.plugin, "containerd", "default_runtime_name"]
        if set_as_default:
            ctk_toml.set_path(self.drop_in, default_key, name)
        elif ctk_toml.get_path(self.drop_in, default_key) == name:
            ctk_toml.delete_path(self.drop_in, default_key)

    def enable_cdi(self):
        ctk_toml.set_path(self.drop_in, ["plugins", self.plugin, "enable_cdi"], True)

    def _import_pattern(self, drop_in_path):
        return STDOUT_IMPORT if not drop_in_path else os.path.dirname(drop_in_path) + "/*.toml"

    def save(self, drop_in_path):
        if not drop_in_path:
            self.logger.info("Drop-in config:")
        written = write_raw(drop_in_path, ctk_toml.dumps(self.drop_in), self.stdout)
        if written > 0:
            self._ensure_imports(self._import_pattern(drop_in_path))
        else:
            self._simplify(self._import_pattern(drop_in_path))
        top_level_path = self.top_level_path
        if not drop_in_path:
            top_level_path = ""
            self.logger.info("Top-level config:")
        write_raw(top_level_path, ctk_toml.dumps(self.top_level), self.stdout)
        return written

    def _ensure_imports(self, pattern):
        current = self.top_level.get("imports")
        imports = [item for item in current if isinstance(item, str)] if isinstance(current, list) else []
        if pattern in imports:
            return
        if not self.top_level:
            self.top_level["version"] = self.version
        self.top_level["imports"] = imports + [pattern]

    def _simplify(self, pattern):
        if set(self.top_level) == {"version", "imports"} and self.top_level["imports"] == [pattern]:
            del self.top_level["imports"]
        if list(self.top_level) == ["version"]:
            del self.top_level["version"]


class _Crio:
    """pkg/config/engine/crio: the source config is read for the options of its default
    runtime; the NVIDIA runtime is written to an otherwise empty config (the drop-in)."""

    def __init__(self, options, logger, stdout):
        self.stdout = stdout
        self.logger = logger
        if options["config_source"] == "command":
            executable = options.get("executable_path") or "crio"
            try:
                self.source = _run_config_command([executable, "status", "config"])
            except CtkError:
                self.source = _run_config_command(["crio-status", "config"])
        else:
            path = options["config"]
            try:
                self.source = ctk_toml.load_file(path)
            except ctk_toml.TomlError as error:
                raise CtkError("unable to load config for runtime crio: %s" % error) from error
        self.destination = {}

    def _default_options(self):
        default = ctk_toml.get_path(self.source, ["crio", "runtime", "default_runtime"])
        names = _low_level_runtimes(default if isinstance(default, str) else "")
        for name in names:
            options = ctk_toml.get_path(self.source, ["crio", "runtime", "runtimes", name])
            if isinstance(options, dict):
                return copy.deepcopy(options)
        self.logger.warning("Could not infer options from runtimes [%s]" % " ".join(names))
        return None

    def add_runtime(self, name, path, set_as_default):
        options = self._default_options()
        runtime = ["crio", "runtime", "runtimes", name]
        if options is not None:
            ctk_toml.set_path(self.destination, runtime, options)
        ctk_toml.set_path(self.destination, runtime + ["runtime_path"], path)
        ctk_toml.set_path(self.destination, runtime + ["runtime_type"], "oci")
        default_key = ["crio", "runtime", "default_runtime"]
        if set_as_default:
            ctk_toml.set_path(self.destination, default_key, name)
        elif ctk_toml.get_path(self.destination, default_key) == name:
            ctk_toml.delete_path(self.destination, default_key)

    def enable_cdi(self):
        """CRI-O always has CDI where it supports it (crio.go EnableCDI is a no-op)."""

    def save(self, path):
        return write_raw(path, ctk_toml.dumps(self.destination), self.stdout)
