# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulated `nvidia-ctk runtime configure` (toolkit v1.19.1) against what the real one
writes: NVIDIA/nvidia-container-toolkit v1.19.1 cmd/nvidia-ctk/runtime/configure/
configure_test.go, pkg/config/engine/{docker,containerd,crio} and go-toml v1.9.5's writer."""

from __future__ import annotations

import json
import os
import re

import pytest

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api

LOG_LINE = re.compile(r'^time="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)" level=(info|warning|error) msg=(.*)$')


@pytest.fixture
def ctk(make_state):
    path = make_state("l40s_4x")

    def _run(*argv):
        return api.run("nvidia-ctk", list(argv), path)
    return _run


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def messages(stderr):
    """The msg of each logrus line, unquoted; every line must have the logrus form."""
    found = []
    for line in stderr.splitlines():
        match = LOG_LINE.match(line)
        assert match, line
        text = match.group(3)
        found.append(json.loads(text) if text.startswith('"') else text)
    return found


# ---- docker -------------------------------------------------------------------------

def test_docker_registers_the_runtime_and_keeps_every_other_key(ctk, tmp_path):
    config = str(tmp_path / "etc/docker/daemon.json")
    write(config, '{"storage-driver": "overlay2", "log-opts": {"max-size": "100m"}, "live-restore": true,\n'
                  ' "max-concurrent-downloads": 3, "runtimes": {"crun": {"path": "/usr/bin/crun"}}}\n')
    rc, out, err = ctk("runtime", "configure", "--runtime=docker", "--config", config, "--set-as-default")
    assert rc == 0 and out == ""
    assert messages(err) == ["Loading config from %s" % config, "Wrote updated config to %s" % config,
                             "It is recommended that docker daemon be restarted."]
    text = read(config)
    # json.MarshalIndent: four spaces, sorted keys, numbers back as Go wrote them, no final newline.
    assert not text.endswith("\n")
    assert text.splitlines()[:3] == ["{", '    "default-runtime": "nvidia",', '    "live-restore": true,']
    assert json.loads(text) == {
        "default-runtime": "nvidia", "live-restore": True, "log-opts": {"max-size": "100m"},
        "max-concurrent-downloads": 3, "storage-driver": "overlay2",
        "runtimes": {"crun": {"path": "/usr/bin/crun"}, "nvidia": {"args": [], "path": "nvidia-container-runtime"}}}


def test_docker_without_a_config_starts_from_an_empty_one_and_sets_no_default(ctk, tmp_path):
    config = str(tmp_path / "daemon.json")
    rc, _out, err = ctk("runtime", "configure", "--runtime=docker", "--config=" + config)
    assert rc == 0
    assert messages(err)[0] == "Config file does not exist; using empty config"
    assert read(config) == '{\n    "runtimes": {\n        "nvidia": {\n            "args": [],\n' \
                           '            "path": "nvidia-container-runtime"\n        }\n    }\n}'
    # Running it again changes nothing.
    assert ctk("runtime", "configure", "--runtime=docker", "--config=" + config)[0] == 0
    assert "default-runtime" not in read(config)


def test_docker_cdi_replaces_the_other_feature_flags_as_the_real_tool_does(ctk, tmp_path):
    # docker.go EnableCDI: a decoded "features" object fails its map[string]bool assertion.
    config = str(tmp_path / "daemon.json")
    write(config, '{"features": {"buildkit": true}}')
    assert ctk("runtime", "configure", "--runtime=docker", "--config", config, "--cdi.enabled")[0] == 0
    assert json.loads(read(config))["features"] == {"cdi": True}


def test_docker_refuses_a_drop_in_and_an_empty_config(ctk, tmp_path):
    rc, _out, err = ctk("runtime", "configure", "--runtime=docker", "--drop-in-config", "/etc/docker/x.json")
    assert rc == 1 and messages(err) == ["runtime docker does not support drop-in configs"]
    config = str(tmp_path / "daemon.json")
    write(config, "")
    rc, _out, err = ctk("runtime", "configure", "--runtime=docker", "--config", config)
    assert rc == 1 and messages(err)[-1] == "unable to load config for runtime docker: EOF"
    assert read(config) == ""


def test_an_unknown_runtime_fails_before_any_change(ctk):
    rc, out, err = ctk("runtime", "configure", "--runtime=podman")
    assert (rc, out) == (1, "")
    assert messages(err) == ["unrecognized runtime 'podman'"]


# ---- containerd ---------------------------------------------------------------------

CONTAINERD_DROP_IN = """version = 2

[plugins]

  [plugins."io.containerd.grpc.v1.cri"]

    [plugins."io.containerd.grpc.v1.cri".containerd]

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes]

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
          privileged_without_host_devices = false
          runtime_engine = ""
          runtime_root = ""
          runtime_type = "io.containerd.runc.v2"

          [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
            BinaryName = "/usr/bin/nvidia-container-runtime"
"""


def test_containerd_without_a_config_gets_a_drop_in_and_an_imports_line(ctk, tmp_path):
    config, drop_in = str(tmp_path / "etc/containerd/config.toml"), str(tmp_path / "etc/containerd/conf.d/99-nvidia.toml")
    rc, _out, err = ctk("runtime", "configure", "--runtime=containerd", "--config", config, "--drop-in-config", drop_in)
    assert rc == 0
    assert messages(err) == [
        "Using config version 2", 'Using CRI runtime plugin name "io.containerd.grpc.v1.cri"',
        "Could not infer options from runtimes [runc crun]", "Wrote updated config to %s" % drop_in,
        "It is recommended that containerd daemon be restarted."]
    assert read(drop_in) == CONTAINERD_DROP_IN
    assert read(config) == 'imports = ["%s/etc/containerd/conf.d/*.toml"]\nversion = 2\n' % tmp_path


def test_containerd_keeps_other_imports_and_rewrites_the_top_level_without_comments(ctk, tmp_path):
    config, drop_in = str(tmp_path / "config.toml"), str(tmp_path / "conf.d/99-nvidia.toml")
    write(config, '# site config\nversion = 2\nimports = ["/foo/bar/*.toml"]\n\n[grpc]\n  address = "/run/containerd/containerd.sock"\n')
    assert ctk("runtime", "configure", "--runtime=containerd", "--config", config, "--drop-in-config", drop_in)[0] == 0
    # go-toml's Marshal: plain values sorted first, then tables; the comment is gone.
    assert read(config) == ('imports = ["/foo/bar/*.toml", "%s/conf.d/*.toml"]\nversion = 2\n\n'
                            '[grpc]\n  address = "/run/containerd/containerd.sock"\n' % tmp_path)
    before = read(config)
    assert ctk("runtime", "configure", "--runtime=containerd", "--config", config, "--drop-in-config", drop_in)[0] == 0
    assert read(config) == before and read(config).count("conf.d/*.toml") == 1


def test_containerd_copies_the_cri_section_and_the_runc_options_into_the_drop_in(ctk, tmp_path):
    config, drop_in = str(tmp_path / "config.toml"), str(tmp_path / "conf.d/99-nvidia.toml")
    write(config, """version = 2
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.8"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = true
""")
    rc, _out, err = ctk("runtime", "configure", "--runtime=containerd", "--config", config, "--drop-in-config", drop_in,
                        "--set-as-default", "--cdi.enabled")
    assert rc == 0 and not any("Could not infer" in line for line in messages(err))
    text = read(drop_in)
    assert '    sandbox_image = "registry.k8s.io/pause:3.8"\n' in text
    assert '      default_runtime_name = "nvidia"\n' in text and "    enable_cdi = true\n" in text
    runtime = text.split('[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n')[1]
    assert runtime.startswith('          runtime_type = "io.containerd.runc.v2"\n\n'
                              '          [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
                              '            BinaryName = "/usr/bin/nvidia-container-runtime"\n'
                              '            SystemdCgroup = true\n\n')
    # The runc runtime stays in the copied section, and in config.toml.
    assert "containerd.runtimes.runc]" in text and "SystemdCgroup = true" in read(config)


def test_containerd_version_3_uses_the_new_cri_plugin_name(ctk, tmp_path):
    config, drop_in = str(tmp_path / "config.toml"), str(tmp_path / "conf.d/99-nvidia.toml")
    write(config, "version = 3\n")
    rc, _out, err = ctk("runtime", "configure", "--runtime=containerd", "--config", config, "--drop-in-config", drop_in)
    assert rc == 0 and 'Using CRI runtime plugin name "io.containerd.cri.v1.runtime"' in messages(err)
    assert '[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia.options]' in read(drop_in)
    assert read(drop_in).startswith("version = 3\n")


def test_containerd_dry_run_prints_both_configs_and_writes_nothing(ctk, tmp_path):
    config, drop_in = str(tmp_path / "config.toml"), str(tmp_path / "conf.d/99-nvidia.toml")
    rc, out, err = ctk("runtime", "configure", "--runtime=containerd", "--config", config, "--drop-in-config", drop_in,
                       "--dry-run")
    assert rc == 0 and not os.path.exists(config) and not os.path.exists(drop_in)
    assert out == CONTAINERD_DROP_IN + "\n" + 'imports = ["/etc/containerd/conf.d/*.toml"]\nversion = 2\n\n'
    assert "Drop-in config:" in messages(err) and "Top-level config:" in messages(err)


def test_containerd_version_1_is_not_emulated(ctk, tmp_path):
    config = str(tmp_path / "config.toml")
    write(config, "[plugins.cri]\n")
    rc, _out, err = ctk("runtime", "configure", "--runtime=containerd", "--config", config,
                        "--drop-in-config", str(tmp_path / "conf.d/99-nvidia.toml"))
    assert rc == 1 and "gpuemu: containerd config version 1 is not emulated" in messages(err)


# ---- CRI-O --------------------------------------------------------------------------

def test_crio_writes_the_v1_19_drop_in_with_the_runc_options_and_leaves_crio_conf(ctk, tmp_path):
    config = str(tmp_path / "etc/crio/crio.conf")
    original = ('[crio.runtime]\ndefault_runtime = "runc"\n\n[crio.runtime.runtimes.runc]\n'
                'runtime_path = "/usr/bin/runc"\nruntime_root = "/run/runc"\nmonitor_env = ["PATH=/usr/bin"]\n')
    write(config, original)
    drop_in = str(tmp_path / "etc/crio/crio.conf.d/99-nvidia.toml")
    rc, _out, err = ctk("runtime", "configure", "--runtime=crio", "--config", config, "--drop-in-config", drop_in)
    assert rc == 0
    assert messages(err)[-2:] == ["Wrote updated config to %s" % drop_in, "It is recommended that crio daemon be restarted."]
    assert read(config) == original
    assert read(drop_in) == ('\n[crio]\n\n  [crio.runtime]\n\n    [crio.runtime.runtimes]\n\n'
                             '      [crio.runtime.runtimes.nvidia]\n        monitor_env = ["PATH=/usr/bin"]\n'
                             '        runtime_path = "/usr/bin/nvidia-container-runtime"\n'
                             '        runtime_root = "/run/runc"\n        runtime_type = "oci"\n')


def test_crio_default_paths_follow_toolkit_v1_19(tmp_path):
    from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import ctk_runtime
    assert ctk_runtime.DEFAULT_DROP_IN["crio"] == "/etc/crio/crio.conf.d/99-nvidia.toml"
    assert ctk_runtime.DEFAULT_DROP_IN["containerd"] == "/etc/containerd/conf.d/99-nvidia.toml"
    assert ctk_runtime.DEFAULT_CONFIG == {"containerd": "/etc/containerd/config.toml", "crio": "/etc/crio/crio.conf",
                                          "docker": "/etc/docker/daemon.json"}


def test_crio_refuses_a_relative_runtime_path(ctk):
    rc, _out, err = ctk("runtime", "configure", "--runtime=crio", "--nvidia-runtime-path", "bin/nvidia")
    assert rc == 1 and messages(err) == ['the NVIDIA runtime path "bin/nvidia" is not an absolute path']


def test_containerd_reads_the_running_config_from_the_command_source(ctk, tmp_path):
    # pkg/config/engine/containerd CommandLineSource: `<executable> config dump`; config.toml
    # is still the file that gets the imports line.
    dump = tmp_path / "containerd"
    write(str(dump), '#!/bin/sh\n[ "$1 $2" = "config dump" ] || exit 3\n'
                     'printf \'version = 2\\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\\n'
                     '  runtime_type = "io.containerd.runc.v2"\\n  [plugins."io.containerd.grpc.v1.cri".containerd'
                     '.runtimes.runc.options]\\n    SystemdCgroup = true\\n\'\n')
    os.chmod(str(dump), 0o755)
    config, drop_in = str(tmp_path / "config.toml"), str(tmp_path / "conf.d/99-nvidia.toml")
    write(config, "version = 2\n")
    rc, _out, err = ctk("runtime", "configure", "--runtime=containerd", "--config", config, "--drop-in-config", drop_in,
                        "--config-source=command", "--executable-path", str(dump))
    assert rc == 0, err
    assert "SystemdCgroup = true" in read(drop_in) and "SystemdCgroup" not in read(config)
    assert read(config) == 'imports = ["%s/conf.d/*.toml"]\nversion = 2\n' % tmp_path


def test_docker_replaces_an_older_nvidia_runtime_entry_whole(ctk, tmp_path):
    config = str(tmp_path / "daemon.json")
    write(config, '{"runtimes": {"nvidia": {"path": "/old/nvidia-container-runtime", "runtimeArgs": ["--debug"]}}}')
    assert ctk("runtime", "configure", "--runtime=docker", "--config", config)[0] == 0
    assert json.loads(read(config))["runtimes"] == {"nvidia": {"args": [], "path": "nvidia-container-runtime"}}


def test_quiet_keeps_only_errors_and_a_missing_toolkit_is_command_not_found(ctk, make_state, tmp_path):
    config = str(tmp_path / "daemon.json")
    rc, _out, err = ctk("--quiet", "runtime", "configure", "--runtime=docker", "--config", config)
    assert (rc, err) == (0, "") and os.path.exists(config)
    rc, _out, err = ctk("--quiet", "runtime", "configure", "--runtime=lxc")
    assert rc == 1 and messages(err) == ["unrecognized runtime 'lxc'"]
    # The state's `missing` fault, as for the other tools: the binary is not there.
    path = make_state("l40s_4x", lambda state: state["faults"]["missing"].append("nvidia-ctk"), name="missing.json")
    assert api.run("nvidia-ctk", ["--version"], path) == (127, "", "nvidia-ctk: command not found\n")
