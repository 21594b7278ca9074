#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: persistenced
short_description: Run nvidia-persistenced with persistence mode on, across reboots and package updates
version_added: "0.2.0"
description:
  - Finds the C(nvidia-persistenced.service) unit systemd would load (C(/etc/systemd/system) before C(/run),
    C(/usr/local/lib), C(/usr/lib) and C(/lib)) and reports which packaging it comes from (RV(flavour)).
  - Writes the drop-in C(/etc/systemd/system/nvidia-persistenced.service.d/90-gpuops-persistenced.conf), which resets
    C(ExecStart) and replaces it with the packaged command and arguments (C(--user), C(--group), ...) less
    C(--no-persistence-mode), plus C(--persistence-mode); and C(ConditionPathExists=/dev/nvidiactl), so the unit
    does nothing on a host without a GPU. The packaged unit itself is never edited, so package updates keep this.
  - Enables the unit; a static unit (no C([Install]), as Ubuntu ships it) gets the link
    C(multi-user.target.wants/nvidia-persistenced.service) in C(/etc/systemd/system) instead, as
    C(systemctl add-wants multi-user.target nvidia-persistenced.service) makes it.
  - Reloads systemd, restarts the daemon when the drop-in changed (starts it when stopped), then reads
    C(nvidia-smi --query-gpu=index,uuid,persistence_mode) and fails, naming the GPUs, unless every GPU reads Enabled.
  - Before it changes the drop-in, it records the restart it owes in
    C(/var/lib/gpuops-hardening/persistenced-restart-pending.json), and removes the record after the restart; a run
    killed in between leaves the next run to reload systemd and restart the daemon.
  - A masked unit is unmasked with O(unmask=true); otherwise the module fails before any change, naming the mask.
  - Without nvidia-persistenced (no unit), the legacy path, C(nvidia-smi -pm 1), which the driver forgets at reboot, and
    a oneshot unit C(gpuops-persistence-mode.service) that sets it again at every boot. Once the daemon is installed,
    the next run disables and removes that unit.
  - Warns about drop-ins that systemd applies after this module's own and that set C(ExecStart) again.
author:
  - gpuops.hardening developers (@gpuops)
extends_documentation_fragment:
  - gpuops.hardening.host
  - gpuops.hardening.host.lock
options:
  unmask:
    description:
      - V(true) removes a mask (a link to C(/dev/null)) of C(nvidia-persistenced.service) in C(/etc/systemd/system) or
        C(/run/systemd/system) and reports it in RV(unmasked).
      - V(false) fails on a masked unit before anything is changed, naming the mask.
    type: bool
    default: false
  require_gpu:
    description:
      - V(true) fails on a host without C(nvidia-smi) (no NVIDIA driver).
      - V(false) skips such a host with nothing changed and RV(skipped_reason) set.
    type: bool
    default: true
attributes:
  check_mode:
    description:
      - Reports what would change without writing files or telling systemd anything; the persistence check through
        nvidia-smi is skipped, and RV(verification) says so.
    support: full
  diff_mode:
    description: Shows the drop-in, the wants link, the mask and the legacy unit before and after.
    support: full
notes:
  - The lab and the tests use the project's GPU emulator; a real host needs the NVIDIA driver.
requirements:
  - systemd, and the NVIDIA driver's nvidia-smi.
"""

EXAMPLES = r"""
- name: Persistence mode through nvidia-persistenced
  gpuops.hardening.persistenced:

- name: The same where the unit was masked, skipping hosts without a GPU
  gpuops.hardening.persistenced:
    unmask: true
    require_gpu: false
"""

RETURN = r"""
mode:
  description: C(daemon) (nvidia-persistenced), C(legacy) (C(nvidia-smi -pm 1) and a boot unit), or null when skipped.
  returned: always
  type: str
  sample: daemon
flavour:
  description:
    - Where the unit comes from, by its content. C(upstream) (NVIDIA's template, C(--user)), C(debian) (C(--user nvpd)),
      C(ubuntu) (static, C(--no-persistence-mode)), C(nvidia-ubuntu) (NVIDIA's Ubuntu packaging, static, C(--user root)),
      C(custom) (anything else); null without a unit.
  returned: always
  type: str
  sample: ubuntu
unit_path:
  description: The unit file systemd loads, or null.
  returned: always
  type: str
  sample: /lib/systemd/system/nvidia-persistenced.service
unmasked:
  description: The mask this call removed (or would remove, in check mode), or null.
  returned: always
  type: str
  sample: /etc/systemd/system/nvidia-persistenced.service
dropin:
  description: The drop-in (C(path), C(changed), C(exec_start)), or null on the legacy path.
  returned: always
  type: dict
  sample: {"path": "/etc/systemd/system/nvidia-persistenced.service.d/90-gpuops-persistenced.conf", "changed": false,
           "exec_start": "/usr/bin/nvidia-persistenced --user nvidia-persistenced --persistence-mode"}
overridden_by:
  description:
    - Drop-ins systemd applies after this module's own that set C(ExecStart) again, so their command starts the
      daemon; each is named in a warning, and in the failure when persistence then does not read Enabled.
  returned: always
  type: list
  elements: str
  sample: [/etc/systemd/system/nvidia-persistenced.service.d/99-local.conf]
legacy_unit_removed:
  description: The legacy boot unit (C(gpuops-persistence-mode.service)) this call removed, because the daemon now
    keeps persistence mode; null when there was none.
  returned: always
  type: str
enabled_by:
  description: C(install) (systemctl enable), C(wants_link) (static unit), or null when skipped.
  returned: always
  type: str
  sample: wants_link
service_action:
  description: What was done to the daemon or legacy unit; C(restarted), C(started), C(set) (legacy C(-pm 1)) or C(none).
  returned: always
  type: str
  sample: none
gpus:
  description: Each GPU's persistence mode as nvidia-smi reads it after the call; empty in check mode and when skipped.
  returned: always
  type: list
  elements: dict
  sample: [{"index": 0, "uuid": "GPU-5d1b7a3e-0000-4000-8000-000000000000", "persistence_mode": "Enabled"}]
verification:
  description: C(passed), or why the nvidia-smi check did not run.
  returned: always
  type: str
  sample: skipped in check mode, which changes nothing to verify
skipped_reason:
  description: Why the host was skipped (no driver with O(require_gpu=false)), or null.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import persistenced as engine
from ansible_collections.gpuops.hardening.plugins.module_utils.feature_module import run_engine


def main():
    module = AnsibleModule(argument_spec=engine.ARGUMENT_SPEC, supports_check_mode=True, **engine.SPEC_RULES)
    run_engine(module, engine)


if __name__ == "__main__":
    main()
