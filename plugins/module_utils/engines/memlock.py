# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The memlock engine: unlimited locked memory: limits.d, systemd's default and unit drop-ins, and Docker's
default-ulimits.

converge(spec, host, check_mode) -> result, for the gpuops.hardening.memlock module and the node call.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpuops.hardening.plugins.module_utils import docker_daemon_json, memlock, pam_limits
from ansible_collections.gpuops.hardening.plugins.module_utils.host_env import container_type
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec, read_text, under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import ensure_content
from ansible_collections.gpuops.hardening.plugins.module_utils.pam_stack import pam_stack_has_limits
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import (
    UNIT_DIRS, Systemctl, dropin_files, find_unit, is_booted, last_setting, unit_file_exists,
)

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

    def __init__(self, feature, limit):
        self.feature = feature
        self.params = feature.params
        self.limit = limit
        self.root = self.params["root"]
        self.planned = {}        # path -> (content, mode, backup)
        self.unit_dropins = {}   # unit -> drop-in path
        self.left_alone = {}
        self.conflicts = []
        self.diffs = []
        self.files = []
        self.systemd = is_booted(self.root)
        self.systemctl = Systemctl(feature, timeout=self.params["timeout"]) if self.systemd else None
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
            self.feature.warn(message)
            return
        before = read_text(path)
        try:
            merged, dummy = docker_daemon_json.merge_daemon_json(before, docker_daemon_json.docker_ulimit(self.limit))
        except docker_daemon_json.DaemonJsonError as exc:
            self.feature.fail_json(msg="%s %s; it was left untouched and nothing else was changed. Fix it and run again." % (path, exc))
        current_mode = os.stat(path).st_mode & 0o7777 if before is not None else 0o644
        self.planned[path] = (merged, current_mode, True)
        self.docker_json_path = path

    # --- writing ------------------------------------------------------------

    def write(self):
        for path, (content, mode, backup) in self.planned.items():
            file_result, diff = ensure_content(self.feature, path, content, mode=mode, backup=backup)
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
                    self.feature.warn("/etc/pam.d/%s does not run pam_limits.so in its session stack: sessions it opens ignore %s"
                                      % (service, self.params["limits_path"]))
        return report

    def ceiling(self):
        hard = memlock.proc_memlock_hard(read_text(self.path("/proc/1/limits")))
        can_raise = memlock.has_capability(read_text(self.path("/proc/1/status")), memlock.CAP_SYS_RESOURCE)
        capped = hard is not None and not can_raise and not memlock.covers(hard, self.limit)
        if capped:
            where = container_type(self.root)
            self.feature.warn(
                "memlock %s cannot take effect here: PID 1 lacks CAP_SYS_RESOURCE%s and its hard limit is %s KiB, so services "
                "and login sessions stay at %s KiB at most. The settings are persisted and apply where the limit may be raised "
                "(a host or VM)." % (self.limit, " (inside this %s container)" % where if where else "", hard, hard))
        return {"hard": hard, "can_raise": can_raise, "capped": capped}


NAME = 'memlock'
ARGUMENT_SPEC = host_argument_spec()
ARGUMENT_SPEC.update(
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
SPEC_RULES = {}


def converge(spec, host, check_mode):
    """Converge this feature on the node as spec says (check_mode: only say what would change); returns the result."""
    feature = host.feature(NAME, spec, check_mode)
    params = feature.params
    try:
        limit = memlock.parse_limit(params["limit"])
    except ValueError as exc:
        feature.fail_json(msg="limit: %s" % exc)
    if not pam_limits.valid_domain(params["limits_domain"]):
        feature.fail_json(msg="limits_domain: %r is not a pam_limits domain; allowed: * (everyone but root), a user name, "
                          "@group, or a uid/gid range such as 1000: or @1000:2000" % params["limits_domain"])
    if "/" in params["unit_dropin_name"] or not params["unit_dropin_name"].endswith(".conf"):
        feature.fail_json(msg="unit_dropin_name must be a file name ending in .conf, got %r" % params["unit_dropin_name"])

    run = MemlockRun(feature, limit)
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
        feature.warn("running services started before their memlock settings changed: %s. Restart them to apply "
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
        feature.warn("memlock override: %s" % conflict)
    result["diff"] = run.diffs
    return result


def handlers(spec, result):
    """What the caller does after a converge, as the role's handlers do: systemd re-executed for a new
    DefaultLimitMEMLOCK (which a reload does not read) or reloaded for new drop-ins, and, with
    restart_services, each service restarted that runs on its old limit."""
    pending = result.get("pending") or {}
    todo = []
    if pending.get("daemon_reexec"):
        todo.append({"action": "daemon_reexec"})
    elif pending.get("daemon_reload"):
        todo.append({"action": "daemon_reload"})
    if spec["restart_services"]:
        todo.extend({"action": "restart", "unit": unit} for unit in pending.get("restart") or [])
    return todo
