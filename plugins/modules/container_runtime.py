#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: container_runtime
short_description: Register the NVIDIA runtime with the node's container engines and keep its CDI spec true
version_added: "2.0.0"
description:
  - Finds the container engines installed on the node (Docker, containerd, CRI-O, Podman) and the node's C(nvidia-ctk),
    the NVIDIA Container Toolkit's CLI; the behaviour followed is toolkit v1.19.1's. Without C(nvidia-ctk) it fails
    before any change, naming the package C(nvidia-container-toolkit), or installs that package from the node's
    configured repositories with O(install=true).
  - Runs C(nvidia-ctk runtime configure) for Docker, containerd and CRI-O on copies of their configuration in a
    scratch folder, never on the files themselves, so check mode computes exactly what a real run writes.
  - Docker's C(/etc/docker/daemon.json) gets the keys the toolkit sets (C(runtimes.nvidia), and C(default-runtime) with
    O(set_default=true)) and C(default-shm-size) from O(shm_size), merged key by key; every other key, and the file's
    layout, stay. A file that is not a JSON object fails before any change.
  - containerd gets the toolkit's drop-in C(/etc/containerd/conf.d/99-nvidia.toml). A C(config.toml) that does not
    import that folder fails before any change, as containerd would never read the drop-in; a missing or empty one
    gets the toolkit's (C(version) and C(imports)). CRI-O gets C(/etc/crio/crio.conf.d/99-nvidia.toml).
  - Writes the CDI spec of C(nvidia-ctk cdi generate) (whole GPUs and MIG devices by index and by UUID) to
    C(/var/run/cdi/nvidia.yaml) where the toolkit ships its refresh units (and enables them, starting the path unit), else to
    C(/etc/cdi/nvidia.yaml); a spec that no longer matches the node is rewritten and C(changes) of RV(cdi) lists what
    differed (devices, device nodes and libraries, the driver version).
  - Reloads dockerd (SIGHUP, for C(runtimes), C(default-runtime) and C(default-shm-size)) and restarts containerd
    and CRI-O, whose containers keep running, only when their files changed and they run; a Docker restart without
    C(live-restore) that would stop running containers fails before any change, naming them, unless
    O(force_restart=true). A masked unit is left alone, with a warning.
author:
  - gpuops.hardening developers (@gpuops)
extends_documentation_fragment:
  - gpuops.hardening.host
  - gpuops.hardening.host.lock
options:
  engines:
    description:
      - The container engines to configure; V(auto) finds the installed ones, except a containerd whose
        C(config.toml) disables the CRI plugin (it serves Docker alone). An engine named here that is not
        installed fails before any change.
    type: list
    elements: str
    choices: [auto, docker, containerd, crio, podman]
    default: [auto]
  set_default:
    description: Make the NVIDIA runtime each engine's default runtime (C(nvidia-ctk runtime configure --set-as-default)).
    type: bool
    default: false
  shm_size:
    description: Docker's C(default-shm-size), such as V(8g); empty leaves it as it is.
    type: str
    default: ""
  install:
    description: Install C(nvidia-container-toolkit) from the node's configured repositories where C(nvidia-ctk) is missing.
    type: bool
    default: false
  force_restart:
    description: Restart Docker even when, without C(live-restore), that stops running containers.
    type: bool
    default: false
  nvidia_ctk_path:
    description: The C(nvidia-ctk) to run; by default the one on the node's C(PATH).
    type: path
attributes:
  check_mode:
    description: Runs C(nvidia-ctk) on scratch copies as a real run does, and reports what would change without writing
      or telling any daemon anything.
    support: full
  diff_mode:
    description: Shows each file before and after.
    support: full
notes:
  - The lab and the tests use the project's GPU emulator's C(nvidia-ctk); a real host needs the NVIDIA Container Toolkit.
requirements:
  - The NVIDIA Container Toolkit's C(nvidia-ctk), and the NVIDIA driver for the CDI spec.
"""

EXAMPLES = r"""
- name: The NVIDIA runtime for every installed engine, and a CDI spec
  gpuops.hardening.container_runtime:

- name: Docker only, the NVIDIA runtime as its default, 8 GiB of /dev/shm
  gpuops.hardening.container_runtime:
    engines: [docker]
    set_default: true
    shm_size: 8g
"""

RETURN = r"""
engines:
  description: The container engines configured.
  returned: always
  type: list
  elements: str
  sample: [docker, podman]
nvidia_ctk:
  description: The C(nvidia-ctk) that ran, or null.
  returned: always
  type: str
  sample: /usr/bin/nvidia-ctk
package_installed:
  description: The package this call installed (would install, in check mode), or null.
  returned: always
  type: str
runtimes:
  description: Per engine, the file it reads the NVIDIA runtime from and whether its files changed (would change, in
    check mode); for Docker the keys that changed and whether C(live-restore) is on.
  returned: always
  type: dict
  sample: {"docker": {"path": /etc/docker/daemon.json, "keys_changed": [runtimes], "live_restore": false, "changed": true}}
shm_size:
  description: Docker's C(default-shm-size) as set, or null.
  returned: always
  type: str
  sample: 8g
cdi:
  description: The CDI spec (C(path), C(devices), C(driver_version), C(changed), C(stale) and C(changes) against the
    installed one), or null.
  returned: always
  type: dict
refresh_units:
  description: Whether the toolkit's CDI refresh units are shipped and whether enabling them changed anything.
  returned: always
  type: dict
services:
  description: Each unit reloaded or restarted.
  returned: always
  type: dict
  sample: {"containerd.service": restarted}
left_alone:
  description: Units left as they are, and why.
  returned: always
  type: dict
running_containers:
  description: Docker's running containers, read when a restart was due; null when not read.
  returned: always
  type: list
  elements: str
backups:
  description: Each drop-in or CDI spec replaced, and where its old content was kept (below
    /var/lib/gpuops-hardening/backups/container_runtime, never in a folder an engine reads whole).
  returned: always
  type: dict
skipped_reason:
  description: Why nothing was configured (no container engine), or null.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import container_runtime as engine
from ansible_collections.gpuops.hardening.plugins.module_utils.feature_module import run_engine


def main():
    module = AnsibleModule(argument_spec=engine.ARGUMENT_SPEC, supports_check_mode=True, **engine.SPEC_RULES)
    run_engine(module, engine)


if __name__ == "__main__":
    main()
