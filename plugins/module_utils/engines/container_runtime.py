# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_runtime engine: the NVIDIA runtime registered with each container engine of the node, a CDI
spec that describes the GPUs as they are, and Docker's default /dev/shm size.

converge(spec, host, check_mode) -> result, for the gpuops.hardening.container_runtime module and the node call.

The node's own nvidia-ctk (NVIDIA Container Toolkit; the behaviour followed is v1.19.1's) says what each file
should hold: it runs on copies in a scratch folder, never on the files themselves, so check mode computes exactly
what a real run writes, and this engine then writes only what differs: Docker's daemon.json merged key by key
(every other key, and the file's layout, kept), containerd's and CRI-O's drop-ins whole, the CDI spec whole.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import tempfile

from ansible_collections.gpuops.hardening.plugins.module_utils import container_runtime as facts
from ansible_collections.gpuops.hardening.plugins.module_utils import docker_daemon_json
from ansible_collections.gpuops.hardening.plugins.module_utils.commands import CommandTimeout, run
from ansible_collections.gpuops.hardening.plugins.module_utils.host_options import host_argument_spec, read_text, under_root
from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import backup_copy, ensure_content, ensure_symlink
from ansible_collections.gpuops.hardening.plugins.module_utils.systemd import (
    UNIT_DIRS, Systemctl, find_unit, is_booted, last_setting)
from ansible_collections.gpuops.hardening.plugins.module_utils.unit_record import (
    CONTAINER_RUNTIME_ACTIONS_PENDING, STATE_DIR, RecordError, UnitRecord)

# Package managers, in the order they are looked for, and how each installs one package unattended.
PACKAGE_MANAGERS = (("apt-get", ["install", "-y", "--no-install-recommends"]), ("dnf", ["install", "-y"]),
                    ("yum", ["install", "-y"]), ("zypper", ["--non-interactive", "install"]))
# Package installs may fetch from a slow mirror.
INSTALL_TIMEOUT = 600
# dockerd re-reads these on SIGHUP (moby daemon/reload_unix.go, reloadPlatform: runtimes, default-runtime,
# default-shm-size); any other key needs a restart.
DOCKER_RELOADED_KEYS = ("runtimes", "default-runtime", "default-shm-size")
# Where a drop-in or spec this engine replaces is kept. Not beside it: CRI-O reads every file of crio.conf.d
# (cri-o pkg/config/config.go, UpdateFromPath walks the folder), so a copy there would be read as configuration.
BACKUP_DIR = STATE_DIR + "/backups/container_runtime"
# How each planned file's old content is kept: beside it (daemon.json), in BACKUP_DIR, or not at all.
BESIDE, APART = "beside", "apart"

NAME = "container_runtime"
ARGUMENT_SPEC = host_argument_spec()
ARGUMENT_SPEC.update(
    engines=dict(type="list", elements="str", choices=["auto"] + list(facts.ENGINES), default=["auto"]),
    set_default=dict(type="bool", default=False),
    shm_size=dict(type="str", default=""),
    install=dict(type="bool", default=False),
    force_restart=dict(type="bool", default=False),
    nvidia_ctk_path=dict(type="path"),
)
SPEC_RULES = {}


class ContainerRuntimeRun(object):
    """Plans every file first (in a scratch folder), decides the service actions, then writes and acts."""

    def __init__(self, feature, scratch):
        self.feature = feature
        self.params = feature.params
        self.root = self.params["root"]
        self.scratch = scratch
        self.ctk = None
        self.planned = []  # (engine or "cdi", host path, content, mode, BESIDE, APART or None)
        self.result = dict(changed=False, engines=[], nvidia_ctk=None, package_installed=None, runtimes={},
                           shm_size=None, cdi=None, refresh_units=None, services={}, left_alone={},
                           running_containers=None, skipped_reason=None, backups={})

    def path(self, absolute):
        return under_root(self.root, absolute)

    def fail(self, msg):
        self.feature.fail_json(msg=msg, **self.result)

    # --- what the node has ---------------------------------------------------

    def installed(self, engine):
        unit = facts.UNITS.get(engine)
        if unit and any(os.path.lexists(self.path(os.path.join(folder, unit))) for folder in UNIT_DIRS):
            return True
        return any(os.path.exists(self.path(os.path.join(folder, facts.BINARIES[engine])))
                   for folder in facts.BINARY_DIRS)

    def engines(self):
        wanted = self.params["engines"]
        if "auto" in wanted:
            return [engine for engine in facts.ENGINES if self.installed(engine) and not self.serves_docker_alone(engine)]
        missing = [engine for engine in wanted if not self.installed(engine)]
        if missing:
            looked_for = ", ".join("%s unit nor %s binary" % (facts.UNITS.get(engine, engine), facts.BINARIES[engine])
                                   for engine in missing)
            self.fail("engines names %s, not installed on this node (no %s); nothing was changed. Install it, or "
                      "leave it out of container_runtime_engines (auto finds the installed ones)"
                      % (", ".join(missing), looked_for))
        return [engine for engine in facts.ENGINES if engine in wanted]

    def serves_docker_alone(self, engine):
        """A containerd whose CRI plugin is disabled (Docker's containerd.io) runs no CRI runtime: auto leaves it."""
        if engine != "containerd" or not facts.containerd_cri_disabled(read_text(self.path(facts.CONFIG_PATHS[engine]))):
            return False
        self.result["left_alone"][facts.UNITS[engine]] = (
            "its CRI plugin is disabled (disabled_plugins in %s): it serves Docker alone, which reads the NVIDIA "
            "runtime from daemon.json" % facts.CONFIG_PATHS[engine])
        return True

    def find_ctk(self):
        return self.params["nvidia_ctk_path"] or self.feature.get_bin_path("nvidia-ctk")

    def install_toolkit(self):
        """The package from the node's configured repositories; True when the rest of the run can go on."""
        for manager, arguments in PACKAGE_MANAGERS:
            binary = self.feature.get_bin_path(manager)
            if binary:
                break
        else:
            self.fail("nvidia-ctk not found and no apt-get, dnf, yum or zypper to install %s with; nothing was "
                      "changed" % facts.PACKAGE)
        self.result.update(changed=True, package_installed=facts.PACKAGE)
        if self.feature.check_mode:
            self.result["skipped_reason"] = ("%s would be installed; what its nvidia-ctk then writes is known only "
                                             "once it is there" % facts.PACKAGE)
            return False
        environ = {"DEBIAN_FRONTEND": "noninteractive"} if manager == "apt-get" else None
        rc, out, err = self.command([binary] + arguments + [facts.PACKAGE], timeout=INSTALL_TIMEOUT, environ=environ)
        if rc != 0:
            self.fail("%s could not install %s from the node's configured repositories: %s"
                      % (manager, facts.PACKAGE, (err or out).strip()))
        return True

    def command(self, argv, timeout=None, environ=None):
        try:
            return run(self.feature, argv, timeout=timeout or self.params["timeout"], environ=environ)
        except CommandTimeout as error:
            return self.fail(str(error))

    def ctk_run(self, arguments):
        rc, out, err = self.command([self.ctk] + arguments)
        if rc != 0:
            self.fail("nvidia-ctk %s failed: %s; nothing was changed" % (" ".join(arguments[:2]), (err or out).strip()))
        return out

    def scratch_copy(self, absolute):
        """A copy of the node's file at the same path below the scratch folder (none where the node has none)."""
        copy = os.path.join(self.scratch, absolute.lstrip("/"))
        os.makedirs(os.path.dirname(copy), exist_ok=True)
        if os.path.isfile(self.path(absolute)):
            shutil.copyfile(self.path(absolute), copy)
        return copy

    def configure(self, engine, config, drop_in=None):
        arguments = ["runtime", "configure", "--runtime=%s" % engine, "--config=%s" % config]
        if drop_in:
            # The copy, never the running daemon's own dump (--config-source=command), is what gets read.
            arguments.extend(["--drop-in-config=%s" % drop_in, "--config-source=file"])
        if self.params["set_default"]:
            arguments.append("--set-as-default")
        self.ctk_run(arguments)

    # --- refusals that need no nvidia-ctk ------------------------------------------

    def refuse_before_install(self, systemctl):
        """Every refusal that needs no nvidia-ctk, so that none comes after the toolkit's package is installed."""
        if "docker" in self.result["engines"]:
            dummy, dummy2, current = self.docker_json()
            runtimes = current.get("runtimes")
            # Without the nvidia runtime, runtimes changes: a reload where docker.service has one, else a restart.
            state = self.docker_state(systemctl)
            if not (isinstance(runtimes, dict) and "nvidia" in runtimes) and state.get("ActiveState") == "active" and (
                    state.get("CanReload") != "yes" and current.get("live-restore") is not True):
                self.refuse_docker_restart()
        if "containerd" in self.result["engines"]:
            self.containerd_config()

    def docker_state(self, systemctl):
        """docker.service's ActiveState and CanReload; {} where it is masked or absent, or the root not booted."""
        mask_path, unit_path = find_unit(facts.UNITS["docker"], self.root)
        if systemctl is None or mask_path or not unit_path:
            return {}
        return systemctl.show([facts.UNITS["docker"]], ["ActiveState", "CanReload"])[0]

    def docker_json(self):
        """daemon.json's host path, text and object; the run stops when it holds no JSON object."""
        absolute = facts.CONFIG_PATHS["docker"]
        host_path = self.path(absolute)
        # Write through a link to the file it names rather than replacing the link.
        host_path = os.path.realpath(host_path) if os.path.islink(host_path) else host_path
        before = read_text(host_path)
        try:
            return host_path, before, docker_daemon_json.load_daemon_json(before)
        except docker_daemon_json.DaemonJsonError as error:
            return self.fail("%s %s; it was left untouched and nothing was changed. Fix it and run again."
                             % (absolute, error))

    def containerd_config(self):
        """config.toml's text; the run stops when containerd would not import the NVIDIA drop-in."""
        config, drop_in = facts.CONFIG_PATHS["containerd"], facts.DROP_IN_PATHS["containerd"]
        text = read_text(self.path(config))
        if text and text.strip() and not facts.imports_drop_in(facts.containerd_imports(text), drop_in, config):
            self.fail('%s does not import %s, so containerd would never load the NVIDIA runtime written there; add '
                      'imports = ["%s"] at its top, before any table, and run again; or, where containerd serves '
                      'Docker alone (Debian\'s docker.io depends on containerd), leave it out: '
                      'container_runtime_engines: [docker]. Nothing was changed.'
                      % (config, drop_in, facts.CONTAINERD_IMPORT))
        return text

    # --- planning --------------------------------------------------------------

    def plan_docker(self):
        absolute = facts.CONFIG_PATHS["docker"]
        host_path, before, current = self.docker_json()
        copy = self.scratch_copy(absolute)
        self.configure("docker", copy)
        wanted = docker_daemon_json.load_daemon_json(read_text(copy))
        updates = dict((key, value) for key, value in wanted.items() if current.get(key) != value)
        if self.params["shm_size"]:
            updates["default-shm-size"] = self.params["shm_size"]
        merged, keys = docker_daemon_json.merge_top_level(before, updates)
        mode = os.stat(host_path).st_mode & 0o7777 if before is not None else 0o644
        self.planned.append(("docker", host_path, merged, mode, BESIDE))
        self.result["runtimes"]["docker"] = {"path": absolute, "keys_changed": keys,
                                             "live_restore": docker_daemon_json.load_daemon_json(merged).get("live-restore") is True}
        if self.params["shm_size"]:
            self.result["shm_size"] = self.params["shm_size"]

    def plan_containerd(self):
        config, drop_in = facts.CONFIG_PATHS["containerd"], facts.DROP_IN_PATHS["containerd"]
        text = self.containerd_config()
        copy, drop_in_copy = self.scratch_copy(config), os.path.join(self.scratch, drop_in.lstrip("/"))
        self.configure("containerd", copy, drop_in_copy)
        self.plan_drop_in("containerd", drop_in, read_text(drop_in_copy))
        files = [drop_in]
        if not (text and text.strip()):
            # Only a missing or empty config.toml gets nvidia-ctk's: the import of its drop-in folder.
            scratch_folder = os.path.dirname(drop_in_copy)
            top_level = read_text(copy).replace(scratch_folder, os.path.dirname(drop_in))
            self.planned.append(("containerd", self.path(config), top_level, 0o644, None))
            files.insert(0, config)
        self.result["runtimes"]["containerd"] = {"path": drop_in, "files": files}

    def plan_crio(self):
        drop_in = facts.DROP_IN_PATHS["crio"]
        copy, drop_in_copy = self.scratch_copy(facts.CONFIG_PATHS["crio"]), os.path.join(self.scratch, drop_in.lstrip("/"))
        self.configure("crio", copy, drop_in_copy)
        self.plan_drop_in("crio", drop_in, read_text(drop_in_copy))
        self.result["runtimes"]["crio"] = {"path": drop_in, "files": [drop_in]}

    def plan_drop_in(self, engine, drop_in, content):
        """The drop-in nvidia-ctk wrote, its old content kept apart; a warning names the tables it loses."""
        before = read_text(self.path(drop_in))
        lost = sorted(facts.toml_tables(before) - facts.toml_tables(content)) if before else []
        if lost:
            self.feature.warn("%s holds %s, which the NVIDIA runtime's drop-in does not: replaced, the old file "
                              "kept in %s" % (drop_in, ", ".join("[%s]" % table for table in lost), BACKUP_DIR))
        self.planned.append((engine, self.path(drop_in), content, 0o644, APART))

    def keep_apart(self, host_path, content):
        """A copy of the file content replaces, in BACKUP_DIR (none in check mode or where nothing changes)."""
        before = read_text(host_path)
        if before is None or before == content or self.feature.check_mode:
            return
        try:
            copy = backup_copy(host_path, folder=self.path(BACKUP_DIR))
        except (IOError, OSError) as error:
            self.fail("%s could not be kept before it is replaced (%s); nothing of it was changed" % (host_path, error))
        self.result["backups"][host_path] = copy

    def refresh_units_shipped(self):
        return all(find_unit(unit, self.root)[1] for unit in facts.CDI_REFRESH_UNITS)

    def plan_cdi(self):
        absolute = facts.CDI_SPEC_WITH_REFRESH if self.refresh_units_shipped() else facts.CDI_SPEC_WITHOUT_REFRESH
        generated_path = os.path.join(self.scratch, "cdi", "nvidia.yaml")
        arguments = ["cdi", "generate", "--output=%s" % generated_path]
        arguments.extend("--device-name-strategy=%s" % strategy for strategy in facts.CDI_NAME_STRATEGIES)
        self.ctk_run(arguments)
        generated = read_text(generated_path)
        installed = read_text(self.path(absolute))
        summary = facts.cdi_summary(generated)
        # The spec in /var/run is the refresh units', made again at every boot; the one in /etc is kept.
        keep = APART if absolute == facts.CDI_SPEC_WITHOUT_REFRESH else None
        self.planned.append(("cdi", self.path(absolute), generated, 0o644, keep))
        self.result["cdi"] = {"path": absolute, "devices": summary["devices"], "driver_version": summary["driver_version"],
                              "changed": installed != generated, "stale": installed is not None and installed != generated,
                              "changes": facts.cdi_changes(installed, generated) if installed is not None else {}}

    # --- services ----------------------------------------------------------------

    def changed_engines(self, owed):
        """The engines whose files change, and those an earlier run changed but did not reload or restart."""
        changed = set(engine for engine, path, content, dummy, dummy2 in self.planned
                      if engine in facts.UNITS and read_text(path) != content)
        return sorted(changed | set(engine for engine in self.result["engines"] if facts.UNITS.get(engine) in owed))

    def service_actions(self, systemctl, owed):
        """{engine: action} for each engine whose files change: what its daemon needs to read them."""
        actions = {}
        for engine in self.changed_engines(owed):
            unit = facts.UNITS[engine]
            mask_path, unit_path = find_unit(unit, self.root)
            if mask_path:
                # Whoever masked it decides when it runs again; it reads the files when it does.
                self.result["left_alone"][unit] = "masked (%s -> /dev/null): it reads the new configuration when it starts" % mask_path
                self.feature.warn("%s is masked: its configuration was written, and it is neither reloaded nor restarted" % unit)
                continue
            if not unit_path or systemctl is None:
                continue
            state = systemctl.show([unit], ["ActiveState", "CanReload"])[0]
            if state.get("ActiveState") != "active":
                continue
            if engine == "docker" and state.get("CanReload") == "yes" and set(
                    self.result["runtimes"]["docker"]["keys_changed"]) <= set(DOCKER_RELOADED_KEYS):
                actions[engine] = "reloaded"
            elif engine == "docker" and not self.result["runtimes"]["docker"]["live_restore"]:
                self.refuse_docker_restart()
                actions[engine] = "restarted"
            else:
                # containerd's shims and CRI-O's conmon keep their containers running through a restart.
                actions[engine] = "restarted"
        return actions

    def refuse_docker_restart(self):
        """Fail, before any change, when a restart of dockerd without live-restore would stop running containers."""
        docker = self.feature.get_bin_path("docker")
        running = None
        if docker:
            rc, out, dummy = self.command([docker, "ps", "--format", "{{.Names}}"])
            running = sorted(line.strip() for line in out.splitlines() if line.strip()) if rc == 0 else None
        self.result["running_containers"] = running
        if running == [] or self.params["force_restart"]:
            return
        what = "stop the running containers %s" % ", ".join(running) if running else "stop any running container (docker ps could not list them)"
        self.fail("docker.service must restart to read %s, and without live-restore that would %s; nothing was "
                  "changed. Stop them first, set live-restore in daemon.json, or set container_runtime_force_restart"
                  % (facts.CONFIG_PATHS["docker"], what))

    def enable_refresh_units(self, systemctl):
        if not self.refresh_units_shipped():
            self.result["refresh_units"] = {"shipped": False, "changed": False}
            return False
        changed = False
        if systemctl is None:
            # A root that is not booted (an image being built): the links systemctl enable makes, so the units
            # write the spec at its first boot; the one written now in /var/run does not outlive that boot.
            for unit in facts.CDI_REFRESH_UNITS:
                changed = self.link_wanted_by(unit) or changed
        else:
            for unit in facts.CDI_REFRESH_UNITS:
                changed = systemctl.enable(unit) or changed
            # As the package's postinst does (enable --now): the path unit watches the driver and the toolkit from now.
            path_unit = facts.CDI_REFRESH_UNITS[0]
            if systemctl.show([path_unit], ["ActiveState"])[0].get("ActiveState") != "active":
                error = systemctl.try_verb("start", path_unit)
                if error:
                    self.fail("systemctl start %s failed: %s" % (path_unit, error))
                changed = True
        self.result["refresh_units"] = {"shipped": True, "changed": changed}
        return changed

    def link_wanted_by(self, unit):
        """What `systemctl enable` does offline: a link in each .wants folder the unit's [Install] WantedBy names."""
        dummy, unit_path = find_unit(unit, self.root)
        targets = (last_setting(read_text(self.path(unit_path)) or "", "Install", "WantedBy") or "").split()
        changed = False
        for target in targets:
            link = "/etc/systemd/system/%s.wants/%s" % (target, unit)
            outcome, dummy = ensure_symlink(self.feature, self.path(link), unit_path)
            changed = outcome["changed"] or changed
        return changed


def converge(spec, host, check_mode):
    """Converge this feature on the node as spec says (check_mode: only say what would change); returns the result."""
    feature = host.feature(NAME, spec, check_mode)
    scratch = tempfile.mkdtemp(prefix="gpuops-container-runtime-")
    try:
        return _converge(feature, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _converge(feature, scratch):
    run_ = ContainerRuntimeRun(feature, scratch)
    result = run_.result
    result["engines"] = run_.engines()
    if not result["engines"]:
        result["skipped_reason"] = "no container engine (docker, containerd, crio, podman) is installed"
        result["diff"] = []
        return result
    systemctl = Systemctl(feature, timeout=feature.params["timeout"]) if is_booted(run_.root) else None
    run_.ctk = run_.find_ctk()
    if not run_.ctk:
        if not feature.params["install"]:
            run_.fail("nvidia-ctk not found: install the package %s (the NVIDIA Container Toolkit), or set "
                      "container_runtime_install to true to install it from the node's configured repositories; "
                      "nothing was changed" % facts.PACKAGE)
        run_.refuse_before_install(systemctl)
        if not run_.install_toolkit():
            result["diff"] = []
            return result
        run_.ctk = run_.find_ctk() or run_.fail("%s is installed but nvidia-ctk is still not found" % facts.PACKAGE)
    result["nvidia_ctk"] = run_.ctk
    for engine in result["engines"]:
        if engine in facts.CONFIGURED:
            getattr(run_, "plan_" + engine)()
    run_.plan_cdi()
    # A run killed between its writes and the reloads or restarts they need leaves them to this one: recorded first.
    pending = UnitRecord(feature, CONTAINER_RUNTIME_ACTIONS_PENDING)
    try:
        owed = set(pending.units())
    except RecordError as error:
        return run_.fail("%s; nothing was changed" % error)
    actions = run_.service_actions(systemctl, owed)
    if actions:
        pending.write(sorted(facts.UNITS[engine] for engine in actions))
    diffs = []
    for owner, path, content, mode, backup in run_.planned:
        if backup == APART:
            run_.keep_apart(path, content)
        outcome, diff = ensure_content(feature, path, content, mode=mode, backup=backup == BESIDE)
        result["changed"] = result["changed"] or outcome["changed"]
        if owner in result["runtimes"]:
            # What the audit judges each engine's registration by, in check mode.
            result["runtimes"][owner]["changed"] = result["runtimes"][owner].get("changed", False) or outcome["changed"]
        diffs.extend([diff] if diff else [])
    result["changed"] = run_.enable_refresh_units(systemctl) or result["changed"]
    for engine, action in sorted(actions.items()):
        unit = facts.UNITS[engine]
        verb = "reload" if action == "reloaded" else "restart"
        error = systemctl.try_verb(verb, unit)
        if error:
            run_.fail("systemctl %s %s failed: %s" % (verb, unit, error))
        result["services"][unit] = action
    pending.remove()
    result["changed"] = result["changed"] or bool(actions)
    result["diff"] = diffs
    return result
