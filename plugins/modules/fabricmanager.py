#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: fabricmanager
short_description: NVIDIA Fabric Manager at the driver's version on NVSwitch nodes, running, every GPU's fabric trained
version_added: "2.0.0"
description:
  - Runs only where the GPUs sit behind NVSwitches, that is where C(/dev/nvidia-nvswitchN) exists; elsewhere it changes
    nothing and says why in RV(skipped_reason). GPUs whose model's boards carry NVSwitches (O(fabric_gpus)) without
    those device nodes fail before any change (the NVSwitch driver did not load).
  - Reads the driver's version (C(nvidia-smi -q -x)), C(nv-fabricmanager --version) and the installed package's
    version (C(dpkg-query) or C(rpm -q)), and fails before any change unless Fabric Manager's version equals the
    driver's, naming both and the package to install (C(nvidia-fabricmanager-<branch>) on Debian and Ubuntu,
    C(nvidia-fabric-manager) on EL, as NVIDIA's Fabric Manager user guide names them).
  - With O(install=true), a missing package, or one at another version, is first installed at the driver's version
    from the node's configured repositories (C(apt-get) with the exact version C(apt-cache madison) offers, or
    C(dnf)).
  - Adds the drop-in C(/etc/systemd/system/nvidia-fabricmanager.service.d/90-gpuops-fabricmanager.conf), which sets
    C(ConditionPathExistsGlob=/dev/nvidia-nvswitch[0-9]*), so an image shared by PCIe and NVSwitch nodes boots
    cleanly on both, and C(After=nvidia-persistenced.service), the first step of the boot order persistence,
    Fabric Manager, the MIG boot service, the GPU clients. The packaged unit is never edited.
  - Enables and starts C(nvidia-fabricmanager.service), then waits up to O(wait_seconds) for every GPU that reports
    its fabric to read Completed with status Success; a timeout names the GPUs still training and the daemon's last
    journal lines.
  - A start over GPUs an earlier daemon trained is a restart, which needs every GPU reset; it is refused while
    compute processes run on them (named) unless O(force=true). The GPU clients (O(gpu_clients)) that run are
    stopped around the reset and the start and started again, as the MIG change does.
  - A masked unit fails before any change, naming the mask.
author:
  - gpuops.hardening developers (@gpuops)
extends_documentation_fragment:
  - gpuops.hardening.host
  - gpuops.hardening.host.lock
options:
  fabric_gpus:
    description:
      - Per GPU product name (as nvidia-smi prints it), the GPU count from which its boards carry NVSwitches. The
        roles pass the audit's model table (C(plugins/plugin_utils/gpu_models.py)).
    type: dict
    default: {}
  wait_seconds:
    description: Seconds to wait for every GPU's fabric to be trained after the daemon starts.
    type: int
    default: 120
  force:
    description:
      - V(true) restarts Fabric Manager over trained GPUs while compute processes run on them (they lose the GPUs
        in the reset).
      - V(false) refuses that restart before any change, naming the processes.
    type: bool
    default: false
  install:
    description:
      - V(true) installs the Fabric Manager package at the driver's version from the node's configured repositories
        where it is missing or at another version.
      - V(false) fails on a missing or mismatched package before any change, naming the package to install.
    type: bool
    default: false
  gpu_clients:
    description: The services stopped around a restart when they run, and started again after it.
    type: list
    elements: str
    default: [nvsm.service, nvidia-dcgm.service, dcgm-exporter.service, kubelet.service]
attributes:
  check_mode:
    description:
      - Reports what would change without installing, writing or telling systemd anything; the fabric is not
        waited for when the daemon would be started, and RV(verification) says so. With a package to install, the
        rest is not predicted.
    support: full
  diff_mode:
    description: Shows the drop-in before and after.
    support: full
notes:
  - The lab and the tests use the project's GPU emulator; a real host needs the NVIDIA driver and Fabric Manager.
requirements:
  - systemd, the NVIDIA driver's nvidia-smi and, on NVSwitch nodes, NVIDIA Fabric Manager.
"""

EXAMPLES = r"""
- name: Fabric Manager on NVSwitch nodes, a no-op elsewhere
  gpuops.hardening.fabricmanager:

- name: The same, installing the driver's Fabric Manager from the configured repositories
  gpuops.hardening.fabricmanager:
    install: true
    wait_seconds: 300
"""

RETURN = r"""
nvswitch_devices:
  description: The NVSwitch device nodes found.
  returned: always
  type: list
  elements: str
  sample: [/dev/nvidia-nvswitch0, /dev/nvidia-nvswitch1]
fabric_expected:
  description: The GPU product names whose count on the node means an NVSwitch board, with that count.
  returned: always
  type: dict
  sample: {"NVIDIA H100 80GB HBM3": 8}
driver_version:
  description: The NVIDIA driver's version, or null without nvidia-smi.
  returned: always
  type: str
  sample: 535.129.03
daemon_version:
  description: What C(nv-fabricmanager --version) reads, or null where it was not read.
  returned: always
  type: str
  sample: 535.129.03
package:
  description: The Fabric Manager package for the driver, or null where none is needed.
  returned: always
  type: str
  sample: nvidia-fabricmanager-535
package_version:
  description: The installed package's upstream version, or null (not installed, or not known).
  returned: always
  type: str
  sample: 535.129.03
installed:
  description: The package and version this call installed (or would install, in check mode), or null.
  returned: always
  type: str
  sample: nvidia-fabricmanager-535 535.129.03-1
unit_path:
  description: The unit file systemd loads, or null.
  returned: always
  type: str
  sample: /lib/systemd/system/nvidia-fabricmanager.service
dropin:
  description: The drop-in (C(path), C(changed)), or null where none is needed.
  returned: always
  type: dict
  sample: {"path": "/etc/systemd/system/nvidia-fabricmanager.service.d/90-gpuops-fabricmanager.conf", "changed": false}
enabled_changed:
  description: Whether the unit was enabled by this call.
  returned: always
  type: bool
service_action:
  description: C(started), C(restarted) (the GPUs reset first) or C(none).
  returned: always
  type: str
  sample: none
clients_stopped:
  description: The GPU clients stopped around a restart and started again (that would be, in check mode).
  returned: always
  type: list
  elements: str
gpus:
  description: Each GPU's fabric state and status as nvidia-smi read it last (null state where not reported).
  returned: always
  type: list
  elements: dict
  sample: [{"index": 0, "uuid": "GPU-5d1b7a3e-0000-4000-8000-000000000000", "state": "Completed", "status": "Success"}]
verification:
  description: C(passed), or why the fabric was not verified.
  returned: always
  type: str
  sample: passed
skipped_reason:
  description: Why the node needs no Fabric Manager (no NVSwitch, no driver), or null.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import fabricmanager as engine
from ansible_collections.gpuops.hardening.plugins.module_utils.feature_module import run_engine


def main():
    module = AnsibleModule(argument_spec=engine.ARGUMENT_SPEC, supports_check_mode=True, **engine.SPEC_RULES)
    run_engine(module, engine)


if __name__ == "__main__":
    main()
