# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulated `nvidia-ctk cdi generate` and `cdi list` (toolkit v1.19.1): the devices of
the emulator's GPUs and MIG devices, by index and by UUID, the driver's files named with its
version, the layout of cmd/nvidia-ctk/cdi/generate/generate_test.go, and a spec that goes
stale when the driver or the MIG layout changes."""

from __future__ import annotations

import json
import os
import re

import yaml

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api, nvidia_caps


def ctk(path, *argv, env=None):
    return api.run("nvidia-ctk", list(argv), path, env=env)


def generate(path, tmp_path, *argv, name="nvidia.yaml"):
    output = str(tmp_path / "cdi" / name)
    rc, out, err = ctk(path, "cdi", "generate", "--output", output, *argv)
    assert rc == 0, err
    assert out == ""
    with open(output, encoding="utf-8") as handle:
        return handle.read()


def names(spec):
    return [device["name"] for device in spec["devices"]]


def mig_layout(state):
    """GPU 0 of an A100 80GB node in MIG mode with a 3g.40gb and a 1g.10gb instance."""
    state["gpus"][0]["mig"] = {"current": "Enabled", "pending": "Enabled"}


def test_version_names_the_toolkit_release_and_its_commit(make_state):
    rc, out, err = ctk(make_state("l40s_4x"), "--version")
    assert (rc, err) == (0, "")
    assert out == "NVIDIA Container Toolkit CLI version 1.19.1\ncommit: 09ceee5dde66ba9ce25c7cc69b1ebd5e6e3266fa\n"


def test_whole_gpus_by_index_and_uuid_then_all(make_state, tmp_path):
    path = make_state("l40s_4x")
    text = generate(path, tmp_path)
    spec = yaml.safe_load(text)
    state = api.read_state(path)
    uuids = [gpu["uuid"] for gpu in state["gpus"]]
    assert spec["cdiVersion"] == "0.5.0" and spec["kind"] == "nvidia.com/gpu"
    assert names(spec) == ["0", uuids[0], "1", uuids[1], "2", uuids[2], "3", uuids[3], "all"]
    assert spec["devices"][2]["containerEdits"] == {"deviceNodes": [{"path": "/dev/nvidia1"}]}
    assert spec["devices"][-1]["containerEdits"]["deviceNodes"] == [{"path": "/dev/nvidia%d" % i} for i in range(4)]
    # The layout the real tool writes: `---`, struct field order, four-space indent, "0" quoted.
    assert text.startswith('---\ncdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n    - name: "0"\n'
                           '      containerEdits:\n        deviceNodes:\n            - path: /dev/nvidia0\n')
    assert oct(os.stat(str(tmp_path / "cdi" / "nvidia.yaml")).st_mode & 0o777) == "0o644"


def test_common_edits_carry_the_driver_version(make_state, tmp_path):
    path = make_state("l40s_4x")
    edits = yaml.safe_load(generate(path, tmp_path))["containerEdits"]
    version = api.read_state(path)["driver_version"]
    assert edits["env"] == ["NVIDIA_CTK_LIBCUDA_DIR=/usr/lib/x86_64-linux-gnu", "NVIDIA_VISIBLE_DEVICES=void"]
    assert [node["path"] for node in edits["deviceNodes"]] == [
        "/dev/nvidia-modeset", "/dev/nvidia-uvm-tools", "/dev/nvidia-uvm", "/dev/nvidiactl"]
    mounts = [mount["hostPath"] for mount in edits["mounts"]]
    assert "/usr/lib/x86_64-linux-gnu/libcuda.so.%s" % version in mounts
    assert "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.%s" % version in mounts
    assert "/lib/firmware/nvidia/%s/gsp_ga10x.bin" % version in mounts
    assert all(mount["options"] == ["ro", "nosuid", "nodev", "rbind", "rprivate"] for mount in edits["mounts"])
    hooks = [hook["args"][1] for hook in edits["hooks"]]
    assert hooks == ["create-symlinks", "enable-cuda-compat", "update-ldcache", "disable-device-node-modification"]
    assert edits["hooks"][1]["args"][2] == "--host-driver-version=%s" % version
    assert all(hook["env"] == ["NVIDIA_CTK_DEBUG=false"] for hook in edits["hooks"])


def test_grace_hopper_libraries_live_in_the_aarch64_folder(make_state, tmp_path):
    edits = yaml.safe_load(generate(make_state("gh200"), tmp_path))["containerEdits"]
    assert "NVIDIA_CTK_LIBCUDA_DIR=/usr/lib/aarch64-linux-gnu" in edits["env"]


def test_mig_devices_replace_their_gpu_by_index_and_uuid(make_state, smi, tmp_path):
    path = make_state("a100_8x_mig", mig_layout)
    assert smi(path, "mig", "-i", "0", "-cgi", "9,19", "-C")[0] == 0
    listed = smi(path, "-L")[1]
    mig_uuids = re.findall(r"\(UUID: (MIG-[^)]+)\)", listed)
    spec = yaml.safe_load(generate(path, tmp_path))
    found = names(spec)
    # GPU 0 has MIG on: no device of its own; its MIG devices come after every whole GPU.
    assert "0" not in found and found[:2] == ["1", api.read_state(path)["gpus"][1]["uuid"]]
    assert found[-5:] == ["0:0", mig_uuids[0], "0:1", mig_uuids[1], "all"]
    minors = dict(nvidia_caps.mig_minor_lines())
    state = api.read_state(path)
    instance = sorted(state["gpus"][0]["gpu_instances"], key=lambda i: i["id"])[0]
    ci = instance["compute_instances"][0]
    assert spec["devices"][-5]["containerEdits"]["deviceNodes"] == [
        {"path": "/dev/nvidia0"},
        {"path": "/dev/nvidia-caps/nvidia-cap%d" % minors["gpu0/gi%d/access" % instance["id"]]},
        {"path": "/dev/nvidia-caps/nvidia-cap%d" % minors["gpu0/gi%d/ci%d/access" % (instance["id"], ci["id"])]}]
    all_nodes = [node["path"] for node in spec["devices"][-1]["containerEdits"]["deviceNodes"]]
    assert all_nodes.count("/dev/nvidia0") == 1 and len(all_nodes) == 7 + 1 + 4
    # go-yaml v3 quotes "0:1" (an old base-60 number).
    with open(str(tmp_path / "cdi" / "nvidia.yaml"), encoding="utf-8") as handle:
        assert '    - name: "0:1"\n' in handle.read()


def test_a_spec_goes_stale_when_the_driver_or_the_mig_layout_changes(make_state, smi, tmp_path):
    path = make_state("a100_8x_mig", mig_layout)
    assert smi(path, "mig", "-i", "0", "-cgi", "19", "-C")[0] == 0
    before = yaml.safe_load(generate(path, tmp_path))
    assert "0:0" in names(before)
    state = api.read_state(path)
    state["driver_version"] = "580.65.06"
    api.write_state(state, path)
    after_upgrade = yaml.safe_load(generate(path, tmp_path, name="after.yaml"))
    assert "/usr/lib/x86_64-linux-gnu/libcuda.so.580.65.06" in [m["hostPath"] for m in after_upgrade["containerEdits"]["mounts"]]
    assert after_upgrade["containerEdits"] != before["containerEdits"]
    old_uuid = names(before)[-2]
    assert smi(path, "mig", "-i", "0", "-dci")[0] == 0 and smi(path, "mig", "-i", "0", "-dgi")[0] == 0
    assert smi(path, "mig", "-i", "0", "-cgi", "9", "-C")[0] == 0
    relaid = names(yaml.safe_load(generate(path, tmp_path, name="relaid.yaml")))
    assert old_uuid not in relaid and relaid[-3] == "0:0" and relaid[-2].startswith("MIG-")


def test_strategies_json_output_and_no_all_device(make_state, tmp_path):
    path = make_state("workstation_2gpu")
    text = generate(path, tmp_path, "--device-name-strategy", "type-index", "--no-all-device", name="nvidia.json")
    # json.Marshal: compact, fields in struct order.
    assert text.startswith('{"cdiVersion":"0.5.0","kind":"nvidia.com/gpu","devices":[{"name":"gpu0",')
    assert names(json.loads(text)) == ["gpu0", "gpu1"]
    rc, _out, err = ctk(path, "cdi", "generate", "--device-name-strategy", "bus-id")
    assert rc == 1 and "invalid device name strategy: bus-id" in err


def test_stdout_and_the_refresh_units_output_variable(make_state, tmp_path):
    path = make_state("l40s_4x")
    rc, out, err = ctk(path, "cdi", "generate")
    assert rc == 0 and out.startswith("---\ncdiVersion: 0.5.0\n")
    assert 'msg="Generated CDI spec with version 0.5.0"' in err
    target = str(tmp_path / "run" / "cdi" / "nvidia.yaml")
    assert ctk(path, "cdi", "generate", env={"NVIDIA_CTK_CDI_OUTPUT_FILE_PATH": target})[0] == 0
    assert os.path.isfile(target)


def test_a_driver_nvml_cannot_reach_fails_the_generation(make_state):
    path = make_state("l40s_4x", lambda state: state["faults"].update(driver="not_loaded"))
    rc, out, err = ctk(path, "cdi", "generate")
    assert (rc, out) == (1, "")
    assert "failed to initialize NVML: ERROR_DRIVER_NOT_LOADED" in err


def test_list_prints_the_qualified_names_sorted(make_state, tmp_path):
    path = make_state("a100_8x_mig", mig_layout)
    assert ctk(path, "cdi", "generate", "--output", str(tmp_path / "etc-cdi" / "nvidia.yaml"))[0] == 0
    assert ctk(path, "cdi", "generate", "--output", str(tmp_path / "run-cdi" / "other.json"), "--class", "other",
               "--device-name-strategy", "index")[0] == 0
    rc, out, err = ctk(path, "cdi", "list", "--spec-dir", str(tmp_path / "etc-cdi"), "--spec-dir", str(tmp_path / "run-cdi"))
    assert rc == 0
    listed = out.splitlines()
    assert listed == sorted(listed) and "nvidia.com/gpu=all" in listed and "nvidia.com/other=1" in listed
    assert 'msg="Found %d CDI devices"' % len(listed) in err
    assert len([name for name in listed if name.startswith("nvidia.com/gpu=")]) == 2 * 7 + 1


def test_a_driver_root_prefixes_the_host_paths_only(make_state, tmp_path):
    # generate_test.go: `path: /dev/nvidia0` with `hostPath: <driver root>/dev/nvidia0`, mounts likewise.
    path = make_state("l40s_4x")
    text = generate(path, tmp_path, "--driver-root", "/driver-root")
    assert "            - path: /dev/nvidia0\n              hostPath: /driver-root/dev/nvidia0\n" in text
    spec = yaml.safe_load(text)
    mount = spec["containerEdits"]["mounts"][0]
    assert mount["hostPath"] == "/driver-root" + mount["containerPath"]
    assert spec["containerEdits"]["env"][0] == "NVIDIA_CTK_LIBCUDA_DIR=/usr/lib/x86_64-linux-gnu"
    nodes = yaml.safe_load(generate(path, tmp_path, "--driver-root", "/a", "--dev-root", "/b", name="b.yaml"))
    assert nodes["containerEdits"]["deviceNodes"][-1] == {"path": "/dev/nvidiactl", "hostPath": "/b/dev/nvidiactl"}
