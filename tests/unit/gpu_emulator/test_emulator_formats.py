# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulator's output against the real captures, read at test time.

Where a capture's machine can be rebuilt (same GPU model, bus id and MIG state, or
by replaying the capture's own command) the emulator must print the same text;
elsewhere the layout (widths, columns, element names) must match.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.gpuops.hardening.tests.gpu_emulator.gpuemu import api
from ansible_collections.gpuops.hardening.tests.unit import real_captures
from ansible_collections.gpuops.hardening.tests.unit.gpu_emulator.emulated import body_lines, same_uuids, single_gpu, smi_argv

H100_PCIE = "NVIDIA H100 PCIe"
A100_40GB = "NVIDIA A100-SXM4-40GB"


def h100_pcie_mig(make_state, **extra):
    return make_state("dgx_h100", single_gpu(H100_PCIE, "0000:01:00.0", "Enabled"), **extra)


# ---- MIG tables -------------------------------------------------------------------

@pytest.mark.parametrize("capture, model, bus_id", [
    ("a100_40gb_nvidia_smi_mig_lgip.txt", A100_40GB, "0000:00:03.0"),
    ("h100_pcie_80gb_driver525_nvidia_smi_mig_lgip.txt", H100_PCIE, "0000:01:00.0"),
])
def test_lgip_matches_capture_for_the_same_model(make_state, smi, capture, model, bus_id):
    path = make_state("a100_8x_mig", single_gpu(model, bus_id, "Enabled"))
    rc, out, _err = smi(path, "mig", "-lgip")
    assert rc == 0
    assert body_lines(out) == body_lines(real_captures.load(capture))


def test_lgipp_matches_capture(make_state, smi):
    rc, out, _err = smi(h100_pcie_mig(make_state), "mig", "-lgipp")
    assert rc == 0
    assert body_lines(out) == body_lines(real_captures.load("h100_pcie_80gb_driver525_nvidia_smi_mig_lgipp.txt"))


def test_replayed_h100_mig_session_prints_what_the_real_tool_printed(make_state, smi):
    """Create, list and destroy on an H100 PCIe exactly as the captured session did."""
    path = h100_pcie_mig(make_state)
    create = "h100_pcie_80gb_driver525_nvidia_smi_mig_cgi_9_19_19_19_C.txt"
    rc, out, _err = smi(path, *smi_argv(real_captures.command_of(create)))
    assert rc == 0
    assert body_lines(out) == body_lines(real_captures.load(create))

    rc, out, _err = smi(path, "mig", "-lgi")
    assert rc == 0
    assert body_lines(out) == body_lines(real_captures.load("h100_pcie_80gb_driver525_nvidia_smi_mig_lgi.txt"))

    rc, out, _err = smi(path, "-L")
    expected = real_captures.load("h100_pcie_80gb_driver525_mig_3g_3x1g_nvidia_smi_L.txt")
    assert same_uuids(out).splitlines() == same_uuids(expected).splitlines()

    destroyed = []
    for argv in (["mig", "-dci"], ["mig", "-dgi"]):
        rc, out, _err = smi(path, *argv)
        assert rc == 0
        destroyed += body_lines(out)
    assert destroyed == body_lines(real_captures.load("h100_pcie_driver525_nvidia_smi_mig_dci_dgi.txt"))


def test_replayed_a100_mig_creation_and_listed_instances(make_state, smi):
    path = make_state("a100_8x_mig", single_gpu(A100_40GB, "0000:00:03.0", "Enabled"))
    create = "a100_40gb_nvidia_smi_mig_cgi_9_3g20gb_C.txt"
    rc, out, _err = smi(path, *smi_argv(real_captures.command_of(create)))
    assert rc == 0
    assert body_lines(out) == body_lines(real_captures.load(create))
    # This capture comes from an older driver with a narrower -lgi box: compare the rows' values.
    row = re.compile(r"\|\s+(\d+)\s+MIG (\S+)\s+(\d+)\s+(\d+)\s+(\d+:\d+)\s+\|")
    rc, out, _err = smi(path, "mig", "-lgi")
    expected = real_captures.load("a100_40gb_nvidia_smi_mig_lgi_2x3g20gb.txt")
    assert row.findall(out) == row.findall(expected) != []


def test_lci_box_matches_lgi_geometry(make_state, smi):
    path = h100_pcie_mig(make_state)
    smi(path, "mig", "-cgi", "9,19", "-C")
    rc, out, _err = smi(path, "mig", "-lci")
    assert rc == 0
    lines = body_lines(out)
    assert lines[1].startswith("| Compute instances:")
    assert {len(line) for line in lines} == {70}
    assert re.search(r"\|\s+0\s+2\s+MIG 3g\.40gb\s+2\s+0\s+0:3\s+\|", out)
    assert re.search(r"\|\s+0\s+7\s+MIG 1g\.10gb\s+0\s+0\s+0:1\s+\|", out)


# ---- -L ---------------------------------------------------------------------------

def test_list_modern_mig_uuids_match_capture_shape(make_state, smi):
    path = make_state("dgx_h100", single_gpu("NVIDIA H100 80GB HBM3", "0000:18:00.0", "Enabled"))
    smi(path, "mig", "-cgi", ",".join(["19"] * 7), "-C")
    rc, out, _err = smi(path, "-L")
    assert rc == 0
    expected = real_captures.load("h100_80gb_mig_all_1g10gb_nvidia_smi_L.txt")
    assert same_uuids(out).splitlines() == same_uuids(expected).splitlines()


def test_list_legacy_mig_uuid_format(make_state, smi):
    def legacy(state):
        single_gpu(A100_40GB, "0000:36:00.0", "Enabled")(state)
        state["settings"]["mig_uuid_format"] = "legacy"
    path = make_state("a100_8x_mig", legacy)
    capture = "a100_sxm4_40gb_driver450_mig_7x1g5gb_nvidia_smi_L_old_uuid_format.txt"
    smi(path, "mig", "-cgi", ",".join(["19"] * 7), "-C")
    rc, out, _err = smi(path, "-L")
    assert rc == 0
    ours, theirs = same_uuids(out).splitlines(), same_uuids(real_captures.load(capture)).splitlines()
    # R450 printed the product name without the "NVIDIA " prefix; the MIG lines are identical.
    assert ours[1:] == theirs[1:]
    mixed = real_captures.load("a100_sxm4_40gb_driver450_mig_mixed_nvidia_smi_L_old_uuid_format.txt")
    shape = re.compile(r"^  MIG \S+ Device \d+: \(UUID: MIG-GPU-<uuid>/\d+/\d+\)$")
    assert all(shape.match(line) for line in same_uuids(mixed).splitlines()[1:])
    assert all(shape.match(line) for line in ours[1:])


def test_list_gpu_lines(make_state, smi):
    rc, out, _err = smi(make_state("l40s_4x"), "-L")
    assert rc == 0
    shape = re.compile(r"^GPU (\d+): (.+) \(UUID: GPU-<uuid>\)$")
    gpu_lines = [line for name in real_captures.names("*nvidia_smi_L*.txt")
                 for line in same_uuids(real_captures.load(name)).splitlines() if line.startswith("GPU ")]
    assert gpu_lines and all(shape.match(line) for line in gpu_lines)
    assert [shape.match(line).group(1) for line in same_uuids(out).splitlines()] == ["0", "1", "2", "3"]


# ---- --query-gpu ------------------------------------------------------------------

def test_query_gpu_csv_matches_capture(make_state, smi):
    path = h100_pcie_mig(make_state)
    capture = "h100_pcie_driver525_query_pci_bus_id_mig_mode_current_csv.txt"
    rc, out, _err = smi(path, *smi_argv(real_captures.command_of(capture)))
    assert rc == 0
    assert body_lines(out) == body_lines(real_captures.load(capture))


def test_query_gpu_noheader_matches_capture(make_state, smi):
    path = make_state("a100_8x_mig", single_gpu(A100_40GB, "0000:36:00.0", "Enabled"))
    capture = "a100_sxm4_40gb_driver450_query_mig_mode_current_noheader.txt"
    rc, out, _err = smi(path, *smi_argv(real_captures.command_of(capture)))
    assert (rc, body_lines(out)) == (0, body_lines(real_captures.load(capture)))


def test_query_gpu_units_and_not_available(make_state, smi):
    path = make_state("l40s_4x")
    fields = "--query-gpu=memory.total,memory.used,fan.speed,mig.mode.current,power.limit"
    rc, out, _err = smi(path, "-i", "0", fields, "--format=csv")
    assert rc == 0
    assert out.splitlines() == [
        "memory.total [MiB], memory.used [MiB], fan.speed [%], mig.mode.current, power.limit [W]",
        "46068 MiB, 1 MiB, [N/A], [N/A], 350.00 W",
    ]
    rc, out, _err = smi(path, "-i", "0", "--query-gpu=memory.total,power.limit", "--format=csv,noheader,nounits")
    assert out == "46068, 350.00\n"


def test_argument_errors_like_the_real_tool(make_state, smi):
    """Texts and exit codes as a real R580 driver printed them."""
    path = make_state("l40s_4x")
    assert smi(path, "--bogus-option") == (255, "ERROR: Option --bogus-option is not recognized. Please run 'nvidia-smi -h'.\n\n", "")
    assert smi(path, "-i", "0", "-L") == (2, "ERROR: Option -i is not valid for this command. Please run 'nvidia-smi -h' for help.\n\n", "")
    rc, out, _err = smi(path, "-x")
    assert (rc, out) == (2, "Invalid combination of input arguments. Specify -q/--query and -x/--xml-format to run an XML query.  "
                            "Please run 'nvidia-smi -h' for help.\n")
    assert smi(path, "--query-gpu=index", "--format=csv,bogus") == (2, "Format modifier is not recognized.\n", "")
    assert smi(path, "--query-gpu=index", "-i", "1") == (0, "index\n1\n", "")
    assert smi(path, "mig", "-lgi") == (6, "No MIG-supported devices found.\n", "")
    assert smi(path, "mig")[0] == 0 and "Multi Instance GPU management" in smi(path, "mig")[1]
    rc, out, err = api.run("nvidia-persistenced", ["--bogus"], path)
    assert (rc, out) == (0, "")
    assert err.startswith('nvidia-persistenced: unrecognized option: "--bogus"\n\nERROR: Invalid commandline')


def test_unknown_query_field_fails_like_the_real_tool(make_state, smi):
    rc, out, _err = smi(make_state("l40s_4x"), "--query-gpu=index,device_minor", "--format=csv,noheader,nounits")
    assert (rc, out) == (2, 'Field "device_minor" is not a valid field to query.\n\n')


# ---- MIG mode messages ------------------------------------------------------------

def test_pending_mig_warning_matches_capture(make_state, smi):
    path = make_state("a100_8x_mig", single_gpu(A100_40GB, "0000:00:03.0"))
    capture = "a100_40gb_vm_nvidia_smi_i0_mig_1_pending_enable_warning.txt"
    rc, out, _err = smi(path, *smi_argv(real_captures.command_of(capture)))
    assert (rc, body_lines(out)) == (0, body_lines(real_captures.load(capture)))


@pytest.mark.parametrize("capture, before", [
    ("h100_pcie_driver525_nvidia_smi_i0_mig_1_enable.txt", "Disabled"),
    ("h100_pcie_driver525_nvidia_smi_mig_0_disable.txt", "Enabled"),
])
def test_immediate_mig_mode_change_matches_capture(make_state, smi, capture, before):
    def bare_metal(state):
        single_gpu(H100_PCIE, "0000:01:00.0", before)(state)
        state["settings"]["mig_mode_apply"] = "immediate"
    path = make_state("dgx_h100", bare_metal)
    rc, out, _err = smi(path, *smi_argv(real_captures.command_of(capture)))
    assert (rc, body_lines(out)) == (0, body_lines(real_captures.load(capture)))


# ---- plain nvidia-smi -------------------------------------------------------------

def test_summary_table_matches_gh200_capture(make_state, smi):
    theirs = body_lines(real_captures.load("gh200_grace_hopper_nvidia_smi.txt"))
    # The captured node ran another driver than the profile's: take its versions from the header.
    driver, cuda = re.search(r"Driver Version: (\S+)\s+CUDA Version: (\S+)", "\n".join(theirs)).groups()

    def as_captured(state):
        state["gpus"][0]["pci_bus_id"] = "0000:dd:00.0"
        state["gpus"][0]["persistence_legacy"] = True
        state.update(driver_version=driver, cuda_version=cuda)
    rc, out, _err = smi(make_state("gh200", as_captured))
    assert rc == 0
    ours = body_lines(out)
    assert re.match(r"^\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}$", ours[0])
    assert ours[1:] == theirs[1:]


def test_summary_table_layout_matches_modern_captures(make_state, smi):
    rc, out, _err = smi(make_state("workstation_2gpu"))
    assert rc == 0
    ours = body_lines(out)[1:]
    theirs = body_lines(real_captures.load("puget_wrx90_tr7965wx_nvidia_smi.txt"))[1:]
    assert len(ours) == len(theirs)
    for mine, real in zip(ours, theirs):
        # Same borders and column separators everywhere.
        assert [i for i, c in enumerate(mine) if c in "|+"] == [i for i, c in enumerate(real) if c in "|+"]
    assert "NVIDIA RTX 6000 Ada Gene..." in ours[7]


# ---- topo -m ----------------------------------------------------------------------

def _expanded(raw_line, replace=None):
    cells = raw_line.replace("\x1b[4m", "").replace("\x1b[0m", "").split("\t")
    for position, value in (replace or {}).items():
        cells[position] = value
    return "\t".join(cells).expandtabs(8).rstrip()


def test_topo_tab_layout_matches_puget_capture(make_state, smi):
    """Same device set as the captured workstation: identical text once tabs are
    expanded, after swapping in the capture's own affinity values."""
    rc, out, _err = smi(make_state("workstation_2gpu"), "topo", "-m")
    assert rc == 0
    raw = out.rstrip("\n").split("\n")
    theirs = body_lines(real_captures.load("puget_wrx90_tr7965wx_2x_rtx6000ada_nvidia_smi_topo_m.txt"))
    assert len(raw) == len(theirs)
    assert raw[0].startswith("\t\x1b[4mGPU0\t") and raw[0].endswith("\tGPU NUMA ID\x1b[0m")
    assert _expanded(raw[0]) == theirs[0]
    for row in (1, 2):
        # Our workstation's firmware reports no NUMA affinity; the captured one does.
        assert raw[row].split("\t")[-4:] == ["0-47", "N/A", "", "N/A"]
        assert _expanded(raw[row], {-4: "0-23", -3: "0"}) == theirs[row]
    assert [_expanded(line) for line in raw[3:]] == theirs[3:]


def test_topo_matrix_relations_and_legends(make_state, smi):
    rc, out, _err = smi(make_state("dgx_h100"), "topo", "-m")
    assert rc == 0
    rows = [line.split("\t") for line in out.replace("\x1b[4m", "").replace("\x1b[0m", "").splitlines()]
    header = rows[0]
    assert header[0] == "" and header[-3:] == ["CPU Affinity", "NUMA Affinity", "GPU NUMA ID"]
    gpu0 = rows[1]
    assert gpu0[0] == "GPU0" and gpu0[1] == " X " and set(gpu0[2:9]) == {"NV18"}
    assert gpu0[9] == "PXB"  # its own NIC shares the PCIe switch
    assert gpu0[-4:] == ["0-55,112-167", "0", "", "N/A"]
    modern = body_lines(real_captures.load("asus_esc8000a_e12_4x_rtx6000ada_nvidia_smi_topo_m.txt"))
    legend = modern[modern.index("Legend:"):modern.index("NIC Legend:")]
    ours = body_lines(out)
    assert ours[ours.index("Legend:"):ours.index("NIC Legend:")] == legend
    assert ours[ours.index("NIC Legend:") + 2:] == ["  NIC%d: mlx5_%d" % (n, n) for n in range(9)]


# ---- -q -x ------------------------------------------------------------------------

def _paths(element, prefix=""):
    here = prefix + "/" + element.tag
    found = {here}
    for child in element:
        found |= _paths(child, here)
    return found


def _capture_trees():
    trees = {}
    for name in real_captures.names("*nvidia_smi_q_x*.xml.txt"):
        trees[name] = ET.fromstring(real_captures.load(name))
    return trees


def test_xml_uses_only_element_names_real_drivers_print(make_state, smi):
    path = make_state("a100_8x_mig", lambda s: s["gpus"][0]["mig"].update(current="Enabled", pending="Enabled"))
    smi(path, "mig", "-i", "0", "-cgi", "15,15", "-C")
    rc, out, _err = smi(path, "-q", "-x")
    assert rc == 0
    ours = _paths(ET.fromstring(out))
    known = set()
    for tree in _capture_trees().values():
        known |= _paths(tree)
    assert ours - known == set()


def test_xml_layout_follows_the_v12_capture(make_state, smi):
    path = make_state("a100_8x_mig", lambda s: s["gpus"][0]["mig"].update(current="Enabled", pending="Enabled"))
    smi(path, "mig", "-i", "0", "-cgi", "15,15,15,15", "-C")
    rc, out, _err = smi(path, "-q", "-x", "-i", "0")
    assert rc == 0
    reference = ET.fromstring(real_captures.load("telegraf_a100_sxm4_80gb_x4_mig_enabled_driver535_nvidia_smi_q_x.xml.txt"))
    root = ET.fromstring(out)
    assert [child.tag for child in root] == [child.tag for child in reference]
    ours_gpu, their_gpu = root.find("gpu"), reference.find("gpu")
    # Our children appear in the driver's order (a subsequence of the capture's).
    theirs = [child.tag for child in their_gpu]
    positions = [theirs.index(child.tag) for child in ours_gpu]
    assert positions == sorted(positions)
    for key in ("persistence_mode", "mig_mode/current_mig", "mig_mode/pending_mig", "pci/pci_bus_id", "uuid",
                "minor_number", "product_name", "compute_mode", "fb_memory_usage/total"):
        assert ours_gpu.find(key) is not None and their_gpu.find(key) is not None
    assert _paths(ours_gpu.find("mig_devices/mig_device")) == _paths(their_gpu.find("mig_devices/mig_device"))
    assert ours_gpu.findtext("mig_devices/mig_device/fb_memory_usage/total") == "19968 MiB"
    assert [d.findtext("gpu_instance_id") for d in ours_gpu.iter("mig_device")] == ["3", "4", "5", "6"]
    assert out.startswith('<?xml version="1.0" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">\n<nvidia_smi_log>\n\t<timestamp>')
    assert "\t\t<persistence_mode>Disabled</persistence_mode>\n" in out


def test_xml_without_mig_devices_and_with_processes(make_state, smi):
    path = make_state(api.add_process(api.new_state("l40s_4x"), 1, 4242, "/usr/bin/python3", 2048))
    rc, out, _err = smi(path, "-q", "-x", "-i", "1")
    assert rc == 0
    assert "\t\t<mig_devices>\n\t\t\tNone\n\t\t</mig_devices>\n" in out
    process = ET.fromstring(out).find("gpu/processes/process_info")
    reference = ET.fromstring(real_captures.load("telegraf_a10g_driver515_nvidia_smi_q_x.xml.txt")).find("gpu/processes/process_info")
    assert [c.tag for c in process] == [c.tag for c in reference]
    assert (process.findtext("pid"), process.findtext("used_memory"), process.findtext("gpu_instance_id")) == ("4242", "2048 MiB", "N/A")
