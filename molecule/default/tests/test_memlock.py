# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The memlock role's persisted state on every lab node, both profiles.

Inside the lab containers PID 1 lacks CAP_SYS_RESOURCE and inherits the host's
hard memlock limit, so nothing can raise the limit live. Where that is the case
the tests check what can be checked (systemd's configured values, pam_limits
reading the file and asking for the limit) and say so with a warning.
"""

from __future__ import annotations

import json
import re
import time
import warnings

import pytest

LIMITS_FILE = "/etc/security/limits.d/90-gpuops-memlock.conf"
MANAGER_DROPIN = "/etc/systemd/system.conf.d/90-gpuops-memlock.conf"
DROPIN_NAME = "90-gpuops-memlock.conf"
SERVICE_UNITS = ("docker.service", "containerd.service", "slurmd.service")
DAEMON_JSON = "/etc/docker/daemon.json"
CAP_SYS_RESOURCE = 24


def _unit_installed(host, unit):
    return host.run("systemctl show -p LoadState --value %s" % unit).stdout.strip() not in ("not-found", "")


def _limit_may_be_raised(host):
    """(raisable, hard KiB or "unlimited") for PID 1, whose limits every session and service inherits."""
    status = host.file("/proc/1/status").content_string
    cap_eff = int(re.search(r"^CapEff:\s*([0-9a-f]+)", status, re.M).group(1), 16)
    limits = host.file("/proc/1/limits").content_string
    hard = re.search(r"^Max locked memory\s+\S+\s+(\S+)", limits, re.M).group(1)
    hard = hard if hard == "unlimited" else int(hard) // 1024
    return bool(cap_eff >> CAP_SYS_RESOURCE & 1) or hard == "unlimited", hard


def test_limits_file_covers_everyone_and_root(host):
    limits = host.file(LIMITS_FILE)
    assert limits.is_file
    assert limits.user == "root" and limits.mode == 0o644
    entries = set()
    for line in limits.content_string.splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) == 4 and fields[2] == "memlock":
            entries.add((fields[0], fields[1], fields[3]))
    assert entries == {(domain, kind, "unlimited") for domain in ("*", "root") for kind in ("soft", "hard")}
    assert limits.content_string.startswith("#")


def test_no_other_limits_file_overrides_it(host):
    later = host.run("ls /etc/security/limits.d/ | sort | sed -n '/^90-gpuops-memlock.conf$/,$p' | tail -n +2").stdout.split()
    for name in later:
        text = host.file("/etc/security/limits.d/" + name).content_string
        assert not re.search(r"^\s*(\*|root)\s+\S+\s+memlock", text, re.M), name


def test_services_default_is_unlimited(host):
    dropin = host.file(MANAGER_DROPIN)
    assert dropin.is_file and dropin.mode == 0o644
    assert "[Manager]\nDefaultLimitMEMLOCK=infinity\n" in dropin.content_string
    # The manager re-read it: this is the value every service starts with.
    shown = host.check_output("systemctl show -p DefaultLimitMEMLOCK -p DefaultLimitMEMLOCKSoft")
    assert sorted(shown.splitlines()) == ["DefaultLimitMEMLOCK=infinity", "DefaultLimitMEMLOCKSoft=infinity"]


@pytest.mark.parametrize("unit", SERVICE_UNITS)
def test_installed_services_get_a_dropin(host, unit):
    dropin = host.file("/etc/systemd/system/%s.d/%s" % (unit, DROPIN_NAME))
    if not _unit_installed(host, unit):
        assert not dropin.exists, "drop-in written for %s, which is not installed" % unit
        return
    assert dropin.is_file
    assert "[Service]\nLimitMEMLOCK=infinity\n" in dropin.content_string
    shown = host.check_output("systemctl show %s -p LimitMEMLOCK -p LimitMEMLOCKSoft -p NeedDaemonReload" % unit)
    assert sorted(shown.splitlines()) == ["LimitMEMLOCK=infinity", "LimitMEMLOCKSoft=infinity", "NeedDaemonReload=no"]


def test_daemon_json_has_memlock_and_kept_everything_else(host):
    daemon_json = host.file(DAEMON_JSON)
    if not _unit_installed(host, "docker.service") and not daemon_json.exists:
        pytest.skip("Docker is not installed on this node; the role leaves daemon.json alone")
    config = json.loads(daemon_json.content_string)
    assert config["default-ulimits"]["memlock"] == {"Name": "memlock", "Hard": -1, "Soft": -1}
    backups = host.run("ls -1tr %s.*~ 2>/dev/null" % DAEMON_JSON).stdout.split()
    if not backups:
        return
    # The oldest backup is the file as it was before the role: every other key survives, in order.
    original = json.loads(host.file(backups[0]).content_string)
    assert [key for key in config if key in original] == list(original)
    for key, value in original.items():
        if key == "default-ulimits":
            for name, entry in value.items():
                if name != "memlock":
                    assert config[key][name] == entry
        else:
            assert config[key] == value, key


def test_login_session_gets_the_limit(host):
    user = host.run("getent passwd | awk -F: '$3 >= 1000 && $3 < 60000 && $7 ~ /sh$/ {print $1; exit}'").stdout.strip()
    if not user:
        pytest.skip("no login user on this node to open a PAM session with")
    since = int(time.time()) - 1
    session = host.run("su - %s -c 'ulimit -Sl; ulimit -Hl'" % user)
    assert session.rc == 0, session.stderr
    soft, hard = session.stdout.split()
    raisable, ceiling = _limit_may_be_raised(host)
    if raisable:
        assert (soft, hard) == ("unlimited", "unlimited")
        return
    # Not raisable here: the session keeps the container's limit, and pam_limits'
    # own log shows it read the file and asked for unlimited (-1).
    assert (soft, hard) == (str(ceiling), str(ceiling))
    log = host.run("journalctl --since @%d -o cat _COMM=su" % since).stdout
    assert "Could not set limit for 'memlock' to soft=-1, hard=-1" in log, log
    warnings.warn(
        "%s: memlock not verified live for login sessions: PID 1 lacks CAP_SYS_RESOURCE and its hard limit is %s KiB; "
        "pam_limits read %s and asked for unlimited. The VM scenario verifies the live value." % (host.backend.get_hostname(), ceiling, LIMITS_FILE)
    )
