# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-cdi-hook as a runtime runs it from a CDI spec (toolkit v1.19.1 cmd/nvidia-cdi-hook):
the OCI state on stdin, the container's root from the bundle's config.json."""

from __future__ import annotations

import json
import os

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api


def bundle(tmp_path, root_path="rootfs"):
    """A bundle whose config.json names root_path (relative to the bundle, or absolute); returns the OCI state."""
    (tmp_path / "bundle").mkdir()
    (tmp_path / "bundle" / "rootfs").mkdir()
    (tmp_path / "bundle" / "config.json").write_text(json.dumps({"ociVersion": "1.0.2", "root": {"path": root_path}}))
    return json.dumps({"ociVersion": "1.0.2", "id": "c1", "status": "creating", "pid": 1, "bundle": str(tmp_path / "bundle")})


def hook(make_state, state_text, *argv):
    return api.run("nvidia-cdi-hook", list(argv), make_state("l40s_4x"), stdin=state_text)


def test_create_symlinks_links_inside_the_container_root(make_state, tmp_path):
    state = bundle(tmp_path)
    link = "libcuda.so.1::/usr/lib/x86_64-linux-gnu/libcuda.so"
    rc, _out, err = hook(make_state, state, "create-symlinks", "--link", link)
    assert (rc, err) == (0, "")
    made = tmp_path / "bundle" / "rootfs" / "usr" / "lib" / "x86_64-linux-gnu" / "libcuda.so"
    assert os.readlink(str(made)) == "libcuda.so.1"
    # Run again (the same spec's hook at the next start): the link is kept.
    assert hook(make_state, state, "create-symlinks", "--link", link)[0] == 0
    assert hook(make_state, state, "create-symlinks", "--link", "no-separator")[0] == 1


def test_update_ldcache_adds_the_folder_to_the_container_ld_so_conf(make_state, tmp_path):
    state = bundle(tmp_path, str(tmp_path / "bundle" / "rootfs"))
    rc, _out, err = hook(make_state, state, "update-ldcache", "--folder", "/usr/lib/x86_64-linux-gnu",
                         "--ldconfig-path", "/nonexistent/ldconfig")
    assert (rc, err) == (0, "")
    etc = tmp_path / "bundle" / "rootfs" / "etc"
    assert (etc / "ld.so.conf").read_text() == "include /etc/ld.so.conf.d/*.conf\n"
    drop_ins = os.listdir(str(etc / "ld.so.conf.d"))
    assert len(drop_ins) == 1 and drop_ins[0].startswith("00-nvcr-") and drop_ins[0].endswith(".conf")
    assert (etc / "ld.so.conf.d" / drop_ins[0]).read_text() == "/usr/lib/x86_64-linux-gnu\n"


def test_the_other_hooks_have_nothing_to_do_in_a_plain_container(make_state, tmp_path):
    state = bundle(tmp_path)
    assert hook(make_state, state, "enable-cuda-compat", "--host-driver-version=550.127.05") == (0, "", "")
    assert hook(make_state, state, "disable-device-node-modification") == (0, "", "")
    assert hook(make_state, state, "no-such-hook")[0] == 3
