# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The persistenced engine: persistence mode on every GPU, through nvidia-persistenced and its drop-in, or
nvidia-smi -pm and a boot unit.

converge(spec, host, check_mode) -> result, for the gpuops.hardening.persistenced module and the node call.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible.module_utils.common.text.converters import to_native

from ansible_collections.gpuops.hardening.plugins.module_utils import persistenced
from ansible_collections.gpuops.hardening.plugins.module_utils.smi_tool import NvidiaSmi, NvidiaSmiFailed
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec, read_text, under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import ensure_content, ensure_symlink, removal_diff, remove_path
from ansible_collections.gpuops.hardening.plugins.module_utils.unit_record import PERSISTENCED_RESTART_PENDING, RecordError, UnitRecord
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import Systemctl, find_unit

# The daemon sets persistence mode as it starts; give a slow driver a moment before failing.
VERIFY_TRIES = 3
VERIFY_PAUSE = 1.0


def nvidia_smi(feature, nvidia_smi_path, args):
    smi = NvidiaSmi(feature, path=nvidia_smi_path)
    try:
        return smi.call(args)
    except NvidiaSmiFailed as error:
        return feature.fail_json(msg=str(error), cmd=smi.argv(args))


def read_persistence(feature, nvidia_smi_path):
    return persistenced.parse_persistence(nvidia_smi(feature, nvidia_smi_path, persistenced.QUERY_ARGS))


def verify(feature, nvidia_smi_path, result):
    """Fail unless every GPU reads Enabled.

    Check mode verifies too when nothing would change, with one read: what is in place is
    what a real run would verify, so a GPU without persistence mode fails both alike.
    It skips when a change is due, as nothing
    was changed to verify.
    """
    if feature.check_mode and result["changed"]:
        result["verification"] = "skipped in check mode, which changes nothing to verify"
        return
    for attempt in range(1 if feature.check_mode else VERIFY_TRIES):
        gpus = read_persistence(feature, nvidia_smi_path)
        failing = persistenced.not_persistent(gpus)
        if gpus and not failing:
            break
        if attempt + 1 < VERIFY_TRIES:
            time.sleep(VERIFY_PAUSE)
    result["gpus"] = gpus
    if not gpus:
        feature.fail_json(msg="nvidia-smi lists no GPU; persistence mode cannot be verified", **result)
    if failing:
        feature.fail_json(msg="persistence mode is not Enabled on GPU %s after the %s path%s" % (
            ", ".join(failing), result["mode"],
            " (%s overrides the ExecStart of this module's drop-in)" % ", ".join(result["overridden_by"])
            if result["overridden_by"] else ""), **result)
    result["verification"] = "passed"


def remove_mask(feature, root, mask_path, diffs):
    """Take away the link to /dev/null that masks the unit (what systemctl unmask does)."""
    host_path = under_root(root, mask_path)
    diffs.append(removal_diff(host_path, mask_path))
    if not feature.check_mode:
        try:
            os.unlink(host_path)
        except OSError as exc:
            feature.fail_json(msg="could not unmask %s: %s" % (mask_path, to_native(exc)))


def converge_daemon(feature, unit_path, diffs, result, reload_needed):
    """Drop-in, enablement and a running daemon; returns whether anything changed."""
    root = feature.params["root"]
    unit_text = read_text(under_root(root, unit_path)) or ""
    if not persistenced.exec_start(unit_text):
        feature.fail_json(msg="%s has no ExecStart to take the daemon's arguments from" % unit_path, **result)
    result["flavour"] = persistenced.flavour(unit_text)
    content = persistenced.render_dropin(unit_text, unit_path)
    # A run killed between writing the drop-in and the restart leaves the restart owed: recorded first.
    pending = UnitRecord(feature, PERSISTENCED_RESTART_PENDING)
    try:
        restart_owed = bool(pending.units())
    except RecordError as error:
        feature.fail_json(msg="%s; nothing was changed" % error, **result)
    if read_text(under_root(root, persistenced.DROPIN_PATH)) != content:
        pending.write([persistenced.UNIT])
    dropin, diff = ensure_content(feature, under_root(root, persistenced.DROPIN_PATH), content)
    diffs.extend([diff] if diff else [])
    result["dropin"] = {"path": persistenced.DROPIN_PATH, "changed": dropin["changed"],
                        "exec_start": content.rsplit("ExecStart=", 1)[1].strip()}

    overriding = persistenced.overriding_dropins(root)
    if overriding:
        result["overridden_by"] = ["/" + os.path.relpath(path, root) for path in overriding]
        feature.warn("%s sets ExecStart after %s, so its command, not --persistence-mode from this module, starts "
                     "the daemon" % (", ".join(result["overridden_by"]), persistenced.DROPIN_PATH))

    systemctl = Systemctl(feature, timeout=feature.params["timeout"])
    legacy_removed = remove_legacy_unit(feature, systemctl, diffs, result)
    reload_needed = reload_needed or restart_owed
    if dropin["changed"] or reload_needed or legacy_removed:
        systemctl.daemon_reload()
    if persistenced.is_static(unit_text):
        result["enabled_by"] = "wants_link"
        link, diff = ensure_symlink(feature, under_root(root, persistenced.WANTS_PATH), unit_path)
        diffs.extend([diff] if diff else [])
        enabled_changed = link["changed"]
    else:
        result["enabled_by"] = "install"
        enabled_changed = systemctl.enable(persistenced.UNIT)

    active = systemctl.show([persistenced.UNIT], ["ActiveState"])[0].get("ActiveState") == "active"
    if active and (dropin["changed"] or reload_needed):
        result["service_action"] = "restarted"
        systemctl.start(persistenced.UNIT, restart=True)
    elif not active:
        result["service_action"] = "started"
        systemctl.start(persistenced.UNIT)
    pending.remove()
    return restart_owed or dropin["changed"] or enabled_changed or legacy_removed or result["service_action"] != "none"


def remove_legacy_unit(feature, systemctl, diffs, result):
    """The daemon now keeps persistence mode: the legacy boot unit an earlier run made goes."""
    path = under_root(feature.params["root"], persistenced.LEGACY_UNIT_PATH)
    if not os.path.exists(path):
        return False
    systemctl.disable(os.path.basename(persistenced.LEGACY_UNIT_PATH))
    diffs.append(removal_diff(path, persistenced.LEGACY_UNIT_PATH))
    result["legacy_unit_removed"] = persistenced.LEGACY_UNIT_PATH
    if not feature.check_mode:
        remove_path(feature, path)
    return True


def converge_legacy(feature, nvidia_smi_path, diffs, result):
    """nvidia-smi -pm 1 now and a boot unit that sets it again; returns whether anything changed."""
    feature.warn("no nvidia-persistenced.service is installed: persistence mode falls back to the legacy nvidia-smi -pm 1, "
                 "which a reboot loses; gpuops-persistence-mode.service sets it again at every boot")
    result["mode"] = "legacy"
    result["enabled_by"] = "install"
    content = persistenced.render_legacy_unit(nvidia_smi_path)
    unit, diff = ensure_content(feature, under_root(feature.params["root"], persistenced.LEGACY_UNIT_PATH), content)
    diffs.extend([diff] if diff else [])
    systemctl = Systemctl(feature, timeout=feature.params["timeout"])
    if unit["changed"]:
        systemctl.daemon_reload()
    enabled_changed = systemctl.enable(os.path.basename(persistenced.LEGACY_UNIT_PATH))
    # Query first: the no-op run sets nothing and so reports nothing changed.
    if persistenced.not_persistent(read_persistence(feature, nvidia_smi_path)):
        result["service_action"] = "set"
        if not feature.check_mode:
            nvidia_smi(feature, nvidia_smi_path, ["-pm", "1"])
    return unit["changed"] or enabled_changed or result["service_action"] != "none"


NAME = 'persistenced'
ARGUMENT_SPEC = host_argument_spec()
ARGUMENT_SPEC.update(
    unmask=dict(type="bool", default=False),
    require_gpu=dict(type="bool", default=True),
)
SPEC_RULES = {}


def converge(spec, host, check_mode):
    """Converge this feature on the node as spec says (check_mode: only say what would change); returns the result."""
    feature = host.feature(NAME, spec, check_mode)
    params = feature.params
    result = dict(changed=False, mode=None, flavour=None, unit_path=None, unmasked=None, dropin=None,
                  overridden_by=[], legacy_unit_removed=None, enabled_by=None, service_action="none", gpus=[], verification=None, skipped_reason=None)

    nvidia_smi_path = feature.get_bin_path("nvidia-smi")
    if not nvidia_smi_path:
        if params["require_gpu"]:
            feature.fail_json(msg="nvidia-smi not found: this host has no NVIDIA driver. Install the driver, or set "
                              "require_gpu to false (persistenced_require_gpu in the role) to skip such hosts", **result)
        result["skipped_reason"] = "nvidia-smi not found: no NVIDIA driver on this host"
        result["verification"] = "skipped: no NVIDIA driver"
        return result

    mask_path, unit_path = find_unit(persistenced.UNIT, params["root"])
    result["unit_path"] = unit_path
    if mask_path and not params["unmask"]:
        feature.fail_json(msg="%s is masked (%s -> /dev/null), nothing changed; set unmask to true "
                          "(persistenced_unmask in the role) to unmask it" % (persistenced.UNIT, mask_path), **result)
    diffs = []
    if mask_path:
        remove_mask(feature, params["root"], mask_path, diffs)
        result["unmasked"] = mask_path

    if unit_path:
        result["mode"] = "daemon"
        changed = converge_daemon(feature, unit_path, diffs, result, reload_needed=bool(mask_path))
    else:
        changed = converge_legacy(feature, nvidia_smi_path, diffs, result)
    result["changed"] = changed or bool(mask_path)
    result["diff"] = diffs
    verify(feature, nvidia_smi_path, result)
    return result
