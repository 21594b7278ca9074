# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The memlock module against a fake root directory (and a fake systemctl)."""

from __future__ import annotations

import json
import os
import stat
from unittest import mock

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils.engines import memlock as memlock_module
from ansible_collections.gpuops.hardening.plugins.modules.memlock import main as memlock_main
from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.module_runner import run_module

LIMITS_PATH = "/etc/security/limits.d/90-gpuops-memlock.conf"
MANAGER_PATH = "/etc/systemd/system.conf.d/90-gpuops-memlock.conf"
DOCKER_DROPIN = "/etc/systemd/system/docker.service.d/90-gpuops-memlock.conf"
HEADER = "# Managed by gpuops.hardening (module memlock); edits here are overwritten.\n"
LIMITS_CONTENT = (
    HEADER
    + "# Locked-memory limit (KiB) for login sessions: GPU jobs pin host memory for\n"
    "# CUDA transfers, NCCL and RDMA buffers.\n"
    "# pam_limits never applies \"*\" or @group lines to root, hence root's own lines.\n"
    "*            soft  memlock  unlimited\n"
    "*            hard  memlock  unlimited\n"
    "root         soft  memlock  unlimited\n"
    "root         hard  memlock  unlimited\n"
)
MANAGER_CONTENT = (
    HEADER
    + "# Default locked-memory limit for every service systemd starts; read at\n"
    "# daemon-reexec, applied to each service when it (re)starts.\n"
    "[Manager]\nDefaultLimitMEMLOCK=infinity\n"
)
DROPIN_CONTENT = (
    HEADER
    + "# Locked-memory limit for this service and what it starts (containers, jobs);\n"
    "# applied when the service restarts.\n"
    "[Service]\nLimitMEMLOCK=infinity\n"
)
DAEMON_JSON = (
    '{\n  "log-driver": "json-file",\n  "default-ulimits": {\n    "nofile": {"Name": "nofile", "Hard": 65536, "Soft": 65536}\n  },\n'
    '  "data-root": "/srv/docker"\n}\n'
)
HOST_LIMITS = (
    "Limit                     Soft Limit           Hard Limit           Units     \n"
    "Max locked memory         unlimited            unlimited            bytes     \n"
)
HOST_STATUS = "Name:\tsystemd\nCapEff:\t000001ffffffffff\n"


@pytest.fixture
def root(tmp_path):
    """A Debian-like host: docker installed with a daemon.json, no containerd or slurmd, PAM with pam_limits."""
    files = {
        "etc/security/limits.conf": "# /etc/security/limits.conf\n#*               soft    core            0\n",
        "etc/systemd/system.conf": "[Manager]\n#DefaultLimitMEMLOCK=8M\n",
        "lib/systemd/system/docker.service": "[Service]\nExecStart=/usr/bin/dockerd -H fd://\n",
        "etc/docker/daemon.json": DAEMON_JSON,
        "etc/pam.d/login": "session    required   pam_limits.so\n",
        "etc/pam.d/su-l": "session include su\n",
        "etc/pam.d/su": "session    required   pam_limits.so\n",
        "proc/1/limits": HOST_LIMITS,
        "proc/1/status": HOST_STATUS,
        "proc/stat": "cpu 1 2 3\nbtime 1000\n",
    }
    for relative, text in files.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "etc/security/limits.d").mkdir()
    return tmp_path


def _args(root, **extra):
    args = dict(
        limit="unlimited",
        units=["docker.service", "containerd.service", "slurmd.service"],
        root=str(root),
    )
    args.update(extra)
    return args


def _file(root, path):
    return root / path.lstrip("/")


def _snapshot(root):
    found = {}
    for directory, dummy, names in os.walk(str(root / "etc")):
        for name in names:
            path = os.path.join(directory, name)
            with open(path, "rb") as handle:
                found[path] = handle.read()
    return found


def test_first_run_converges_every_part(root):
    result = run_module(memlock_main, _args(root), diff=True)
    assert not result["failed"], result
    assert result["changed"]
    assert _file(root, LIMITS_PATH).read_text() == LIMITS_CONTENT
    assert _file(root, MANAGER_PATH).read_text() == MANAGER_CONTENT
    assert _file(root, DOCKER_DROPIN).read_text() == DROPIN_CONTENT
    merged = json.loads(_file(root, "/etc/docker/daemon.json").read_text())
    assert merged["default-ulimits"] == {
        "nofile": {"Name": "nofile", "Hard": 65536, "Soft": 65536},
        "memlock": {"Name": "memlock", "Hard": -1, "Soft": -1},
    }
    assert list(merged) == ["log-driver", "default-ulimits", "data-root"]
    assert result["left_alone"] == {"containerd.service": "unit not installed", "slurmd.service": "unit not installed"}
    assert len(result["diff"]) == 4
    backups = [entry["backup_file"] for entry in result["files"] if entry["backup_file"]]
    assert len(backups) == 1 and open(backups[0]).read() == DAEMON_JSON
    assert result["effective"]["login_sessions"]["*"]["hard"] == "unlimited"
    assert result["effective"]["login_sessions"]["root"]["soft"] == "unlimited"
    assert result["effective"]["docker_default_ulimit"] == {"Name": "memlock", "Hard": -1, "Soft": -1}
    # No systemd runs under this root: nothing to report or to re-execute.
    assert result["effective"]["services_default"] is None
    assert result["pending"] == {"daemon_reexec": False, "daemon_reload": False, "restart": []}
    assert result["pam_limits"] == {"login": True, "sshd": None, "su-l": True}
    assert result["ceiling"] == {"hard": "unlimited", "can_raise": True, "capped": False}
    assert result["conflicts"] == [] and result["warnings"] == []


def test_second_run_is_a_no_op(root):
    run_module(memlock_main, _args(root))
    before = _snapshot(root)
    result = run_module(memlock_main, _args(root), diff=True)
    assert not result["changed"]
    assert result["diff"] == []
    assert not any(entry["changed"] for entry in result["files"])
    assert _snapshot(root) == before


def test_check_mode_reports_and_writes_nothing(root):
    before = _snapshot(root)
    result = run_module(memlock_main, _args(root), check_mode=True, diff=True)
    assert result["changed"]
    assert _snapshot(root) == before
    headers = sorted(entry["after_header"] for entry in result["diff"])
    assert headers == sorted(str(_file(root, path)) for path in (LIMITS_PATH, MANAGER_PATH, DOCKER_DROPIN, "/etc/docker/daemon.json"))
    # The report describes the state the run would reach.
    assert result["effective"]["login_sessions"]["*"]["soft"] == "unlimited"
    assert result["effective"]["docker_default_ulimit"]["Hard"] == -1


def test_kib_limit_in_every_dialect(root):
    result = run_module(memlock_main, _args(root, limit="65536"))
    assert result["limit"] == 65536
    assert "*            hard  memlock  65536\n" in _file(root, LIMITS_PATH).read_text()
    assert _file(root, MANAGER_PATH).read_text().endswith("\nDefaultLimitMEMLOCK=65536K\n")
    assert _file(root, DOCKER_DROPIN).read_text().endswith("\nLimitMEMLOCK=65536K\n")
    merged = json.loads(_file(root, "/etc/docker/daemon.json").read_text())
    assert merged["default-ulimits"]["memlock"] == {"Name": "memlock", "Hard": 67108864, "Soft": 67108864}


@pytest.mark.parametrize("limit", ["abc", "0", "-5", "64K"])
def test_bad_limit_fails_before_any_change(root, limit):
    before = _snapshot(root)
    result = run_module(memlock_main, _args(root, limit=limit))
    assert result["failed"]
    assert "limit: got" in result["msg"] and "unlimited or a positive integer" in result["msg"]
    assert _snapshot(root) == before


@pytest.mark.parametrize("text", ['{"log-driver": "json-file",}\n', "not json at all", '["a"]', '{"default-ulimits": "memlock=-1"}'])
def test_unmergeable_daemon_json_fails_and_changes_nothing(root, text):
    _file(root, "/etc/docker/daemon.json").write_text(text)
    before = _snapshot(root)
    result = run_module(memlock_main, _args(root))
    assert result["failed"]
    assert "daemon.json" in result["msg"] and "left untouched" in result["msg"]
    assert _snapshot(root) == before
    assert not _file(root, LIMITS_PATH).exists()


def test_empty_daemon_json_gets_the_entry(root):
    _file(root, "/etc/docker/daemon.json").write_text("")
    result = run_module(memlock_main, _args(root))
    assert result["changed"]
    assert json.loads(_file(root, "/etc/docker/daemon.json").read_text()) == {"default-ulimits": {"memlock": {"Name": "memlock", "Hard": -1, "Soft": -1}}}


def test_daemon_json_keeps_its_mode(root):
    path = _file(root, "/etc/docker/daemon.json")
    os.chmod(str(path), 0o600)
    run_module(memlock_main, _args(root))
    assert stat.S_IMODE(os.stat(str(path)).st_mode) == 0o600


def test_daemon_json_link_is_followed(root):
    real = root / "srv" / "daemon.json"
    real.parent.mkdir()
    real.write_text("{}\n")
    link = _file(root, "/etc/docker/daemon.json")
    link.unlink()
    link.symlink_to(real)
    run_module(memlock_main, _args(root))
    assert link.is_symlink()
    assert "memlock" in json.loads(real.read_text())["default-ulimits"]


def test_no_docker_means_no_daemon_json(root):
    _file(root, "/lib/systemd/system/docker.service").unlink()
    _file(root, "/etc/docker/daemon.json").unlink()
    result = run_module(memlock_main, _args(root))
    assert "does not exist" in result["left_alone"]["daemon.json"]
    assert "docker.service" in result["left_alone"]
    assert not _file(root, "/etc/docker/daemon.json").exists()
    assert result["effective"]["docker_default_ulimit"] is None


def test_daemon_json_always_creates_it(root):
    _file(root, "/lib/systemd/system/docker.service").unlink()
    _file(root, "/etc/docker/daemon.json").unlink()
    run_module(memlock_main, _args(root, docker_daemon_json="always"))
    assert json.loads(_file(root, "/etc/docker/daemon.json").read_text())["default-ulimits"]["memlock"]["Soft"] == -1


def test_daemon_json_never_leaves_it(root):
    result = run_module(memlock_main, _args(root, docker_daemon_json="never"))
    assert _file(root, "/etc/docker/daemon.json").read_text() == DAEMON_JSON
    assert result["left_alone"]["daemon.json"] == "docker_daemon_json is never"


def test_only_what_is_asked_is_managed(root):
    result = run_module(memlock_main, dict(limit="unlimited", root=str(root), docker_daemon_json="never",
                                           login_sessions=False, services_default=False))
    assert not result["changed"]
    assert result["files"] == []
    # Nothing managed, but the report still reads what pam_limits would set.
    assert result["effective"]["login_sessions"] == {
        "*": {"soft": None, "hard": None, "soft_source": None, "hard_source": None},
        "root": {"soft": None, "hard": None, "soft_source": None, "hard_source": None},
    }


def test_later_limits_file_is_reported_as_override(root):
    _file(root, "/etc/security/limits.d/99-site.conf").write_text("* hard memlock 64\n")
    result = run_module(memlock_main, _args(root))
    assert result["effective"]["login_sessions"]["*"]["hard"] == 64
    assert any("99-site.conf wins" in conflict for conflict in result["conflicts"])
    assert any("memlock override" in warning for warning in result["warnings"])


def test_group_line_in_limits_conf_beats_our_default_and_is_a_conflict(root):
    """limits.conf(5): an @group line takes precedence over *, in any file order."""
    _file(root, "/etc/security/limits.conf").write_text("@gpu hard memlock 65536\n")
    result = run_module(memlock_main, _args(root))
    login = result["effective"]["login_sessions"]
    assert login["*"]["hard"] == "unlimited"
    # pam_limits lowers the soft limit that "*" gives to the group's hard one.
    assert login["@gpu"] == {"soft": 65536, "hard": 65536, "soft_source": str(_file(root, "/etc/security/limits.conf")),
                             "hard_source": str(_file(root, "/etc/security/limits.conf")), "takes_precedence_over": "*"}
    assert len(result["conflicts"]) == 1
    assert "@gpu hard memlock 65536" in result["conflicts"][0] and "takes precedence over *" in result["conflicts"][0]
    assert any("memlock override: @gpu" in warning for warning in result["warnings"])


def test_user_line_beats_our_group_domain(root):
    _file(root, "/etc/security/limits.conf").write_text("alice soft memlock 1024\n@gpu soft memlock 64\n")
    result = run_module(memlock_main, _args(root, limit="1048576", limits_domain="@gpu", limits_root=False))
    assert not result["failed"], result
    text = _file(root, LIMITS_PATH).read_text()
    assert "@gpu         soft  memlock  1048576\n" in text and "\nroot " not in text
    login = result["effective"]["login_sessions"]
    assert sorted(login) == ["@gpu", "alice"]
    # Our later file wins over the earlier @gpu line; alice's own line wins over both.
    assert login["@gpu"]["soft"] == 1048576 and login["alice"]["soft"] == 1024
    assert [c.split(" memlock")[0] for c in result["conflicts"]] == ["alice soft"]


def test_more_specific_line_above_our_limit_is_reported_not_a_conflict(root):
    _file(root, "/etc/security/limits.conf").write_text("bob - memlock unlimited\n")
    result = run_module(memlock_main, _args(root, limit="65536"))
    assert result["effective"]["login_sessions"]["bob"]["hard"] == "unlimited"
    assert result["conflicts"] == []


def test_more_specific_line_with_our_values_is_not_reported(root):
    _file(root, "/etc/security/limits.conf").write_text("@gpu - memlock unlimited\n")
    result = run_module(memlock_main, _args(root))
    assert sorted(result["effective"]["login_sessions"]) == ["*", "root"]


@pytest.mark.parametrize("domain", ["", "a b", "*\nroot", "@", "%gpu"])
def test_bad_limits_domain_fails_before_any_change(root, domain):
    before = _snapshot(root)
    result = run_module(memlock_main, _args(root, limits_domain=domain))
    assert result["failed"] and "limits_domain" in result["msg"]
    assert _snapshot(root) == before


def test_container_ceiling_is_reported(root):
    (root / "proc/1/limits").write_text(HOST_LIMITS.replace("unlimited            unlimited", "8388608              8388608"))
    (root / "proc/1/status").write_text("CapEff:\t00000000a80425fb\n")
    result = run_module(memlock_main, _args(root))
    assert result["ceiling"] == {"hard": 8192, "can_raise": False, "capped": True}
    assert any("lacks CAP_SYS_RESOURCE" in warning and "8192 KiB" in warning for warning in result["warnings"])
    # The settings are persisted anyway.
    assert _file(root, LIMITS_PATH).exists()


def test_pam_service_without_pam_limits_is_warned(root):
    (root / "etc/pam.d/login").write_text("session required pam_unix.so\n")
    result = run_module(memlock_main, _args(root))
    assert result["pam_limits"]["login"] is False
    assert any("/etc/pam.d/login does not run pam_limits.so" in warning for warning in result["warnings"])


def test_bad_dropin_name_fails(root):
    result = run_module(memlock_main, _args(root, unit_dropin_name="../evil"))
    assert result["failed"] and "unit_dropin_name" in result["msg"]


# --- with a running systemd (a fake systemctl) --------------------------------

class FakeSystemctl:
    """Answers `systemctl show` from class attributes."""

    manager = {}
    units = {}
    calls = []

    def __init__(self, module, timeout=60):
        self.module = module

    def show(self, units, properties):
        FakeSystemctl.calls.append(list(units))
        if not units:
            return [dict(FakeSystemctl.manager)]
        return [dict(FakeSystemctl.units.get(unit, {"Id": unit, "LoadState": "not-found"}), Id=unit) for unit in units]


@pytest.fixture
def booted(root):
    (root / "run/systemd/system").mkdir(parents=True)
    FakeSystemctl.manager = {"DefaultLimitMEMLOCK": "infinity", "DefaultLimitMEMLOCKSoft": "infinity"}
    FakeSystemctl.units = {"docker.service": {
        "LoadState": "loaded", "ActiveState": "inactive", "MainPID": "0", "NeedDaemonReload": "no",
        "LimitMEMLOCK": "infinity", "LimitMEMLOCKSoft": "infinity",
        "DropInPaths": DOCKER_DROPIN, "ExecStart": "{ path=/usr/bin/dockerd ; argv[]=/usr/bin/dockerd -H fd:// }",
    }}
    FakeSystemctl.calls = []
    with mock.patch.object(memlock_module, "Systemctl", FakeSystemctl):
        yield root


def test_changed_files_leave_reexec_and_reload_pending(booted):
    FakeSystemctl.units["docker.service"]["DropInPaths"] = ""
    result = run_module(memlock_main, _args(booted))
    assert result["pending"] == {"daemon_reexec": True, "daemon_reload": True, "restart": []}
    # One call for the manager, one for every unit at once.
    assert FakeSystemctl.calls == [[], ["docker.service"]]
    assert result["effective"]["services_default"] == {"soft": "unlimited", "hard": "unlimited"}
    assert result["effective"]["units"] == {"docker.service": {"soft": "unlimited", "hard": "unlimited", "active": False}}


def test_converged_and_applied_is_a_no_op(booted):
    run_module(memlock_main, _args(booted))
    result = run_module(memlock_main, _args(booted), check_mode=True, diff=True)
    assert not result["changed"]
    assert result["pending"] == {"daemon_reexec": False, "daemon_reload": False, "restart": []}
    assert result["diff"] == []


def test_reexec_that_never_happened_is_redone(booted):
    run_module(memlock_main, _args(booted))
    FakeSystemctl.manager = {"DefaultLimitMEMLOCK": "8388608", "DefaultLimitMEMLOCKSoft": "8388608"}
    result = run_module(memlock_main, _args(booted), diff=True)
    assert result["changed"] and result["pending"]["daemon_reexec"]
    assert result["diff"] == [{
        "before_header": "systemd manager (running)", "after_header": "systemd manager (after daemon-reexec)",
        "before": "DefaultLimitMEMLOCK=8388608\n", "after": "DefaultLimitMEMLOCK=infinity\n",
    }]


def test_later_manager_dropin_wins_and_is_not_fought(booted):
    other = booted / "etc/systemd/system.conf.d/99-site.conf"
    other.parent.mkdir(parents=True)
    other.write_text("[Manager]\nDefaultLimitMEMLOCK=64K\n")
    FakeSystemctl.manager = {"DefaultLimitMEMLOCK": "65536", "DefaultLimitMEMLOCKSoft": "65536"}
    run_module(memlock_main, _args(booted))
    result = run_module(memlock_main, _args(booted))
    assert not result["changed"] and not result["pending"]["daemon_reexec"]
    assert any("99-site.conf wins" in conflict for conflict in result["conflicts"])


def test_unit_needing_reload_is_reloaded(booted):
    run_module(memlock_main, _args(booted))
    FakeSystemctl.units["docker.service"]["NeedDaemonReload"] = "yes"
    result = run_module(memlock_main, _args(booted))
    assert result["changed"] and result["pending"]["daemon_reload"]


def test_unit_overridden_by_later_dropin_is_reported(booted):
    run_module(memlock_main, _args(booted))
    FakeSystemctl.units["docker.service"]["LimitMEMLOCK"] = "65536"
    FakeSystemctl.units["docker.service"]["DropInPaths"] = DOCKER_DROPIN + " /etc/systemd/system/docker.service.d/99-site.conf"
    result = run_module(memlock_main, _args(booted))
    assert not result["changed"]
    assert any(conflict.startswith("docker.service runs with LimitMEMLOCK=65536") for conflict in result["conflicts"])


def _running_docker(root, started_ticks):
    FakeSystemctl.units["docker.service"].update(ActiveState="active", MainPID="4242")
    stat_path = root / "proc/4242/stat"
    stat_path.parent.mkdir(parents=True)
    stat_path.write_text("4242 (dockerd) S 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 %d 1000 10\n" % started_ticks)


def test_running_docker_older_than_its_settings_needs_a_restart(booted):
    run_module(memlock_main, _args(booted))
    _running_docker(booted, started_ticks=100 * os.sysconf("SC_CLK_TCK"))  # started at epoch 1100
    for path in (DOCKER_DROPIN, "/etc/docker/daemon.json"):
        os.utime(str(_file(booted, path)), (1200, 1200))
    result = run_module(memlock_main, _args(booted))
    assert result["pending"]["restart"] == ["docker.service"]
    assert not result["changed"]
    assert any("started before their memlock settings changed: docker.service" in warning for warning in result["warnings"])
    with_restart = run_module(memlock_main, _args(booted, restart_services=True))
    assert with_restart["changed"] and with_restart["pending"]["restart"] == ["docker.service"]


def test_running_docker_newer_than_its_settings_is_fine(booted):
    run_module(memlock_main, _args(booted))
    _running_docker(booted, started_ticks=1000 * os.sysconf("SC_CLK_TCK"))  # started at epoch 2000
    for path in (DOCKER_DROPIN, "/etc/docker/daemon.json"):
        os.utime(str(_file(booted, path)), (1200, 1200))
    result = run_module(memlock_main, _args(booted, restart_services=True))
    assert result["pending"]["restart"] == [] and not result["changed"]


def test_dockerd_flag_conflict_leaves_daemon_json_alone(booted):
    FakeSystemctl.units["docker.service"]["ExecStart"] = "{ path=/usr/bin/dockerd ; argv[]=/usr/bin/dockerd --default-ulimit nofile=1024:2048 }"
    result = run_module(memlock_main, _args(booted))
    assert not result["failed"]
    assert _file(booted, "/etc/docker/daemon.json").read_text() == DAEMON_JSON
    assert "--default-ulimit" in result["left_alone"]["daemon.json"]
    assert any("--default-ulimit" in warning for warning in result["warnings"])


def test_a_masked_unit_gets_no_dropin_and_is_named(root):
    mask = _file(root, "/etc/systemd/system/docker.service")
    mask.parent.mkdir(parents=True, exist_ok=True)
    mask.symlink_to(os.devnull)
    result = run_module(memlock_main, _args(root))
    assert not result["failed"], result
    assert not _file(root, DOCKER_DROPIN).exists()
    assert result["left_alone"]["docker.service"] == "unit masked (/etc/systemd/system/docker.service -> /dev/null)"
    assert os.readlink(str(mask)) == os.devnull
    assert not run_module(memlock_main, _args(root))["changed"]
