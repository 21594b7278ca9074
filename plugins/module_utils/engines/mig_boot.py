# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mig_boot engine: the boot service that creates the MIG layout again at every boot, when all instances are
gone. It runs in the node call after the nvidia_mig feature and records the layout that feature resolved, with
the GPU clients the unit must start before; the files themselves are converged by the installed_files engine.

converge(spec, host, check_mode) -> result, for the node call (no module of its own: it needs the MIG feature's
result from the same call).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import installed_files
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec

NAME = "mig_boot"
ARGUMENT_SPEC = host_argument_spec()
ARGUMENT_SPEC.update(
    state=dict(type="str", choices=["present", "absent"], default="present"),
    # The nvidia_mig feature of the same call whose resolved layout the service applies.
    layout_feature=dict(type="str", default="mig_layout"),
    unit=dict(type="str", default="gpuops-mig.service"),
    unit_dir=dict(type="path", default="/etc/systemd/system"),
    script=dict(type="path", default="/usr/local/libexec/gpuops-mig-boot"),
    record=dict(type="path", default="/etc/gpuops-hardening/mig/layout.json"),
    library=dict(type="path", default="/usr/local/lib/gpuops-hardening/mig"),
    # The boot script and the module_utils files it imports, as installed_files entries with their content
    # (read on the controller); the script's entry names its interpreters.
    script_file=dict(type="dict"),
    engine_files=dict(type="list", elements="dict", default=[]),
    reset=dict(type="bool", default=False),
    boot_timeout=dict(type="int", default=900),
    # What the boot script gives nvidia-smi (the mig role's mig_timeout); timeout is systemctl's.
    mig_timeout=dict(type="int", default=600),
)
SPEC_RULES = {}

UNIT_TEXT = """# Managed by gpuops.hardening (mig role): changes here are overwritten.
# Re-applies the MIG layout recorded by the gpuops.hardening mig role at every
# boot, when all MIG instances are gone. It orders itself after the driver and
# the daemons nvidia-smi coordinates resets with, and before the GPU clients,
# which it never waits for: no ordering cycle with them.
[Unit]
Description=gpuops.hardening MIG layout
After=systemd-modules-load.service nvidia-persistenced.service nvidia-fabricmanager.service
Before={clients}
ConditionPathExists={record}

[Service]
Type=oneshot
RemainAfterExit=yes
Environment=LC_ALL=C
ExecStart={script} {record}
TimeoutStartSec={boot_timeout}

[Install]
WantedBy=multi-user.target
"""


def package_dir(params):
    """Where the engine files go: below the library, laid out as the collection's own package, so the script's
    imports hold."""
    return os.path.join(params["library"], "ansible_collections", "gpuops", "hardening", "plugins", "module_utils")


def boot_files(params, layout):
    """The installed_files arguments that put the service in place for this layout."""
    record = {"layouts": layout["layouts"], "force": False, "reset": params["reset"], "timeout": params["mig_timeout"]}
    unit_path = os.path.join(params["unit_dir"], params["unit"])
    engine = [dict(entry, path=os.path.join(package_dir(params), entry["path"])) for entry in params["engine_files"]]
    return dict(
        folders=[{"path": folder, "mode": "0755"} for folder in
                 (package_dir(params), os.path.dirname(params["script"]), os.path.dirname(params["record"]))],
        files=engine + [
            dict(params["script_file"], path=params["script"], mode="0755"),
            {"path": params["record"], "content": json.dumps(record, indent=2, sort_keys=True) + "\n", "mode": "0644"},
            {"path": unit_path, "mode": "0644", "content": UNIT_TEXT.format(
                clients=" ".join(layout.get("gpu_clients") or []), record=params["record"], script=params["script"],
                boot_timeout=params["boot_timeout"])},
        ],
        absent=[],
        units=[{"name": params["unit"], "enabled": True}],
    )


def removal(params):
    """The installed_files arguments that take the service away: the unit disabled first, its file last."""
    return dict(folders=[], files=[], units=[{"name": params["unit"], "enabled": False}],
                absent=[params["script"], params["record"], params["library"],
                        os.path.join(params["unit_dir"], params["unit"])])


def converge(spec, host, check_mode):
    """Converge the boot service as spec says (check_mode: only say what would change); returns the result."""
    feature = host.feature(NAME, spec, check_mode)
    params = feature.params
    if params["state"] == "present":
        layout = host.results.get(params["layout_feature"])
        if not layout or layout.get("failed") or "layouts" not in layout:
            feature.fail_json(msg="the boot service records the layout of the feature %s, which did not run before it "
                              "in this call; nothing was changed" % params["layout_feature"])
        if not params["script_file"]:
            feature.fail_json(msg="script_file: the boot script is required with state present; nothing was changed")
        wanted = boot_files(params, layout)
    else:
        wanted = removal(params)
    files_spec = dict((key, spec[key]) for key in ("root", "lock_timeout", "timeout"))
    files_spec.update(wanted, owner="root", group="root")
    return installed_files.converge(checked_files_spec(files_spec), host, check_mode)


def checked_files_spec(files_spec):
    """files_spec completed with installed_files' defaults, as its own validation would."""
    validated = ArgumentSpecValidator(installed_files.ARGUMENT_SPEC).validate(files_spec)
    if validated.error_messages:
        raise ValueError("; ".join(validated.error_messages))
    return validated.validated_parameters
