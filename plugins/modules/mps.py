#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mps
short_description: CUDA MPS control daemons as systemd services, one per GPU set
version_added: "0.2.0"
description:
  - Runs one C(nvidia-cuda-mps-control -d) per GPU set as the unit C(gpuops-mps-NAME.service), with its pipe
    and log directories outside C(/tmp), C(CUDA_VISIBLE_DEVICES) set to the set's GPU UUIDs and a C(PIDFile).
  - After every start (C(ExecStartPost)) it sends the default active thread percentage and pinned-memory limits
    through the control pipe, because the daemon forgets them at C(quit).
  - Optionally sets EXCLUSIVE_PROCESS on the set's GPUs before start (C(ExecStartPre)) and, on stop
    (C(ExecStopPost)), restores the compute mode each GPU had before MPS took it, recorded in
    C(/var/lib/gpuops-hardening/mps/compute-modes.json).
  - Uses C(-multiuser-server) where every GPU of the set is Volta or newer.
  - Writes C(/etc/gpuops-hardening/mps/NAME.env) for C(EnvironmentFile=) and shells, C(/etc/profile.d/gpuops-mps.sh)
    when the host has one daemon, and C(/etc/tmpfiles.d/gpuops-mps.conf), which recreates the directories at boot.
  - Creates O(group) when missing and adds O(client_users) to it; only its members get into the pipe directories.
  - Checks every input against the host before any change, refuses GPUs in MIG mode, refuses client users the host
    has no account for, refuses a daemon whose unit is masked (a link to C(/dev/null), which writing the unit would
    lift; O(state=absent) leaves masks too), and refuses to restart or stop a daemon whose GPUs run client processes
    unless O(force). It refuses a pipe or log folder that exists and that it did not create, and any system folder.
  - Before it writes a daemon's changed unit or settings, it records the restart it owes in
    C(/var/lib/gpuops-hardening/mps-restart-pending.json), and removes the record once the daemons run on them; a
    run killed in between leaves the next run to restart them.
  - Verifies each daemon through its pipe (C(get_server_list), C(get_default_active_thread_percentage),
    C(get_default_device_pinned_mem_limit)).
  - O(state=absent) stops and removes every daemon this module made, and restores the recorded compute modes; it
    removes only folders it created.
author:
  - gpuops.hardening developers (@gpuops)
extends_documentation_fragment:
  - gpuops.hardening.host
  - gpuops.hardening.host.lock
options:
  state:
    description: V(present) converges the daemons; V(absent) removes all of them.
    type: str
    choices: [present, absent]
    default: present
  gpu_sets:
    description:
      - Daemon name to the GPUs it serves, each by index or UUID (a unique UUID prefix with C(GPU-) also works).
      - A name has lower-case letters, digits, C(-) and C(_), starts with a letter or digit and has at most 32
        characters, as the role requires; any other name fails the call before any change.
      - Empty is one daemon, C(all), for every GPU.
    type: dict
    default: {}
  active_thread_percentage:
    description: The default active thread percentage of the daemons' servers (1 to 100).
    type: int
    default: 100
  pinned_mem_limit:
    description: The default pinned device memory limit of each client on each GPU, such as V(2G) or V(512M); empty for none.
    type: str
    default: ""
  exclusive_process:
    description: Set EXCLUSIVE_PROCESS on the GPUs before each start, so that only the MPS server uses them.
    type: bool
    default: true
  multiuser_server:
    description: Start with C(-multiuser-server) where every GPU of the set is Volta or newer; elsewhere it is left out with a warning.
    type: bool
    default: true
  group:
    description:
      - The group whose members may use the daemons. O(state=present) creates it as a system group when the host
        lacks it (C(groupadd --system)); O(state=absent) leaves it, as it may hold users for other purposes.
    type: str
    default: gpu-mps
  client_users:
    description:
      - Existing accounts to add to O(group) (C(gpasswd -a)), read through the host's name service, so LDAP or SSSD
        accounts count.
      - An account the host lacks fails the call before any change; the module creates no account.
    type: list
    elements: str
    default: []
  pipe_directory:
    description:
      - The folder that holds one pipe directory per daemon.
      - It, and each daemon's directory below it, must be a folder that does not exist yet (the module creates it)
        or one this module created on an earlier run, and never a system folder such as C(/run), C(/var/log) or
        C(/); anything else fails the call before any change, as the module sets the folders' mode and owner and
        its C(tmpfiles.d) entry sets them again at every boot.
      - The folders it created are recorded in C(/var/lib/gpuops-hardening/mps/folders.json) (and, for runs of
        earlier versions, named in its C(tmpfiles.d) entry); only those are its own.
    type: path
    default: /run/nvidia-mps
  log_directory:
    description:
      - The folder that holds one log directory per daemon, under the same rule as O(pipe_directory).
      - O(state=absent) leaves the logs, and they stay the module's own for a later O(state=present).
    type: path
    default: /var/log/nvidia-mps
  directory_mode:
    description:
      - Octal mode of each daemon's pipe and log directory, owned by root and O(group).
      - The role allows no bit for others, so that only the group gets in.
    type: str
    default: "0770"
  allow_mig:
    description: Run MPS on GPUs in MIG mode too.
    type: bool
    default: false
  force:
    description: Restart or stop a daemon even while client processes run on its GPUs (they lose their server).
    type: bool
    default: false
  require_gpu:
    description:
      - With O(state=present), V(true) fails on a host without C(nvidia-smi); V(false) skips it.
      - O(state=absent) never needs a GPU.
    type: bool
    default: true
attributes:
  check_mode:
    description: Reports what would change; nothing is written, started or stopped, and the pipe checks are skipped.
    support: full
  diff_mode:
    description: Shows every file before and after.
    support: full
notes:
  - MPS clients share one GPU memory space, so one client's fatal fault can end the others.
requirements:
  - systemd, nvidia-smi and nvidia-cuda-mps-control.
"""

EXAMPLES = r"""
- name: One MPS daemon for all GPUs
  gpuops.hardening.mps:

- name: Two daemons, half the threads each, 8 GiB pinned per client
  gpuops.hardening.mps:
    gpu_sets:
      left: [0, 1, 2, 3]
      right: [4, 5, 6, 7]
    active_thread_percentage: 50
    pinned_mem_limit: 8G
    client_users: [svc-triton]

- name: Remove MPS and restore the compute modes
  gpuops.hardening.mps:
    state: absent
"""

RETURN = r"""
daemons:
  description: Each daemon of O(state=present).
  returned: always
  type: list
  elements: dict
  sample: [{"name": "all", "unit": "gpuops-mps-all.service", "gpus": ["GPU-5d1b7a3e-0000-4000-8000-000000000000"],
            "pipe_directory": "/run/nvidia-mps/all", "log_directory": "/var/log/nvidia-mps/all", "multiuser_server": true,
            "exclusive_process": true, "action": "started",
            "verified": {"server_list": [], "active_thread_percentage": 100.0, "pinned_mem_limits": {}}}]
removed:
  description: The daemons this call removed (gone from O(gpu_sets), or all with O(state=absent)).
  returned: always
  type: list
  elements: str
  sample: [old]
group_created:
  description: Whether this call created O(group).
  returned: always
  type: bool
  sample: false
users_added:
  description: The O(client_users) this call added to O(group).
  returned: always
  type: list
  elements: str
  sample: [svc-triton]
compute_modes_restored:
  description: GPU UUID to the compute mode this call set back.
  returned: always
  type: dict
  sample: {"GPU-5d1b7a3e-0000-4000-8000-000000000000": "Default"}
skipped_reason:
  description: Why the host was skipped, or null.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import mps as engine
from ansible_collections.gpuops.hardening.plugins.module_utils.feature_module import run_engine


def main():
    module = AnsibleModule(argument_spec=engine.ARGUMENT_SPEC, supports_check_mode=True, **engine.SPEC_RULES)
    run_engine(module, engine)


if __name__ == "__main__":
    main()
