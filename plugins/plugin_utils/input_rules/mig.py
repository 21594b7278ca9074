# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""mig: where the layout comes from, its form and the ranges. Profiles and fit are
checked against each GPU by the nvidia_mig module in check mode, before any change."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.module_utils.mig_parted import MigPartedError, check_layouts
from ansible_collections.gpuops.hardening.plugins.plugin_utils.input_rules.common import bad, seconds_errors

REMOVED = {}
BOOT_TIMEOUT_RANGE = (1, 3600)


def _source_errors(inputs):
    layouts, parted_file, parted_config = (inputs.get("mig_layouts") or {}, inputs.get("mig_parted_file") or "",
                                           inputs.get("mig_parted_config") or "")
    if layouts and (parted_file or parted_config):
        return [bad("mig_parted_file", parted_file, "empty when mig_layouts is set; declare the layout one way")]
    if bool(parted_file) != bool(parted_config):
        name, value = ("mig_parted_config", parted_config) if parted_file else ("mig_parted_file", parted_file)
        return [bad(name, value, "set together with %s: a mig-parted v1 file and the name of one of its configs"
                    % ("mig_parted_file" if parted_file else "mig_parted_config"))]
    if inputs.get("mig_state") == "present" and not layouts and not parted_file:
        return [bad("mig_layouts", layouts, "with mig_state present, a GPU index to {mig_enabled, mig_devices}, "
                                            "or mig_parted_file and mig_parted_config")]
    return []


def errors(inputs, profile_entry):  # pylint: disable=unused-argument
    found = seconds_errors(inputs, "mig_timeout")
    boot_timeout = inputs.get("mig_boot_timeout")
    if isinstance(boot_timeout, int) and not BOOT_TIMEOUT_RANGE[0] <= boot_timeout <= BOOT_TIMEOUT_RANGE[1]:
        found.append(bad("mig_boot_timeout", boot_timeout, "an integer from %d to %d (seconds)" % BOOT_TIMEOUT_RANGE))
    found.extend(_source_errors(inputs))
    if isinstance(inputs.get("mig_layouts"), dict):
        try:
            check_layouts(inputs["mig_layouts"], "mig_layouts")
        except MigPartedError as error:
            found.append(str(error))
    for unit in inputs.get("mig_gpu_clients") or []:
        if not isinstance(unit, str) or "/" in unit or not unit.endswith(".service"):
            found.append(bad("mig_gpu_clients", unit, "systemd service names such as nvidia-dcgm.service"))
    return found


def resolve(inputs, profile_entry):  # pylint: disable=unused-argument
    """mig_layouts keyed by GPU index as text, the form the module takes and returns."""
    resolved = dict(inputs)
    resolved["mig_layouts"] = dict((str(index), layout) for index, layout in
                                   check_layouts(inputs.get("mig_layouts") or {}, "mig_layouts").items())
    return resolved
