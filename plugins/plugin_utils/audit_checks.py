# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's verdicts on the host knobs: sysctl, swap, THP and memlock.

Every function takes what a role's module reported in check mode (its registered
result, ``None`` when the task did not run) and the role's resolved inputs, and
returns audit checks: dicts with the keys of :data:`CHECK_KEYS`, every value a
string. Nothing here reads the node; docs/audit.md documents the verdicts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

CHECK_KEYS = ("id", "area", "title", "verdict", "expected", "actual", "reason")
VERDICTS = ("FAIL", "WARN", "PASS", "SKIP")
PASS, FAIL, WARN, SKIP = "PASS", "FAIL", "WARN", "SKIP"


def check(check_id, area, title, verdict, expected, actual, reason):
    """One audit check; every value is text, so the JSON and the report show exactly the same."""
    if verdict not in VERDICTS:
        raise ValueError("verdict: got %r; allowed: %s" % (verdict, ", ".join(VERDICTS)))
    return dict(zip(CHECK_KEYS, (check_id, area, title, verdict, text(expected), text(actual), text(reason))))


def text(value):
    """A value as people read it: none for null, booleans lower case, lists joined."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ", ".join(text(item) for item in value) or "none"
    return " ".join(str(value).split())


def ran(state):
    """Whether a registered result holds what its module reported (not skipped, not absent)."""
    return isinstance(state, dict) and not state.get("skipped") and not state.get("failed") and "changed" in state


def failure(state, role_error=None):
    """Why the module or its role failed, or None."""
    if isinstance(state, dict) and state.get("failed"):
        return text(state.get("msg") or "the module failed")
    return role_error


def not_collected(check_id, area, title, why):
    """The check for a state the audit could not read: a role failure is a FAIL, anything else a SKIP."""
    if why:
        return check(check_id, area, title, FAIL, "readable", "unknown", why)
    return check(check_id, area, title, SKIP, "readable", "unknown", "not collected: the role's task did not run")


def sysctl_checks(state, inputs, role_error=None):
    """Each managed key twice: its live value and the value the next boot gives it."""
    settings = inputs.get("sysctl_settings") or {}
    if not ran(state):
        why = failure(state, role_error)
        return [not_collected("sysctl.settings", "sysctl", "sysctl settings", why)]
    found = []
    conflicts = {}
    for conflict in state.get("conflicts") or []:
        conflicts.setdefault(conflict.get("key"), conflict)
    managed_file = (state.get("file") or {}).get("path")
    for key in sorted(settings):
        wanted = text(settings[key])
        area = "numa" if key == "kernel.numa_balancing" else "sysctl"
        found.append(_sysctl_live(key, area, wanted, state))
        found.append(_sysctl_boot(key, area, wanted, state, conflicts.get(key), managed_file))
    return found


def _sysctl_live(key, area, wanted, state):
    check_id, title = "sysctl.live.%s" % key, "%s, live" % key
    if key in (state.get("unsupported") or []):
        return check(check_id, area, title, SKIP, wanted, "absent", "this kernel has no %s" % key)
    live = text((state.get("before") or {}).get(key))
    if live == wanted:
        return check(check_id, area, title, PASS, wanted, live, "the running kernel has the tuned value")
    skipped = (state.get("live_skipped") or {}).get(key)
    if skipped:
        return check(check_id, area, title, WARN, wanted, live, "cannot be applied live: %s" % skipped)
    return check(check_id, area, title, FAIL, wanted, live, "the running kernel does not have the tuned value")


def _sysctl_boot(key, area, wanted, state, conflict, managed_file):
    check_id, title = "sysctl.boot.%s" % key, "%s, at boot" % key
    if state.get("masked_by"):
        return check(check_id, area, title, FAIL, wanted, "not applied", state["masked_by"])
    if conflict:
        setting = text(conflict.get("value"))
        if conflict.get("other_key") not in (None, key):
            # The partner of a paired key (vm.dirty_ratio for vm.dirty_bytes) zeroes this one.
            setting = "%s=%s" % (conflict["other_key"], setting)
        actual = "%s from %s line %s" % (setting, conflict.get("file"), conflict.get("line"))
        return check(check_id, area, title, FAIL, wanted, actual, conflict.get("message") or "another file overrides it at boot")
    if (state.get("file") or {}).get("changed"):
        return check(check_id, area, title, FAIL, wanted, "not persisted",
                     "%s is missing or does not hold the tuned value" % managed_file)
    return check(check_id, area, title, PASS, wanted, "%s from %s" % (wanted, managed_file),
                 "the next boot applies the tuned value and nothing overrides it")


def swap_checks(state, inputs, role_error=None):
    """Swap live, in fstab, as units and as zram devices."""
    if not inputs.get("sysctl_disable_swap", True):
        return [check("swap.live", "swap", "swap", SKIP, "left as it is", "not checked",
                      "sysctl_disable_swap is false: the collection leaves swap alone")]
    refused = failure(state, role_error)
    if not isinstance(state, dict) or "swaps" not in state:
        return [not_collected("swap.live", "swap", "swap, live", refused)]
    found = [_swap_live(state, refused)]
    found.extend(_swap_boot(state, refused))
    return found


def _swap_live(state, refused):
    areas = state.get("swaps") or []
    actual = text(["%s (%s KiB used)" % (area.get("path"), area.get("used_kib")) for area in areas]) if areas else "off"
    blocker = state.get("live_skipped_reason")
    if blocker:
        return check("swap.live", "swap", "swap, live", WARN, "off", actual, "not this node's to change: %s" % blocker)
    if areas:
        reason = "swap is on" + ("; %s" % refused if refused else "; the sysctl role turns it off")
        return check("swap.live", "swap", "swap, live", FAIL, "off", actual, reason)
    return check("swap.live", "swap", "swap, live", PASS, "off", actual, "no swap area is active")


def _swap_boot(state, refused):
    stopped = "not read: the swap module stopped first (%s)" % refused if refused else None
    fstab = state.get("fstab")
    masks_changed = state.get("masks_changed")
    zram = state.get("zram")
    found = []
    if fstab is None and stopped:
        found.append(check("swap.fstab", "swap", "swap in fstab", SKIP, "no active swap entry", "unknown", stopped))
    elif fstab and fstab.get("changed"):
        found.append(check("swap.fstab", "swap", "swap in fstab", FAIL, "no active swap entry",
                           text(fstab.get("commented")), "%s still turns swap on at boot" % fstab.get("path")))
    else:
        found.append(check("swap.fstab", "swap", "swap in fstab", PASS, "no active swap entry", "none",
                           "fstab turns no swap on at boot"))
    if masks_changed is None and stopped:
        found.append(check("swap.units", "swap", "swap units", SKIP, "masked", "unknown", stopped))
    elif masks_changed:
        found.append(check("swap.units", "swap", "swap units", FAIL, "masked",
                           "not masked: " + text([item.get("unit") for item in masks_changed]),
                           "systemd could activate swap from these units at boot"))
    else:
        found.append(check("swap.units", "swap", "swap units", PASS, "masked", text(state.get("masked_units")),
                           "every swap unit is masked"))
    if zram is None and stopped:
        found.append(check("swap.zram", "swap", "zram swap", SKIP, "disabled", "unknown", stopped))
    elif zram and zram.get("changed"):
        found.append(check("swap.zram", "swap", "zram swap", FAIL, "disabled", text(zram.get("devices")),
                           "zram-generator creates swap at boot"))
    else:
        devices = (zram or {}).get("devices") or []
        found.append(check("swap.zram", "swap", "zram swap", PASS, "disabled",
                           ("disabled: " + text(devices)) if devices else "no zram swap", "no zram swap at boot"))
    return found


def thp_checks(state, inputs, role_error=None):
    """THP's three live values and what the next boot gives them."""
    if not ran(state):
        return [not_collected("thp.live.enabled", "thp", "THP enabled, live", failure(state, role_error))]
    wanted = {"enabled": inputs.get("thp_enabled"), "defrag": inputs.get("thp_defrag"),
              "khugepaged_defrag": inputs.get("thp_khugepaged_defrag")}
    before = state.get("before") or {}
    found = []
    for name in ("enabled", "defrag", "khugepaged_defrag"):
        check_id, title = "thp.live.%s" % name, "THP %s, live" % name.replace("_", " ")
        expected, live = text(wanted[name]), text(before.get(name))
        if live == expected:
            found.append(check(check_id, "thp", title, PASS, expected, live, "the running kernel has the tuned value"))
        elif state.get("live_skipped_reason"):
            found.append(check(check_id, "thp", title, WARN, expected, live,
                               "cannot be applied live: %s" % state["live_skipped_reason"]))
        else:
            found.append(check(check_id, "thp", title, FAIL, expected, live, "the running kernel does not have the tuned value"))
    found.append(_thp_boot(state, inputs))
    return found


def _thp_boot(state, inputs):
    expected = "enabled=%s at every boot" % inputs.get("thp_enabled")
    unit = state.get("unit") or {}
    if state.get("cmdline_conflict"):
        return check("thp.boot", "thp", "THP at boot", FAIL, expected,
                     "transparent_hugepage=%s on the kernel command line" % state.get("cmdline_value"),
                     state.get("cmdline_message") or "the kernel command line contradicts the tuned value")
    if not inputs.get("thp_persist", True):
        return check("thp.boot", "thp", "THP at boot", WARN, expected, "not persisted",
                     "thp_persist is false: the live values do not survive a reboot")
    if unit.get("changed") or not unit.get("enabled"):
        return check("thp.boot", "thp", "THP at boot", FAIL, expected, "unit %s missing or different" % unit.get("path"),
                     "nothing sets the tuned values at the next boot")
    return check("thp.boot", "thp", "THP at boot", PASS, expected, "%s enabled" % unit.get("path"),
                 "the boot unit sets the tuned values")


def memlock_checks(state, inputs, role_error=None):
    """memlock for login sessions (pam_limits priority), services, each listed unit and containers."""
    if not ran(state):
        return [not_collected("memlock.login", "memlock", "memlock, login sessions", failure(state, role_error))]
    limit = text(state.get("limit", inputs.get("memlock_limit")))
    effective = state.get("effective") or {}
    found = [_memlock_login(state, inputs, limit, effective.get("login_sessions") or {}),
             _memlock_services(state, inputs, limit, effective.get("services_default"))]
    found.extend(_memlock_units(state, limit, effective.get("units") or {}, inputs.get("memlock_restart_services", False)))
    found.append(_memlock_containers(state, inputs, limit, effective.get("docker_default_ulimit")))
    changed = [item.get("path") for item in state.get("files") or [] if item.get("changed")]
    if changed:
        found.append(check("memlock.files", "memlock", "memlock files", FAIL, "in place", "differ: " + text(changed),
                           "the managed files are missing or differ from the tuned content"))
    else:
        found.append(check("memlock.files", "memlock", "memlock files", PASS, "in place", "in place",
                           "every managed file holds the tuned content"))
    return found


def _pair(entry):
    return "soft %s, hard %s" % (text(entry.get("soft")), text(entry.get("hard")))


def _memlock_login(state, inputs, limit, sessions):
    expected = "soft %s, hard %s" % (limit, limit)
    if not inputs.get("memlock_login_sessions", True):
        return check("memlock.login", "memlock", "memlock, login sessions", SKIP, expected, "not managed",
                     "memlock_login_sessions is false")
    domain = inputs.get("memlock_limits_domain", "*")
    entry = sessions.get(domain) or {}
    problems = []
    if text(entry.get("soft")) != limit or text(entry.get("hard")) != limit:
        problems.append("%s gets %s from %s" % (domain, _pair(entry), entry.get("hard_source") or "the defaults"))
    for name in sorted(sessions):
        other = sessions[name]
        if other.get("takes_precedence_over") and (text(other.get("soft")) != limit or text(other.get("hard")) != limit):
            problems.append("%s gets %s from %s, which pam_limits applies before %s" % (
                name, _pair(other), other.get("hard_source"), other["takes_precedence_over"]))
    without = sorted(name for name, runs in (state.get("pam_limits") or {}).items() if runs is False)
    if without:
        problems.append("the session stack of %s does not run pam_limits" % text(without))
    problems.extend(state.get("conflicts") or [])
    if problems:
        return check("memlock.login", "memlock", "memlock, login sessions", FAIL, expected, _pair(entry), "; ".join(problems))
    return check("memlock.login", "memlock", "memlock, login sessions", PASS, expected, _pair(entry),
                 "pam_limits gives every login session the tuned limit")


def _capped(state):
    ceiling = state.get("ceiling") or {}
    if ceiling.get("capped"):
        return "PID 1's hard limit is %s KiB and it may not raise it (container)" % ceiling.get("hard")
    return None


def _memlock_services(state, inputs, limit, services):
    expected = "soft %s, hard %s" % (limit, limit)
    title = "memlock, systemd services"
    if not inputs.get("memlock_services_default", True):
        return check("memlock.services", "memlock", title, SKIP, expected, "not managed", "memlock_services_default is false")
    if services is None:
        return check("memlock.services", "memlock", title, SKIP, expected, "no systemd", "systemd is not running")
    actual = _pair(services)
    if (state.get("pending") or {}).get("daemon_reexec"):
        return check("memlock.services", "memlock", title, FAIL, expected, actual,
                     "systemd has not re-executed since DefaultLimitMEMLOCK changed")
    if text(services.get("soft")) == limit and text(services.get("hard")) == limit:
        return check("memlock.services", "memlock", title, PASS, expected, actual, "systemd gives services the tuned limit")
    capped = _capped(state)
    if capped:
        return check("memlock.services", "memlock", title, WARN, expected, actual, "cannot take effect here: " + capped)
    return check("memlock.services", "memlock", title, FAIL, expected, actual, "systemd's DefaultLimitMEMLOCK differs")


def _memlock_units(state, limit, units, restart_wanted):
    expected = "soft %s, hard %s" % (limit, limit)
    restart = (state.get("pending") or {}).get("restart") or []
    found = []
    for unit in sorted(units):
        entry = units[unit] or {}
        check_id, title, actual = "memlock.unit.%s" % unit, "memlock, %s" % unit, _pair(entry)
        if unit in restart:
            # The unit is configured; its running process keeps the limit it started with.
            verdict = FAIL if restart_wanted else WARN
            found.append(check(check_id, "memlock", title, verdict, expected, "configured %s; running since before" % actual,
                               "%s keeps the limit it started with until it restarts%s" % (
                                   unit, "" if restart_wanted else " (memlock_restart_services is false)")))
        elif text(entry.get("soft")) == limit and text(entry.get("hard")) == limit:
            found.append(check(check_id, "memlock", title, PASS, expected, actual, "the unit gets the tuned limit"))
        elif _capped(state):
            found.append(check(check_id, "memlock", title, WARN, expected, actual, "cannot take effect here: " + _capped(state)))
        else:
            found.append(check(check_id, "memlock", title, FAIL, expected, actual, "the unit's LimitMEMLOCK differs"))
    for unit, why in sorted((state.get("left_alone") or {}).items()):
        if unit.endswith(".service") and unit not in units:
            found.append(check("memlock.unit.%s" % unit, "memlock", "memlock, %s" % unit, SKIP, expected, "not checked", why))
    return found


def _docker_limit(ulimit):
    """Docker's default-ulimits entry in the module's terms: unlimited or KiB."""
    def one(value):
        return "unlimited" if value in (-1, None) else text(int(value) // 1024)
    return one(ulimit.get("Soft")), one(ulimit.get("Hard"))


def _memlock_containers(state, inputs, limit, ulimit):
    expected = "soft %s, hard %s" % (limit, limit)
    title = "memlock, containers"
    why = (state.get("left_alone") or {}).get("daemon.json")
    if inputs.get("memlock_docker_daemon_json") is False or why:
        return check("memlock.containers", "memlock", title, SKIP, expected, "not managed",
                     why or "memlock_docker_daemon_json is false")
    if not ulimit:
        return check("memlock.containers", "memlock", title, FAIL, expected, "no default-ulimits memlock entry",
                     "containers get Docker's default memlock limit")
    soft, hard = _docker_limit(ulimit)
    actual = "soft %s, hard %s" % (soft, hard)
    if soft == limit and hard == limit:
        return check("memlock.containers", "memlock", title, PASS, expected, actual,
                     "Docker's default-ulimits give containers the tuned limit")
    return check("memlock.containers", "memlock", title, FAIL, expected, actual, "Docker's default-ulimits differ")
