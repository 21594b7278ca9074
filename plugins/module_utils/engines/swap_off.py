# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The swap_off engine: swap off: live (swapoff, refused when the swap in use does not fit in memory) and at boot
(fstab, unit masks, zram).

converge(spec, host, check_mode) -> result, for the gpuops.hardening.swap_off module and the node call.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpuops.hardening.plugins.module_utils import swap
from ansible_collections.gpuops.hardening.plugins.module_utils.commands import CommandTimeout, run
from ansible_collections.gpuops.hardening.plugins.module_utils.host_env import container_type
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec, read_text, under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import ensure_content, ensure_symlink
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import Systemctl, is_booted, unit_file_exists

MASK_DIR = "etc/systemd/system"
# Where .swap units come from: admin and package unit files, and generator output.
SWAP_UNIT_DIRS = (
    "etc/systemd/system",
    "run/systemd/system",
    "run/systemd/generator.early",
    "run/systemd/generator",
    "run/systemd/generator.late",
    "usr/local/lib/systemd/system",
    "usr/lib/systemd/system",
    "lib/systemd/system",
)
ZRAM_DROPIN = "etc/systemd/zram-generator.conf.d/99-gpuops-hardening-no-swap.conf"


def live_blocker(params):
    if not params["apply_live"]:
        return "apply_live is false"
    where = container_type()
    if where:
        return "inside this %s container /proc/swaps shows the host kernel's swap, which is not this node's to turn off" % where
    return None


def check_safety(feature, targets, meminfo, result):
    """Fail before any change when the swap in use would not fit back into memory."""
    if not targets:
        return
    available = meminfo.get("MemAvailable")
    if available is None:
        available = sum(meminfo.get(name, 0) for name in ("MemFree", "Buffers", "Cached"))
    result["mem_available_kib"] = available
    refusal = swap.swapoff_refusal(result["swap_used_kib"], available, feature.params["margin_mib"] * 1024)
    if refusal is None:
        return
    if feature.params["force"]:
        feature.warn("turning swap off despite the safety check (force is set): %s" % refusal)
        return
    feature.fail_json(
        msg="refusing to turn swap off: %s Free memory first, lower margin_mib (role variable sysctl_swapoff_margin_mib), "
            "or set force (role variable sysctl_swapoff_force) to accept the risk. Nothing was changed." % refusal,
        **result
    )


def converge_fstab(feature, result, diffs):
    # Edit the file itself where fstab is a link, so the link stays.
    path = os.path.realpath(under_root(feature.params["root"], "/etc/fstab"))
    text = read_text(path)
    if text is None:
        result["fstab"] = None
        return []
    new_text, commented = swap.comment_out_swap(text)
    file_result, diff = ensure_content(feature, path, new_text, mode=None, backup=True)
    if diff:
        diffs.append(diff)
    result["fstab"] = dict(path=path, changed=file_result["changed"], backup_file=file_result["backup_file"], commented=commented)
    return commented


def existing_swap_units(root):
    found = []
    for relative in SWAP_UNIT_DIRS:
        try:
            names = os.listdir(under_root(root, relative))
        except OSError:
            continue
        found.extend(sorted(name for name in names if name.endswith(".swap")))
    return found


def converge_zram_dropin(feature, root, result, diffs):
    """Converge the zram-generator drop-in; returns the swap devices it disables."""
    dropin = under_root(root, ZRAM_DROPIN)
    configs = swap.zram_config_files(root, exclude=dropin)
    devices = swap.zram_devices(read_text(path) or "" for path in configs)
    wanted = [name for name, is_swap in devices.items() if is_swap]
    # systemd.zram=1 on the kernel command line creates zram0 with no configuration at all.
    if swap.zram_generator_installed(root) and "zram0" not in devices:
        wanted.append("zram0")
    wanted.sort(key=swap.zram_sort_key)
    result["zram"] = dict(devices=wanted, dropin=None, changed=False)
    if not wanted:
        return wanted
    file_result, diff = ensure_content(feature, dropin, swap.render_zram_dropin(wanted))
    if diff:
        diffs.append(diff)
    result["zram"].update(dropin=dropin, changed=file_result["changed"])
    return wanted


def wanted_masks(feature, root, commented, swaps, zram_devices, in_container):
    units = ["swap.target"] if feature.params["mask_swap_target"] else []
    units.extend(swap.unit_name_from_path(swap.fstab_device(swap.fstab_fields(line)[0]), "swap") for line in commented)
    if not in_container:
        units.extend(swap.unit_name_from_path(area["path"], "swap") for area in swaps)
    units.extend(existing_swap_units(root))
    for device in zram_devices:
        units.extend(["dev-%s.swap" % device, "systemd-zram-setup@%s.service" % device])
    unit_dirs = [under_root(root, relative) for relative in SWAP_UNIT_DIRS]
    units.extend(service for service in feature.params["zram_services"] if unit_file_exists(service, unit_dirs))
    unique = []
    for unit in units:
        if unit not in unique:
            unique.append(unit)
    return unique


def converge_masks(feature, root, units, result, diffs):
    result["masked_units"] = units
    result["masks_changed"] = []
    for unit in units:
        link_result, diff = ensure_symlink(feature, under_root(root, os.path.join(MASK_DIR, unit)), "/dev/null", backup=True)
        if link_result["changed"]:
            result["masks_changed"].append(dict(unit=unit, backup_file=link_result["backup_file"]))
            diffs.append(diff)


def turn_off(feature, targets, result):
    swapoff = feature.get_bin_path("swapoff", required=True)
    done = []
    for area in targets:
        try:
            rc, out, err = run(feature, [swapoff, area["path"]], timeout=feature.params["timeout"])
        except CommandTimeout as exc:
            feature.fail_json(msg="%s. Swap areas already off: %s" % (exc, ", ".join(done) or "none"), **result)
        if rc != 0:
            feature.fail_json(msg="swapoff %s failed: %s. Swap areas already off: %s"
                              % (area["path"], (err or out).strip(), ", ".join(done) or "none"), **result)
        done.append(area["path"])


def render_swaps(swaps):
    return "".join("%s %s size=%skB used=%skB\n" % (a["path"], a["type"], a["size_kib"], a["used_kib"]) for a in swaps)


NAME = 'swap_off'
ARGUMENT_SPEC = host_argument_spec(live=True)
ARGUMENT_SPEC.update(
    margin_mib=dict(type="int", default=1024),
    force=dict(type="bool", default=False),
    mask_swap_target=dict(type="bool", default=True),
    zram_services=dict(type="list", elements="str", default=["zramswap.service", "zram-config.service"]),
    timeout=dict(type="int", default=600),
)
SPEC_RULES = {}


def converge(spec, host, check_mode):
    """Converge this feature on the node as spec says (check_mode: only say what would change); returns the result."""
    feature = host.feature(NAME, spec, check_mode)
    params = feature.params
    if params["margin_mib"] < 0:
        feature.fail_json(msg="margin_mib must be 0 or more, got %s" % params["margin_mib"])
    root = params["root"]
    swaps = swap.parse_proc_swaps(read_text(under_root(root, "/proc/swaps")))
    meminfo = swap.parse_meminfo(read_text(under_root(root, "/proc/meminfo")))
    blocker = live_blocker(params)
    targets = swaps if blocker is None else []
    result = dict(
        changed=False, swaps=swaps, swapoff=[a["path"] for a in targets],
        swap_used_kib=sum(a["used_kib"] for a in targets), mem_available_kib=meminfo.get("MemAvailable", 0),
        live_skipped_reason=blocker, daemon_reloaded=False,
    )
    check_safety(feature, targets, meminfo, result)

    diffs = []
    commented = converge_fstab(feature, result, diffs)
    zram_devices = converge_zram_dropin(feature, root, result, diffs)
    in_container = container_type() is not None
    converge_masks(feature, root, wanted_masks(feature, root, commented, swaps, zram_devices, in_container), result, diffs)
    persisted_changed = bool(diffs)
    if persisted_changed and root == "/":
        # Drops the fstab-generated units and loads the masks.
        Systemctl(feature, timeout=params["timeout"]).daemon_reload()
        result["daemon_reloaded"] = not feature.check_mode and is_booted()

    if targets:
        if not feature.check_mode:
            turn_off(feature, targets, result)
        diffs.append({"before_header": "/proc/swaps (live)", "after_header": "/proc/swaps (live)",
                      "before": render_swaps(swaps), "after": ""})
    if blocker and params["apply_live"]:
        feature.warn("swapoff skipped: %s. fstab, the masks and the zram drop-in keep swap off from the next boot." % blocker)
    result["live_applied"] = blocker is None
    result["changed"] = bool(diffs)
    result["diff"] = diffs
    return result
