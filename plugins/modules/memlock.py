#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: memlock
short_description: Converge the locked-memory limit for login sessions, services and Docker
version_added: "0.1.0"
description:
  - Converges, in one call, every place that sets the locked-memory limit (C(RLIMIT_MEMLOCK))
    GPU workloads depend on for pinned host memory and RDMA registration
    - a pam_limits file for login sessions;
    - a C(system.conf.d) drop-in with C(DefaultLimitMEMLOCK) for every service;
    - C(LimitMEMLOCK) drop-ins for listed services, only where their unit exists;
    - the C(memlock) entry of Docker's C(default-ulimits) in C(daemon.json), merged into the
      existing file without touching any other key, after a backup.
  - Reports the effective limits (pam_limits' result per domain, the systemd manager's default,
    each unit's limit, Docker's default ulimit), what the caller still has to do
    (daemon-reexec, daemon-reload, service restarts), and overrides by other files.
  - Everything is planned and checked before the first write, so an invalid C(daemon.json)
    fails the call with every file left as it was.
  - Runs no systemctl command that changes state; re-executing or reloading systemd and
    restarting services are left to the caller (the role's handlers), as RV(pending) says.
author:
  - gpuops.hardening developers (@gpuops)
extends_documentation_fragment:
  - gpuops.hardening.host
  - gpuops.hardening.host.lock
options:
  limit:
    description: The wanted limit, V(unlimited) or a positive number of KiB.
    type: str
    required: true
  login_sessions:
    description: Write the limit for login sessions to O(limits_path). When false, login sessions are only reported.
    type: bool
    default: true
  limits_domain:
    description:
      - The pam_limits domain the limit is for, as limits.conf(5) writes it - V(*) (everyone but root), a user
        name, C(@group), or a uid or gid range such as V(1000:) or V(@1000:2000).
      - User lines take precedence over C(@group) lines, which take precedence over V(*), in any file order;
        a more specific line elsewhere that keeps its users below O(limit) is reported in RV(conflicts).
    type: str
    default: "*"
  limits_root:
    description: Also write root's own lines, since pam_limits never applies V(*) or C(@group) lines to root.
    type: bool
    default: true
  limits_path:
    description: The pam_limits file to write, in C(/etc/security/limits.d).
    type: path
    default: /etc/security/limits.d/90-gpuops-memlock.conf
  services_default:
    description: Write O(manager_dropin_path), which makes the limit the default (C(DefaultLimitMEMLOCK)) of every service.
    type: bool
    default: true
  manager_dropin_path:
    description: The C(system.conf.d) drop-in with the services' default.
    type: path
    default: /etc/systemd/system.conf.d/90-gpuops-memlock.conf
  units:
    description:
      - Services that get a C(LimitMEMLOCK) drop-in when their unit file exists.
      - A masked unit (a link to C(/dev/null)) is left alone and named in RV(left_alone), since systemd reads no drop-in
        of it.
    type: list
    elements: str
    default: []
  unit_dropin_name:
    description: File name of each unit's drop-in, under C(/etc/systemd/system/UNIT.d/).
    type: str
    default: 90-gpuops-memlock.conf
  docker_daemon_json:
    description:
      - When to merge the memlock entry into Docker's C(default-ulimits).
      - V(auto) does it when Docker is installed (a C(docker.service) unit or a C(dockerd) binary)
        or O(docker_daemon_json_path) exists.
    type: str
    choices: [auto, always, never]
    default: auto
  docker_daemon_json_path:
    description: Docker's daemon configuration file.
    type: path
    default: /etc/docker/daemon.json
  restart_services:
    description:
      - Whether the caller restarts running services whose memlock settings are newer than their process.
      - When true, such services make the result changed and are listed in RV(pending.restart).
        When false they are listed and a warning says that they need a restart.
    type: bool
    default: false
  pam_services:
    description: PAM services whose session stack should run pam_limits; each one found without it is reported.
    type: list
    elements: str
    default: [login, sshd, su-l]
attributes:
  check_mode:
    description: Reports what would change and what would then be pending, writing nothing.
    support: full
  diff_mode:
    description: Shows each file before and after, and the running systemd default when a re-exec is pending.
    support: full
notes:
  - Inside a container without C(CAP_SYS_RESOURCE), nothing can raise the limit above the hard limit the
    container started with. The files are still written, and a warning names the limit in force.
  - Drop-ins are not removed when a unit leaves O(units).
  - Every path is taken below O(root); systemd is only asked when it runs under O(root).
requirements:
  - systemd, for the service parts and the report of their effective limits.
"""

EXAMPLES = r"""
- name: Unlimited locked memory everywhere
  gpuops.hardening.memlock:
    limit: unlimited
    units: [docker.service, containerd.service, slurmd.service]
  register: memlock_state
  notify: Re-execute systemd

- name: 64 GiB for the gpu group's login sessions only
  gpuops.hardening.memlock:
    limit: "67108864"
    limits_domain: "@gpu"
    limits_root: false
    services_default: false
    docker_daemon_json: never

- name: Only report the effective limits
  gpuops.hardening.memlock:
    limit: unlimited
    docker_daemon_json: never
  check_mode: true
  register: memlock_report
"""

RETURN = r"""
limit:
  description: The wanted limit, V(unlimited) or KiB.
  returned: always
  type: raw
  sample: unlimited
files:
  description: Each managed file and whether it changed (or would, in check mode).
  returned: always
  type: list
  elements: dict
  sample: [{"path": "/etc/docker/daemon.json", "changed": true, "backup_file": "/etc/docker/daemon.json.1234.2026-01-01@00:00:00~"}]
left_alone:
  description: What was left alone, and why.
  returned: always
  type: dict
  sample: {"containerd.service": "unit not installed", "daemon.json": "Docker is not installed and /etc/docker/daemon.json does not exist"}
effective:
  description:
    - The limits in effect, each V(unlimited) or KiB.
    - C(login_sessions) is what pam_limits sets per domain after reading limits.conf and limits.d
      (with the file each value comes from), for O(limits_domain) and root, and for every user or
      C(@group) whose more specific lines give its members something else (those entries name
      the domain they take precedence over in C(takes_precedence_over)).
    - C(services_default) and C(units) are systemd's as it runs now (null without systemd), before
      any pending re-exec or reload.
  returned: always
  type: dict
  sample:
    login_sessions:
      "*": {"soft": "unlimited", "hard": "unlimited", "soft_source": "/etc/security/limits.d/90-gpuops-memlock.conf",
            "hard_source": "/etc/security/limits.d/90-gpuops-memlock.conf"}
      "@gpu": {"soft": 65536, "hard": 65536, "soft_source": "/etc/security/limits.conf",
               "hard_source": "/etc/security/limits.conf", "takes_precedence_over": "*"}
    services_default: {"soft": "unlimited", "hard": "unlimited"}
    units: {"docker.service": {"soft": "unlimited", "hard": "unlimited", "active": true}}
    docker_default_ulimit: {"Name": "memlock", "Hard": -1, "Soft": -1}
pam_limits:
  description: For each of O(pam_services), whether its session stack runs pam_limits (null when the service is not installed).
  returned: always
  type: dict
  sample: {"login": true, "sshd": null, "su-l": true}
ceiling:
  description:
    - The hard limit of PID 1 and whether it may raise limits (C(CAP_SYS_RESOURCE)).
    - C(capped) is true when the wanted limit cannot take effect here.
  returned: always
  type: dict
  sample: {"hard": 8192, "can_raise": false, "capped": true}
pending:
  description: What the caller still has to do for the settings to apply.
  returned: always
  type: dict
  contains:
    daemon_reexec:
      description: The running manager's C(DefaultLimitMEMLOCK) is not yet the one in O(manager_dropin_path).
      type: bool
    daemon_reload:
      description: systemd has not loaded every unit drop-in yet.
      type: bool
    restart:
      description: Running services whose main process started before their memlock settings last changed.
      type: list
      elements: str
  sample: {"daemon_reexec": true, "daemon_reload": false, "restart": ["docker.service"]}
conflicts:
  description: Other files whose values win over the ones this module writes.
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import memlock as engine
from ansible_collections.gpuops.hardening.plugins.module_utils.feature_module import run_engine


def main():
    module = AnsibleModule(argument_spec=engine.ARGUMENT_SPEC, supports_check_mode=True, **engine.SPEC_RULES)
    run_engine(module, engine)


if __name__ == "__main__":
    main()
