# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's verdicts on the container_runtime role, in the containers area: what its feature would still change
in check mode (module_utils/engines/container_runtime.py) is what the node lacks.

- each configured engine (Docker, containerd, CRI-O): the NVIDIA runtime registered as the node's nvidia-ctk writes
  it, and read by the running daemon (no reload or restart owed);
- Docker's default-shm-size as the profile (or container_runtime_shm_size) sets it;
- the CDI spec against the node: devices or host paths (device nodes, driver libraries) it names that the node no
  longer has FAIL (a container asking for them does not start), what it lacks WARNs (the new devices cannot be asked
  for), a missing spec FAILs; the toolkit's refresh units enabled where it ships them.
A node that does not opt in (container_runtime_enabled false) gets one SKIP saying so.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.hardening.plugins.plugin_utils.audit_checks import (
    FAIL, PASS, SKIP, WARN, check, failure, not_collected, ran, text,
)

AREA = "containers"
CONFIG_ID = "containers.nvidia_runtime"
ENGINE_NAMES = {"docker": "Docker", "containerd": "containerd", "crio": "CRI-O"}
ENGINE_UNITS = {"docker": "docker.service", "containerd": "containerd.service", "crio": "crio.service"}
RUNTIME_KEYS = ("runtimes", "default-runtime")
CONVERGE = "run site.yml (the container_runtime role) to write it"


def _check(check_id, title, verdict, expected, actual, reason):
    return check("containers." + check_id, AREA, title, verdict, expected, actual, reason)


def container_runtime_checks(state, inputs, role_error=None):
    """The role's checks from its feature's result in check mode (None when it did not run); inputs: the role's
    resolved inputs."""
    if not inputs.get("container_runtime_enabled"):
        return [check(CONFIG_ID, AREA, "NVIDIA container runtime", SKIP, "configured where the node opts in",
                      "not managed", "container_runtime_enabled is false: the node's container engines are left as "
                      "they are")]
    if not ran(state):
        return [not_collected(CONFIG_ID, AREA, "NVIDIA container runtime", failure(state, role_error))]
    if state.get("package_installed"):
        return [check(CONFIG_ID, AREA, "NVIDIA container runtime", FAIL, "nvidia-ctk installed", "not installed",
                      "the role would install %s first: %s" % (state["package_installed"], state.get("skipped_reason")))]
    if state.get("skipped_reason"):
        return [check(CONFIG_ID, AREA, "NVIDIA container runtime", SKIP, "configured", "no engine",
                      state["skipped_reason"])]
    found = []
    for engine in sorted(state.get("runtimes") or {}):
        found.append(_registration(engine, state))
    if "docker" in (state.get("runtimes") or {}):
        found.append(_shm_size(state, inputs))
    found.append(_cdi_spec(state.get("cdi") or {}))
    found.append(_refresh_units(state.get("refresh_units") or {}))
    return found


def _owed(engine, state):
    """Why the running daemon does not have its files yet: masked, or a reload or restart the role would make."""
    unit = ENGINE_UNITS[engine]
    if unit in (state.get("left_alone") or {}):
        return "%s is %s" % (unit, state["left_alone"][unit])
    action = (state.get("services") or {}).get(unit)
    return "%s would be %s to read it" % (unit, action) if action else None


def _registration(engine, state):
    entry = state["runtimes"][engine]
    name = ENGINE_NAMES.get(engine, engine)
    title, expected = "%s NVIDIA runtime" % name, "as nvidia-ctk runtime configure writes it"
    check_id = "%s.nvidia_runtime" % engine
    if engine == "docker":
        differs = [key for key in entry.get("keys_changed") or [] if key in RUNTIME_KEYS]
    else:
        differs = [entry.get("path")] if entry.get("changed") else []
    if differs:
        what = "the keys %s of %s" % (text(differs), entry.get("path")) if engine == "docker" else text(entry.get("files"))
        return _check(check_id, title, FAIL, expected, "%s missing or different" % what, "%s does not know the NVIDIA "
                      "runtime as the toolkit registers it: %s would change; %s" % (name, what, CONVERGE))
    owed = _owed(engine, state)
    if owed:
        verdict = WARN if "masked" in owed else FAIL
        return _check(check_id, title, verdict, expected, "written, not read by the daemon",
                      "%s holds the NVIDIA runtime, but %s" % (entry.get("path"), owed))
    return _check(check_id, title, PASS, expected, "registered in %s" % entry.get("path"),
                  "%s reads the NVIDIA runtime from %s" % (name, entry.get("path")))


def _shm_size(state, inputs):
    wanted = inputs.get("container_runtime_shm_size")
    title, check_id = "Docker default /dev/shm", "docker.default_shm_size"
    entry = state["runtimes"]["docker"]
    if not wanted:
        return _check(check_id, title, SKIP, "left as it is", "not managed",
                      "container_runtime_shm_size is empty: Docker's default-shm-size is left as it is")
    expected = "default-shm-size %s" % wanted
    if "default-shm-size" in (entry.get("keys_changed") or []):
        return _check(check_id, title, FAIL, expected, "missing or different in %s" % entry.get("path"),
                      "new containers get a smaller /dev/shm than the profile's %s, too small for a DataLoader's "
                      "workers; %s" % (wanted, CONVERGE))
    owed = _owed("docker", state)
    if owed:
        return _check(check_id, title, WARN if "masked" in owed else FAIL, expected, "written, not read by dockerd",
                      "%s holds default-shm-size %s, but %s" % (entry.get("path"), wanted, owed))
    return _check(check_id, title, PASS, expected, expected, "new containers get a /dev/shm of %s" % wanted)


def _cdi_spec(cdi):
    title, expected = "CDI spec", "describes the node's GPUs, MIG devices and driver"
    path = cdi.get("path") or "the CDI spec"
    if not cdi:
        return _check("cdi_spec", title, SKIP, expected, "unknown", "the role generated no spec")
    if cdi.get("changed") and not cdi.get("stale"):
        return _check("cdi_spec", title, FAIL, expected, "%s missing" % path, "there is no %s: Podman and Docker's "
                      "CDI find no nvidia.com/gpu device; %s" % (path, CONVERGE))
    changes = cdi.get("changes") or {}
    gone = _described(changes, ("devices_removed", "paths_removed"), "names what the node no longer has")
    new = _described(changes, ("devices_added", "paths_added"), "lacks")
    driver = changes.get("driver_version")
    if driver:
        gone.insert(0, "it was made for driver %s, the node runs %s" % (driver.get("before"), driver.get("after")))
    if gone:
        return _check("cdi_spec", title, FAIL, expected, "stale", "%s is stale: %s; a container asking for these "
                      "does not start. %s, or restart nvidia-cdi-refresh.service where the toolkit ships it"
                      % (path, "; ".join(gone + new), CONVERGE))
    if new:
        return _check("cdi_spec", title, WARN, expected, "incomplete", "%s is stale: %s, which containers cannot ask "
                      "for; %s" % (path, "; ".join(new), CONVERGE))
    devices = cdi.get("devices") or []
    return _check("cdi_spec", title, PASS, expected, "%d device name(s), driver %s" % (len(devices), cdi.get(
        "driver_version")), "%s matches the node%s" % (path, " (it differs only in layout)" if cdi.get("changed") else ""))


def _described(changes, keys, verb):
    words = {"devices_removed": "devices", "devices_added": "devices", "paths_removed": "host paths",
             "paths_added": "host paths"}
    return ["it %s: %s %s" % (verb, words[key], text(changes[key])) for key in keys if changes.get(key)]


def _refresh_units(units):
    title, expected = "CDI refresh units", "enabled where the toolkit ships them"
    if not units.get("shipped"):
        return _check("cdi_refresh", title, SKIP, expected, "not shipped", "the installed toolkit ships no "
                      "nvidia-cdi-refresh units (v1.18.0 and later do): only a converge makes the spec again after a "
                      "driver or MIG change")
    if units.get("changed"):
        return _check("cdi_refresh", title, FAIL, expected, "not enabled or not started", "nvidia-cdi-refresh.path "
                      "does not watch the driver: the spec goes stale at the next driver upgrade; %s" % CONVERGE)
    return _check("cdi_refresh", title, PASS, expected, "enabled", "the toolkit makes the spec again when the "
                  "driver changes and at boot")
