# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The topology picture of emulated nodes and of real ``topo -m`` captures (read at test time)."""

from __future__ import annotations

import copy
import re

import pytest

from ansible_collections.gpuops.hardening.plugins.plugin_utils.topology_svg import render_topology_svg, short_model
from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit import real_captures
from ansible_collections.gpuops.hardening.tests.unit.plugins.module_utils.topology_builders import topology_from_matrix
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.emulated_host import emulated_topology
from ansible_collections.gpuops.hardening.tests.unit.plugins.plugin_utils.svg_picture import SVG, Picture, assert_legible

PROFILES = sorted(api.PROFILES)


@pytest.fixture(scope="module")
def emulated(tmp_path_factory):
    """{profile: gpu_topology fact of an emulated node}."""
    return dict((profile, emulated_topology(tmp_path_factory.mktemp(profile), profile)) for profile in PROFILES)


def _capture(tmp_path, name):
    return topology_from_matrix(tmp_path, real_captures.load(name))


def _topo_captures():
    return [name for name in real_captures.names("*.txt") if "topo -m" in real_captures.command_of(name)
            or "topo --matrix" in real_captures.command_of(name)]


def _in_box(picture, numa, css_class, attribute):
    (box,) = [group for group in picture.groups("numa-node") if group.get("data-numa") == numa]
    return sorted(group.get(attribute) for group in box.iter(SVG + "g") if group.get("class") == css_class)


@pytest.mark.parametrize("profile", PROFILES)
def test_every_emulated_node_is_drawn_whole_and_legible(emulated, profile):
    topology = emulated[profile]
    picture = Picture(render_topology_svg(topology, profile))
    assert sorted(picture.attributes("gpu", "data-gpu"), key=int) == [str(gpu["index"]) for gpu in topology["gpus"]]
    assert sorted(picture.attributes("nic", "data-nic")) == sorted(nic["name"] for nic in topology["nics"])
    assert sorted(picture.attributes("numa-node", "data-numa"), key=int) == [str(n["id"]) for n in topology["numa_nodes"]]
    assert_legible(picture)
    assert picture.texts()[0].startswith(profile)


def test_dgx_h100_one_fabric_bar_and_a_line_from_each_gpu_to_its_nic(emulated):
    picture = Picture(render_topology_svg(emulated["dgx_h100"], "dgx-h100"))
    (fabric,) = picture.groups("nvlink-fabric")
    assert fabric.get("data-kind") == "NV18" and "NV18 all-to-all" in " ".join(picture.texts(fabric))
    assert [link for link in picture.links() if link[0].startswith("NV")] == [("NV18", None, None)]
    assert sorted(picture.links("PXB")) == sorted(("PXB", "GPU%d" % n, "mlx5_%d" % n) for n in range(8))
    assert _in_box(picture, "0", "gpu", "data-gpu") == ["0", "1", "2", "3"]
    # The storage NIC has no close GPU: it sits in its node's box without a line.
    assert _in_box(picture, "0", "nic", "data-nic") == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_8"]
    assert _in_box(picture, "1", "nic", "data-nic") == ["mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7"]


def test_a100_nics_shared_by_gpu_pairs(emulated):
    picture = Picture(render_topology_svg(emulated["a100_8x_mig"]))
    assert picture.groups("nvlink-fabric")[0].get("data-kind") == "NV12"
    pix = picture.links("PIX")
    assert len(pix) == 8
    assert sorted(gpu for _kind, gpu, nic in pix if nic == "mlx5_0") == ["GPU0", "GPU1"]


def test_gh200_memory_only_nodes_are_small_tags(emulated):
    picture = Picture(render_topology_svg(emulated["gh200"]))
    tags = picture.groups("memory-only")
    assert [tag.get("data-numa") for tag in tags] == [str(n) for n in range(1, 9)]
    assert "GPU 0 memory" in " ".join(picture.texts(tags[0]))
    assert max(picture.frame(tag)[3] for tag in tags) < min(picture.frame(box)[3] for box in picture.groups("numa-node")
                                                            if box not in tags)


def test_workstation_gpus_without_a_numa_node_go_to_the_unknown_box(emulated):
    picture = Picture(render_topology_svg(emulated["workstation_2gpu"]))
    (unknown,) = picture.groups("numa-unknown")
    assert sorted(group.get("data-gpu") for group in unknown.iter(SVG + "g") if group.get("class") == "gpu") == ["0", "1"]
    assert "NUMA node unknown" in picture.texts(unknown)
    assert picture.links() == [("PHB", "GPU0", "GPU1")]


# ------------------------------------------------------------------ real captures

def test_h100_8gpu_2socket_capture(tmp_path):
    picture = Picture(render_topology_svg(_capture(tmp_path, "h100_8gpu_2socket_52c_ht_nvidia_smi_topo_m.txt")))
    assert picture.links() == [("NV18", None, None)]
    assert _in_box(picture, "0", "gpu", "data-gpu") == ["0", "1", "2", "3"]
    assert _in_box(picture, "1", "gpu", "data-gpu") == ["4", "5", "6", "7"]
    assert "CPUs 52-103,156-207" in picture.texts()


def test_dgx1_hybrid_cube_mesh_capture(tmp_path):
    topology = _capture(tmp_path, "dgx1_v100_mlx5x4_ucx_py_nvidia_smi_topo_m.txt")
    picture = Picture(render_topology_svg(topology))
    assert not picture.groups("nvlink-fabric")
    matrix = topology["links"]["matrix"]
    nvlink_pairs = sorted(("GPU%d" % a, "GPU%d" % b) for a in range(8) for b in range(a + 1, 8)
                          if matrix["GPU%d" % a]["GPU%d" % b].startswith("NV"))
    assert sorted(link[1:] for link in picture.links() if link[0].startswith("NV")) == nvlink_pairs
    assert ("NV2", "GPU0", "GPU3") in picture.links() and ("NV1", "GPU0", "GPU1") in picture.links()
    # Each NIC: one PCIe switch with two GPUs, the host bridge with two more; SYS is not drawn.
    assert len(picture.links("PIX")) == 8 and len(picture.links("PHB")) == 8
    assert ("PIX", "GPU6", "mlx5_3") in picture.links()
    # Without sysfs, a NIC sits with the GPUs topo -m puts on its node.
    assert _in_box(picture, "1", "nic", "data-nic") == ["mlx5_2", "mlx5_3"]
    assert_legible(picture)


def test_a800_four_nics_beside_gpus(tmp_path):
    picture = Picture(render_topology_svg(_capture(tmp_path, "a800_8gpu_2socket_4nic_driver525_nvidia_smi_topo_matrix.txt")))
    assert picture.groups("nvlink-fabric")[0].get("data-kind") == "NV8"
    assert sorted(picture.links("PIX")) == [("PIX", "GPU1", "mlx5_0"), ("PIX", "GPU3", "mlx5_1"),
                                            ("PIX", "GPU7", "mlx5_2"), ("PIX", "GPU7", "mlx5_3")]
    assert _in_box(picture, "0", "nic", "data-nic") == ["mlx5_0", "mlx5_1"]
    assert_legible(picture)


def test_every_topo_capture_renders_legibly(tmp_path):
    names = _topo_captures()
    assert len(names) >= 10
    for position, name in enumerate(names):
        topology = _capture(tmp_path / str(position), name)
        picture = Picture(render_topology_svg(topology, name))
        assert len(picture.groups("gpu")) == len(topology["gpus"]), name
        assert len(picture.groups("nic")) == len(topology["nics"]), name
        assert_legible(picture)


# ------------------------------------------------------------------ text, emptiness, determinism

def test_text_from_the_data_is_escaped(emulated):
    topology = copy.deepcopy(emulated["l40s_4x"])
    topology["gpus"][0]["name"] = 'NVIDIA <b>L40S</b> & "friends"'
    topology["nics"][0]["name"] = "mlx5_<0>"
    text = render_topology_svg(topology, 'node <1> & "2"')
    assert "<b>" not in text and 'node <1>' not in text
    picture = Picture(text)
    assert picture.texts()[0].startswith('node <1> & "2"')
    assert "mlx5_<0>" in picture.attributes("nic", "data-nic")
    assert any(line.startswith("<b>L40S</b>") for line in picture.texts())


@pytest.mark.parametrize("topology", [None, {}, {"gpus": [], "nics": [], "numa_nodes": []}])
def test_no_topology_is_a_small_notice(topology):
    picture = Picture(render_topology_svg(topology, "cpu-01"))
    assert picture.texts() == ["No GPU topology was collected for cpu-01."]
    assert not picture.groups("gpu") and picture.view_box[2] < 500


def test_same_input_same_picture_and_nothing_external(emulated):
    first = render_topology_svg(emulated["dgx_h100"], "a")
    assert first == render_topology_svg(copy.deepcopy(emulated["dgx_h100"]), "a")
    # Its natural width is the viewBox's; the page's CSS shrinks it (no style attribute: the page's CSP allows none).
    view_box, width = re.search(r'viewBox="0 0 ([0-9.]+) [0-9.]+" width="([0-9.]+)"', first).groups()
    assert width == view_box
    assert "style=" not in first and "href" not in first and "url(" not in first and "@import" not in first
    assert first.count("http") == 1  # the SVG namespace only


def test_short_model():
    assert short_model("NVIDIA H100 80GB HBM3") == "H100 80GB HBM3"
    assert short_model("Tesla V100-SXM2-32GB") == "V100-SXM2-32GB"
    assert short_model("NVIDIA") == "NVIDIA" and short_model(None) == "GPU"
