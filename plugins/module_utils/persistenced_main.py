# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpuops.hardening.persistenced module's code. It lives here, not in the module file, so that
gpuops.hardening.precheck can run it in check mode in its own process (module_utils/precheck.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.gpuops.hardening.plugins.module_utils import persistenced
from ansible_collections.gpuops.hardening.plugins.module_utils.commands import CommandTimeout, run
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec, read_text, under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import ensure_content, ensure_symlink, removal_diff, remove_path
from ansible_collections.gpuops.hardening.plugins.module_utils.unit_record import PERSISTENCED_RESTART_PENDING, RecordError, UnitRecord
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import Systemctl, find_unit
from ansible_collections.gpuops.hardening.plugins.module_utils.receipts import remember_call
from ansible_collections.gpuops.hardening.plugins.module_utils.run_lock import hold_node_lock

# The daemon sets persistence mode as it starts; give a slow driver a moment before failing.
VERIFY_TRIES = 3
VERIFY_PAUSE = 1.0


def nvidia_smi(module, nvidia_smi_path, args):
    argv = [nvidia_smi_path] + list(args)
    try:
        rc, out, err = run(module, argv, timeout=module.params["timeout"])
    except CommandTimeout as error:
        module.fail_json(msg="%s; the NVIDIA driver is not answering" % error, cmd=argv)
    if rc != 0:
        module.fail_json(msg="%s failed with exit code %s: %s" % (" ".join(argv), rc, (err or out).strip()), cmd=argv)
    return out


def read_persistence(module, nvidia_smi_path):
    return persistenced.parse_persistence(nvidia_smi(module, nvidia_smi_path, persistenced.QUERY_ARGS))


def verify(module, nvidia_smi_path, result):
    """Fail unless every GPU reads Enabled.

    Check mode verifies too when nothing would change, with one read: what is in place is
    what a real run would verify, so a GPU without persistence mode fails both alike
    (gpuops.hardening.precheck relies on it). It skips when a change is due, as nothing
    was changed to verify.
    """
    if module.check_mode and result["changed"]:
        result["verification"] = "skipped in check mode, which changes nothing to verify"
        return
    for attempt in range(1 if module.check_mode else VERIFY_TRIES):
        gpus = read_persistence(module, nvidia_smi_path)
        failing = persistenced.not_persistent(gpus)
        if gpus and not failing:
            break
        if attempt + 1 < VERIFY_TRIES:
            time.sleep(VERIFY_PAUSE)
    result["gpus"] = gpus
    if not gpus:
        module.fail_json(msg="nvidia-smi lists no GPU; persistence mode cannot be verified", **result)
    if failing:
        module.fail_json(msg="persistence mode is not Enabled on GPU %s after the %s path%s" % (
            ", ".join(failing), result["mode"],
            " (%s overrides the ExecStart of this module's drop-in)" % ", ".join(result["overridden_by"])
            if result["overridden_by"] else ""), **result)
    result["verification"] = "passed"


def remove_mask(module, root, mask_path, diffs):
    """Take away the link to /dev/null that masks the unit (what systemctl unmask does)."""
    host_path = under_root(root, mask_path)
    diffs.append(removal_diff(host_path, mask_path))
    if not module.check_mode:
        try:
            os.unlink(host_path)
        except OSError as exc:
            module.fail_json(msg="could not unmask %s: %s" % (mask_path, to_native(exc)))


def converge_daemon(module, unit_path, diffs, result, reload_needed):
    """Drop-in, enablement and a running daemon; returns whether anything changed."""
    root = module.params["root"]
    unit_text = read_text(under_root(root, unit_path)) or ""
    if not persistenced.exec_start(unit_text):
        module.fail_json(msg="%s has no ExecStart to take the daemon's arguments from" % unit_path, **result)
    result["flavour"] = persistenced.flavour(unit_text)
    content = persistenced.render_dropin(unit_text, unit_path)
    # A run killed between writing the drop-in and the restart leaves the restart owed: recorded first.
    pending = UnitRecord(module, PERSISTENCED_RESTART_PENDING)
    try:
        restart_owed = bool(pending.units())
    except RecordError as error:
        module.fail_json(msg="%s; nothing was changed" % error, **result)
    if read_text(under_root(root, persistenced.DROPIN_PATH)) != content:
        pending.write([persistenced.UNIT])
    dropin, diff = ensure_content(module, under_root(root, persistenced.DROPIN_PATH), content)
    diffs.extend([diff] if diff else [])
    result["dropin"] = {"path": persistenced.DROPIN_PATH, "changed": dropin["changed"],
                        "exec_start": content.rsplit("ExecStart=", 1)[1].strip()}

    overriding = persistenced.overriding_dropins(root)
    if overriding:
        result["overridden_by"] = ["/" + os.path.relpath(path, root) for path in overriding]
        module.warn("%s sets ExecStart after %s, so its command, not --persistence-mode from this module, starts "
                    "the daemon" % (", ".join(result["overridden_by"]), persistenced.DROPIN_PATH))

    systemctl = Systemctl(module, timeout=module.params["timeout"])
    legacy_removed = remove_legacy_unit(module, systemctl, diffs, result)
    reload_needed = reload_needed or restart_owed
    if dropin["changed"] or reload_needed or legacy_removed:
        systemctl.daemon_reload()
    if persistenced.is_static(unit_text):
        result["enabled_by"] = "wants_link"
        link, diff = ensure_symlink(module, under_root(root, persistenced.WANTS_PATH), unit_path)
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


def remove_legacy_unit(module, systemctl, diffs, result):
    """The daemon now keeps persistence mode: the legacy boot unit an earlier run made goes."""
    path = under_root(module.params["root"], persistenced.LEGACY_UNIT_PATH)
    if not os.path.exists(path):
        return False
    systemctl.disable(os.path.basename(persistenced.LEGACY_UNIT_PATH))
    diffs.append(removal_diff(path, persistenced.LEGACY_UNIT_PATH))
    result["legacy_unit_removed"] = persistenced.LEGACY_UNIT_PATH
    if not module.check_mode:
        remove_path(module, path)
    return True


def converge_legacy(module, nvidia_smi_path, diffs, result):
    """nvidia-smi -pm 1 now and a boot unit that sets it again; returns whether anything changed."""
    module.warn("no nvidia-persistenced.service is installed: persistence mode falls back to the legacy nvidia-smi -pm 1, "
                "which a reboot loses; gpuops-persistence-mode.service sets it again at every boot")
    result["mode"] = "legacy"
    result["enabled_by"] = "install"
    content = persistenced.render_legacy_unit(nvidia_smi_path)
    unit, diff = ensure_content(module, under_root(module.params["root"], persistenced.LEGACY_UNIT_PATH), content)
    diffs.extend([diff] if diff else [])
    systemctl = Systemctl(module, timeout=module.params["timeout"])
    if unit["changed"]:
        systemctl.daemon_reload()
    enabled_changed = systemctl.enable(os.path.basename(persistenced.LEGACY_UNIT_PATH))
    # Query first: the no-op run sets nothing and so reports nothing changed.
    if persistenced.not_persistent(read_persistence(module, nvidia_smi_path)):
        result["service_action"] = "set"
        if not module.check_mode:
            nvidia_smi(module, nvidia_smi_path, ["-pm", "1"])
    return unit["changed"] or enabled_changed or result["service_action"] != "none"


def main():
    argument_spec = host_argument_spec()
    argument_spec.update(
        unmask=dict(type="bool", default=False),
        require_gpu=dict(type="bool", default=True),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    hold_node_lock(module, "gpuops.hardening.persistenced")
    remember_call(module, "persistenced")
    params = module.params
    result = dict(changed=False, mode=None, flavour=None, unit_path=None, unmasked=None, dropin=None,
                  overridden_by=[], legacy_unit_removed=None, enabled_by=None, service_action="none", gpus=[], verification=None, skipped_reason=None)

    nvidia_smi_path = module.get_bin_path("nvidia-smi")
    if not nvidia_smi_path:
        if params["require_gpu"]:
            module.fail_json(msg="nvidia-smi not found: this host has no NVIDIA driver. Install the driver, or set "
                                 "require_gpu to false (persistenced_require_gpu in the role) to skip such hosts", **result)
        result["skipped_reason"] = "nvidia-smi not found: no NVIDIA driver on this host"
        result["verification"] = "skipped: no NVIDIA driver"
        module.exit_json(**result)

    mask_path, unit_path = find_unit(persistenced.UNIT, params["root"])
    result["unit_path"] = unit_path
    if mask_path and not params["unmask"]:
        module.fail_json(msg="%s is masked (%s -> /dev/null), nothing changed; set unmask to true "
                             "(persistenced_unmask in the role) to unmask it" % (persistenced.UNIT, mask_path), **result)
    diffs = []
    if mask_path:
        remove_mask(module, params["root"], mask_path, diffs)
        result["unmasked"] = mask_path

    if unit_path:
        result["mode"] = "daemon"
        changed = converge_daemon(module, unit_path, diffs, result, reload_needed=bool(mask_path))
    else:
        changed = converge_legacy(module, nvidia_smi_path, diffs, result)
    result["changed"] = changed or bool(mask_path)
    if module._diff:
        result["diff"] = diffs
    verify(module, nvidia_smi_path, result)
    module.exit_json(**result)
