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

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.hardening.plugins.module_utils import docker_daemon_json, memlock, pam_limits
from ansible_collections.gpuops.hardening.plugins.module_utils.host_env import container_type
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec, read_text, under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import ensure_content
from ansible_collections.gpuops.hardening.plugins.module_utils.pam_stack import pam_stack_has_limits
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import (
    UNIT_DIRS, Systemctl, dropin_files, find_unit, is_booted, last_setting, unit_file_exists,
)
from ansible_collections.gpuops.hardening.plugins.module_utils.run_lock import hold_node_lock

SYSTEM_CONF = "/etc/systemd/system.conf"
SYSTEM_CONF_DIRS = (
    "/etc/systemd/system.conf.d",
    "/run/systemd/system.conf.d",
    "/usr/local/lib/systemd/system.conf.d",
    "/usr/lib/systemd/system.conf.d",
)
UNIT_DROPIN_ROOT = "/etc/systemd/system"
DOCKER_UNIT = "docker.service"
DOCKERD_PATHS = ("/usr/bin/dockerd", "/usr/sbin/dockerd", "/usr/local/bin/dockerd", "/bin/dockerd")
UNIT_PROPERTIES = ["Id", "LoadState", "ActiveState", "MainPID", "NeedDaemonReload", "LimitMEMLOCK", "LimitMEMLOCKSoft", "DropInPaths", "ExecStart"]


class MemlockRun(object):
    """Plans every change first, then writes, then works out what is pending."""

    def __init__(self, module, limit):
        self.module = module
        self.params = module.params
        self.limit = limit
        self.root = self.params["root"]
        self.planned = {}        # path -> (content, mode, backup)
        self.unit_dropins = {}   # unit -> drop-in path
        self.left_alone = {}
        self.conflicts = []
        self.diffs = []
        self.files = []
        self.systemd = is_booted(self.root)
        self.systemctl = Systemctl(module, timeout=self.params["timeout"]) if self.systemd else None
        self.manager = {}
        self.unit_state = {}
        self.docker_json_path = None

    def path(self, absolute):
        return under_root(self.root, absolute)

    def unit_path(self, path):
        """A path as systemd (which runs under root) names it."""
        relative = os.path.relpath(path, self.root)
        return "/" + relative if self.root != "/" else path

    def content_of(self, path):
        """A file's text as it is after this run (planned content in check mode)."""
        if path in self.planned:
            return self.planned[path][0]
        return read_text(path)

    # --- planning -----------------------------------------------------------

    def plan(self):
        params = self.params
        if params["login_sessions"]:
            content = pam_limits.render_limits(params["limits_domain"], self.limit, params["limits_root"])
            self.planned[self.path(params["limits_path"])] = (content, 0o644, False)
        if params["services_default"]:
            self.planned[self.path(params["manager_dropin_path"])] = (memlock.render_manager_dropin(self.limit), 0o644, False)
        unit_dirs = [self.path(directory) for directory in UNIT_DIRS]
        for unit in params["units"]:
            mask_path, unit_path = find_unit(unit, self.root)
            if mask_path:
                # systemd reads no drop-in of a masked unit; whoever masked it decides when it runs again.
                self.left_alone[unit] = "unit masked (%s -> /dev/null)" % mask_path
                continue
            if not unit_path:
                self.left_alone[unit] = "unit not installed"
                continue
            dropin = self.path(os.path.join(UNIT_DROPIN_ROOT, unit + ".d", params["unit_dropin_name"]))
            self.unit_dropins[unit] = dropin
            self.planned[dropin] = (memlock.render_unit_dropin(self.limit), 0o644, False)
        self.query_systemd()
        self.plan_docker(unit_dirs)

    def query_systemd(self):
        if not self.systemd:
            return
        self.manager = self.systemctl.show([], ["DefaultLimitMEMLOCK", "DefaultLimitMEMLOCKSoft"])[0]
        units = list(self.unit_dropins)
        if DOCKER_UNIT not in units and unit_file_exists(DOCKER_UNIT, [self.path(directory) for directory in UNIT_DIRS]):
            units.append(DOCKER_UNIT)
        if units:
            for block in self.systemctl.show(units, UNIT_PROPERTIES):
                self.unit_state[block.get("Id")] = block

    def plan_docker(self, unit_dirs):
        params = self.params
        path = self.path(params["docker_daemon_json_path"])
        # Write through a link to the file it names rather than replacing the link.
        path = os.path.realpath(path) if os.path.islink(path) else path
        mode = params["docker_daemon_json"]
        installed = unit_file_exists(DOCKER_UNIT, unit_dirs) or any(os.path.exists(self.path(binary)) for binary in DOCKERD_PATHS)
        if mode == "never":
            self.left_alone["daemon.json"] = "docker_daemon_json is never"
            return
        if mode == "auto" and not installed and not os.path.exists(path):
            self.left_alone["daemon.json"] = "Docker is not installed and %s does not exist" % path
            return
        exec_start = self.unit_state.get(DOCKER_UNIT, {}).get("ExecStart", "")
        if "--default-ulimit" in exec_start:
            # dockerd refuses to start when an option is set both as a flag and in daemon.json.
            message = ("%s starts dockerd with --default-ulimit; dockerd would refuse to start with default-ulimits in %s too. "
                       "Move the flag into daemon.json, then run again." % (DOCKER_UNIT, path))
            self.left_alone["daemon.json"] = message
            self.module.warn(message)
            return
        before = read_text(path)
        try:
            merged, dummy = docker_daemon_json.merge_daemon_json(before, docker_daemon_json.docker_ulimit(self.limit))
        except docker_daemon_json.DaemonJsonError as exc:
            self.module.fail_json(msg="%s %s; it was left untouched and nothing else was changed. Fix it and run again." % (path, exc))
        current_mode = os.stat(path).st_mode & 0o7777 if before is not None else 0o644
        self.planned[path] = (merged, current_mode, True)
        self.docker_json_path = path

    # --- writing ------------------------------------------------------------

    def write(self):
        for path, (content, mode, backup) in self.planned.items():
            file_result, diff = ensure_content(self.module, path, content, mode=mode, backup=backup)
            self.files.append(file_result)
            if diff:
                self.diffs.append(diff)

    def changed_paths(self):
        return set(entry["path"] for entry in self.files if entry["changed"])

    # --- after the writes ---------------------------------------------------

    def manager_pending(self):
        """True when the manager must be re-executed to pick up the drop-in."""
        if not self.params["services_default"]:
            return False
        ours = self.path(self.params["manager_dropin_path"])
        files = [self.path(SYSTEM_CONF)] + dropin_files([self.path(directory) for directory in SYSTEM_CONF_DIRS])
        if ours not in files:
            files.append(ours)
        winner = None
        for path in files:
            value = last_setting(self.content_of(path), "Manager", "DefaultLimitMEMLOCK")
            if value is not None:
                winner = (path, value)
        if winner and winner[0] != ours:
            self.conflicts.append("DefaultLimitMEMLOCK=%s in %s wins over %s" % (winner[1], winner[0], ours))
            return False
        if not self.manager:
            # No running systemd to re-execute (an image prepared offline).
            return False
        if ours in self.changed_paths():
            return True
        wanted = memlock.limit_bytes(self.limit)
        wanted = "infinity" if wanted is None else str(wanted)
        running = (self.manager.get("DefaultLimitMEMLOCK"), self.manager.get("DefaultLimitMEMLOCKSoft"))
        if running != (wanted, wanted):
            self.diffs.append({
                "before_header": "systemd manager (running)", "after_header": "systemd manager (after daemon-reexec)",
                "before": "DefaultLimitMEMLOCK=%s\n" % running[0], "after": "DefaultLimitMEMLOCK=%s\n" % wanted,
            })
            return True
        return False

    def reload_pending(self):
        changed = self.changed_paths()
        pending = False
        wanted = memlock.limit_bytes(self.limit)
        wanted = "infinity" if wanted is None else str(wanted)
        for unit, dropin in self.unit_dropins.items():
            state = self.unit_state.get(unit)
            if not state:
                continue
            if dropin in changed:
                pending = True
            elif state.get("NeedDaemonReload") == "yes" or self.unit_path(dropin) not in state.get("DropInPaths", "").split():
                # Written by an earlier run whose reload never happened.
                pending = True
            elif state.get("LimitMEMLOCK") != wanted:
                self.conflicts.append("%s runs with LimitMEMLOCK=%s despite %s; a later drop-in or the unit file wins (drop-ins: %s)"
                                      % (unit, state.get("LimitMEMLOCK"), dropin, state.get("DropInPaths") or "none"))
        return pending

    def restart_pending(self):
        """Running services whose memlock settings are newer than their main process."""
        changed = self.changed_paths()
        btime = memlock.boot_epoch(read_text(self.path("/proc/stat")))
        ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        pending = []
        for unit, state in sorted(self.unit_state.items()):
            sources = [self.unit_dropins[unit]] if unit in self.unit_dropins else []
            if unit == DOCKER_UNIT and self.docker_json_path:
                sources.append(self.docker_json_path)
            pid = state.get("MainPID", "0")
            if not sources or state.get("ActiveState") != "active" or not pid.isdigit() or pid == "0":
                continue
            if any(source in changed for source in sources):
                pending.append(unit)
                continue
            stat_text = read_text(self.path("/proc/%s/stat" % pid))
            if not stat_text or btime is None:
                continue
            started = memlock.process_start_epoch(stat_text, btime, ticks)
            newest = max(os.stat(source).st_mtime for source in sources if os.path.exists(source))
            if newest > started:
                pending.append(unit)
        return pending

    # --- the report ---------------------------------------------------------

    def login_limits(self):
        params = self.params
        domains = [params["limits_domain"]]
        if params["limits_root"] and params["limits_domain"] != "root":
            domains.append("root")
        ours = self.path(params["limits_path"]) if params["login_sessions"] else None
        limits_dir = os.path.dirname(self.path(params["limits_path"]))
        paths = [self.path(pam_limits.LIMITS_CONF)] + dropin_files([limits_dir])
        if ours and ours not in paths:
            paths.append(ours)
        report, conflicts = pam_limits.login_report([(path, self.content_of(path)) for path in paths], domains, ours, self.limit)
        self.conflicts.extend(conflicts)
        return report

    def systemd_limits(self):
        if not self.systemd:
            return None, {}
        default = {
            "soft": memlock.from_systemd_bytes(self.manager.get("DefaultLimitMEMLOCKSoft")),
            "hard": memlock.from_systemd_bytes(self.manager.get("DefaultLimitMEMLOCK")),
        }
        units = {}
        for unit, state in sorted(self.unit_state.items()):
            if state.get("LoadState") == "not-found":
                continue
            units[unit] = {
                "soft": memlock.from_systemd_bytes(state.get("LimitMEMLOCKSoft")),
                "hard": memlock.from_systemd_bytes(state.get("LimitMEMLOCK")),
                "active": state.get("ActiveState") == "active",
            }
        return default, units

    def pam_report(self):
        def read_service(name):
            return read_text(self.path(os.path.join("/etc/pam.d", name)))
        report = dict((service, pam_stack_has_limits(service, read_service)) for service in self.params["pam_services"])
        if self.params["login_sessions"]:
            for service, has_limits in sorted(report.items()):
                if has_limits is False:
                    self.module.warn("/etc/pam.d/%s does not run pam_limits.so in its session stack: sessions it opens ignore %s"
                                     % (service, self.params["limits_path"]))
        return report

    def ceiling(self):
        hard = memlock.proc_memlock_hard(read_text(self.path("/proc/1/limits")))
        can_raise = memlock.has_capability(read_text(self.path("/proc/1/status")), memlock.CAP_SYS_RESOURCE)
        capped = hard is not None and not can_raise and not memlock.covers(hard, self.limit)
        if capped:
            where = container_type(self.root)
            self.module.warn(
                "memlock %s cannot take effect here: PID 1 lacks CAP_SYS_RESOURCE%s and its hard limit is %s KiB, so services "
                "and login sessions stay at %s KiB at most. The settings are persisted and apply where the limit may be raised "
                "(a host or VM)." % (self.limit, " (inside this %s container)" % where if where else "", hard, hard))
        return {"hard": hard, "can_raise": can_raise, "capped": capped}


def main():
    argument_spec = host_argument_spec()
    argument_spec.update(
        limit=dict(type="str", required=True),
        login_sessions=dict(type="bool", default=True),
        limits_domain=dict(type="str", default="*"),
        limits_root=dict(type="bool", default=True),
        limits_path=dict(type="path", default="/etc/security/limits.d/90-gpuops-memlock.conf"),
        services_default=dict(type="bool", default=True),
        manager_dropin_path=dict(type="path", default="/etc/systemd/system.conf.d/90-gpuops-memlock.conf"),
        units=dict(type="list", elements="str", default=[]),
        unit_dropin_name=dict(type="str", default="90-gpuops-memlock.conf"),
        docker_daemon_json=dict(type="str", choices=["auto", "always", "never"], default="auto"),
        docker_daemon_json_path=dict(type="path", default="/etc/docker/daemon.json"),
        restart_services=dict(type="bool", default=False),
        pam_services=dict(type="list", elements="str", default=["login", "sshd", "su-l"]),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    hold_node_lock(module, "gpuops.hardening.memlock")
    params = module.params
    try:
        limit = memlock.parse_limit(params["limit"])
    except ValueError as exc:
        module.fail_json(msg="limit: %s" % exc)
    if not pam_limits.valid_domain(params["limits_domain"]):
        module.fail_json(msg="limits_domain: %r is not a pam_limits domain; allowed: * (everyone but root), a user name, "
                             "@group, or a uid/gid range such as 1000: or @1000:2000" % params["limits_domain"])
    if "/" in params["unit_dropin_name"] or not params["unit_dropin_name"].endswith(".conf"):
        module.fail_json(msg="unit_dropin_name must be a file name ending in .conf, got %r" % params["unit_dropin_name"])

    run = MemlockRun(module, limit)
    run.plan()
    run.write()

    services_default, units = run.systemd_limits()
    planned_json = run.content_of(run.docker_json_path) if run.docker_json_path else None
    pending = {
        "daemon_reexec": run.manager_pending(),
        "daemon_reload": run.reload_pending(),
        "restart": run.restart_pending(),
    }
    if pending["restart"] and not params["restart_services"]:
        module.warn("running services started before their memlock settings changed: %s. Restart them to apply "
                    "the new limit (restart_services is false)." % ", ".join(pending["restart"]))
    restarts = params["restart_services"] and bool(pending["restart"])
    result = dict(
        changed=bool(run.changed_paths()) or pending["daemon_reexec"] or pending["daemon_reload"] or restarts,
        limit=limit,
        files=run.files,
        left_alone=run.left_alone,
        effective=dict(
            login_sessions=run.login_limits(),
            services_default=services_default,
            units=units,
            docker_default_ulimit=docker_daemon_json.daemon_json_ulimit(planned_json) if planned_json else None,
        ),
        pam_limits=run.pam_report(),
        ceiling=run.ceiling(),
        pending=pending,
        conflicts=run.conflicts,
    )
    for conflict in run.conflicts:
        module.warn("memlock override: %s" % conflict)
    if module._diff:
        result["diff"] = run.diffs
    module.exit_json(**result)


if __name__ == "__main__":
    main()
