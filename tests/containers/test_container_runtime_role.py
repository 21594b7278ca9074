# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_runtime role on the container lab's node, read by Debian 12's real engines: dockerd 20.10 lists
the nvidia runtime after the role's reload and gives a new container the profile's /dev/shm; containerd 1.6's
config dump shows the runtime after the role's restart, and a running container outlives it; Podman 4.3 starts a
container with a GPU the role's CDI spec names. A second run changes nothing, check mode neither; a masked
docker.service is left alone; a Docker restart that would stop a running container is refused and leaves it
running."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

import container_lab

PLAY = "tests/containers/plays/container_runtime.yml"
RECAP = re.compile(r"^\S+\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)
# The profile's default-shm-size (roles/container_runtime/vars/main.yml, training) in KiB, as df reports it.
TRAINING_SHM_KIB = 16 * 1024 * 1024


def run_role(inventory, check=False, **extra):
    """(changed, failed, output) of the role's play on the node."""
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_CONFIG=os.path.join(container_lab.REPO_ROOT, "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(container_lab.REPO_ROOT, "playbooks", "collections"))
    argv = ["ansible-playbook", PLAY, "-i", inventory] + (["--check"] if check else [])
    if extra:
        argv += ["-e", json.dumps(extra)]
    done = subprocess.run(argv, cwd=container_lab.REPO_ROOT, env=env, capture_output=True, text=True, timeout=600,
                          check=False)
    output = done.stdout + done.stderr
    found = RECAP.search(output)
    assert found, output[-6000:]
    return int(found.group(2)), int(found.group(4)), output


@pytest.fixture(scope="module")
def stock_refusal(inventory, restore_module_configs):  # pylint: disable=unused-argument
    """The role's first run on the node as Debian ships it: its config.toml imports no drop-in."""
    before = container_lab.sh("cat /etc/docker/daemon.json").stdout
    changed, failed, output = run_role(inventory)
    return before, changed, failed, output


@pytest.fixture(scope="module")
def converged(inventory, stock_refusal):  # pylint: disable=unused-argument
    # What the refusal asks the administrator to do.
    container_lab.sh("sed -i '1i imports = [\"/etc/containerd/conf.d/*.toml\"]' /etc/containerd/config.toml")
    changed, failed, output = run_role(inventory)
    assert failed == 0 and changed > 0, output[-6000:]
    # The spec mounts the driver's files, which the emulator leaves out: stand-ins, as for every CDI proof here.
    container_lab.sh("python3 -", stdin=container_lab.DRIVER_FILE_STAND_INS)
    return inventory


@pytest.fixture(scope="module")
def restore_module_configs(node):  # pylint: disable=unused-argument
    saved = "/root/role-engine-configs.tar"
    paths = "/etc/docker/daemon.json /etc/containerd /etc/cdi /var/run/cdi"
    container_lab.sh("tar -cPf %s $(ls -d %s 2>/dev/null)" % (saved, paths))
    yield
    container_lab.sh("rm -rf /etc/containerd/conf.d /etc/cdi /var/run/cdi/nvidia.yaml && tar -xPf %s && rm -f %s "
                     "&& systemctl reload docker && systemctl restart containerd" % (saved, saved))


def test_debian_s_containerd_config_is_refused_before_any_change(stock_refusal):
    before, changed, failed, output = stock_refusal
    assert (changed, failed) == (0, 1), output[-6000:]
    assert "/etc/containerd/config.toml does not import /etc/containerd/conf.d/99-nvidia.toml" in output
    assert container_lab.sh("cat /etc/docker/daemon.json").stdout == before
    assert container_lab.sh("ls /etc/containerd/conf.d 2>/dev/null", check=False).stdout == ""


def test_dockerd_lists_the_nvidia_runtime_and_gives_containers_the_profile_s_shm(converged):  # pylint: disable=unused-argument
    runtimes = json.loads(container_lab.sh("docker info --format '{{json .Runtimes}}'").stdout)
    assert runtimes["nvidia"]["path"] == "nvidia-container-runtime"
    daemon_json = json.loads(container_lab.sh("cat /etc/docker/daemon.json").stdout)
    assert daemon_json["default-shm-size"] == "16g"
    # The lab's own keys are kept (no bridge network, no iptables).
    assert "bridge" not in container_lab.sh("docker network ls --format '{{.Name}}'").stdout.split()
    shm = container_lab.run_in_container("docker", "busybox df -k /dev/shm | tail -n 1").stdout.split()
    assert int(shm[1]) == TRAINING_SHM_KIB, shm


def test_containerd_config_dump_shows_the_runtime(converged):  # pylint: disable=unused-argument
    dump = container_lab.sh("containerd config dump").stdout
    assert '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]' in dump


def test_podman_starts_a_container_with_a_gpu_the_spec_names(converged):  # pylint: disable=unused-argument
    spec = container_lab.sh("ls /var/run/cdi/nvidia.yaml /etc/cdi/nvidia.yaml 2>/dev/null", check=False).stdout.split()
    assert len(spec) == 1, spec
    inside = container_lab.run_in_container("podman", "nvidia-smi -L", "--device", "nvidia.com/gpu=2").stdout
    gpu = json.loads(container_lab.sh("cat %s/state.json" % container_lab.EMULATOR_STATE_DIR).stdout)["gpus"][2]
    assert inside == "GPU 0: %s (UUID: %s)\n" % (gpu["model"], gpu["uuid"])


def test_a_second_run_and_check_mode_change_nothing(converged):
    for check in (True, False):
        changed, failed, output = run_role(converged, check=check)
        assert (changed, failed) == (0, 0), output[-6000:]


def runtime_checks(inventory, report_dir):
    """The audit's verdicts on the role (its opt-in set, as the role's play sets it), by check id."""
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_PIPELINING="1",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(container_lab.REPO_ROOT, "playbooks", "collections"))
    done = subprocess.run(["ansible-playbook", "-i", inventory, "playbooks/audit.yml", "-e", "audit_report_dir=%s"
                           % report_dir, "-e", "container_runtime_enabled=true"], cwd=container_lab.REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    with open(os.path.join(report_dir, "nodes", "%s.json" % container_lab.NODE), encoding="utf-8") as handle:
        checks = json.load(handle)["checks"]
    ids = ("nvidia_runtime", "default_shm_size", "cdi_spec", "cdi_refresh")
    return dict((item["id"], item) for item in checks if item["id"].split(".")[-1] in ids)


def test_the_audit_passes_the_converged_role_and_fails_a_spec_a_driver_upgrade_left_stale(converged, tmp_path):
    checks = runtime_checks(converged, str(tmp_path / "converged"))
    assert set(checks) >= {"containers.docker.nvidia_runtime", "containers.containerd.nvidia_runtime",
                           "containers.docker.default_shm_size", "containers.cdi_spec"}, checks
    # The lab's toolkit is the emulator's nvidia-ctk alone: no refresh units, which that check says.
    refresh = checks.pop("containers.cdi_refresh")
    assert refresh["verdict"] == "PASS" or "ships no nvidia-cdi-refresh units" in refresh["reason"], refresh
    assert dict((key, item["verdict"]) for key, item in checks.items() if item["verdict"] != "PASS") == {}, checks
    state = "%s/state.json" % container_lab.EMULATOR_STATE_DIR
    before = json.loads(container_lab.sh("cat %s" % state).stdout)["driver_version"]
    upgrade = "import json; p = %r; s = json.load(open(p)); s['driver_version'] = %%r; json.dump(s, open(p, 'w'))" % state
    container_lab.sh("python3 -c \"%s\"" % (upgrade % "580.65.06"))
    try:
        spec = runtime_checks(converged, str(tmp_path / "upgraded"))["containers.cdi_spec"]
    finally:
        container_lab.sh("python3 -c \"%s\"" % (upgrade % before))
    assert spec["verdict"] == "FAIL", spec
    assert "made for driver %s, the node runs 580.65.06" % before in spec["reason"]


def test_a_masked_docker_service_is_left_alone_with_a_warning(converged):
    container_lab.sh("systemctl mask docker.service")
    try:
        changed, failed, output = run_role(converged, container_runtime_shm_size="2g")
        assert failed == 0 and changed > 0, output[-6000:]
        assert "docker.service is masked" in output
        assert json.loads(container_lab.sh("cat /etc/docker/daemon.json").stdout)["default-shm-size"] == "2g"
    finally:
        container_lab.sh("systemctl unmask docker.service")
    # The masked unit was not reloaded; now it is, and the next run puts the profile's size back.
    changed, failed, output = run_role(converged)
    assert failed == 0 and changed > 0, output[-6000:]


def test_a_docker_restart_that_would_stop_a_container_is_refused_and_leaves_it_running(converged):
    # A unit that cannot reload: the change needs a restart, which without live-restore stops every container.
    container_lab.sh("mkdir -p /etc/systemd/system/docker.service.d && printf '[Service]\\nExecReload=\\n' "
                     "> /etc/systemd/system/docker.service.d/no-reload.conf && systemctl daemon-reload")
    argv = container_lab.test_container_argv("docker", "-d", "--name", "trainer") + ["busybox", "sleep", "600"]
    try:
        container_lab.docker("exec", container_lab.NODE, *[arg for arg in argv if arg != "--rm"])
        changed, failed, output = run_role(converged, container_runtime_shm_size="4g")
        assert failed == 1 and changed == 0, output[-6000:]
        assert "would stop the running containers trainer" in output
        assert "container_runtime_force_restart" in output
        assert container_lab.sh("docker inspect -f '{{.State.Running}}' trainer").stdout.strip() == "true"
        assert json.loads(container_lab.sh("cat /etc/docker/daemon.json").stdout)["default-shm-size"] == "16g"
    finally:
        container_lab.sh("docker rm -f trainer; rm -f /etc/systemd/system/docker.service.d/no-reload.conf && "
                         "systemctl daemon-reload")


def containerd_pid():
    return container_lab.sh("systemctl show --property=MainPID --value containerd").stdout.strip()


def test_a_containerd_restart_keeps_its_running_container(converged):
    argv = [arg for arg in container_lab.test_container_argv("containerd", "-d") if arg != "--rm"]
    try:
        container_lab.docker("exec", container_lab.NODE, *(argv + ["busybox", "sleep", "600"]))
        before = container_lab.sh("ctr -n default tasks ls").stdout
        assert "gpuops-test" in before and "RUNNING" in before
        daemon_pid = containerd_pid()
        # containerd alone: Docker's default runtime stays runc, which the other proofs' containers use.
        changed, failed, output = run_role(converged, container_runtime_set_default=True,
                                           container_runtime_engines=["containerd"])
        assert failed == 0 and changed > 0, output[-6000:]
        assert containerd_pid() != daemon_pid, "containerd was not restarted"
        dump = container_lab.sh("containerd config dump").stdout
        assert 'default_runtime_name = "nvidia"' in dump
        after = container_lab.sh("ctr -n default tasks ls").stdout
        assert re.search(r"^gpuops-test\s+\d+\s+RUNNING", after, re.M), after
    finally:
        container_lab.sh("ctr -n default tasks kill -s KILL gpuops-test; sleep 1; ctr -n default containers rm gpuops-test",
                         check=False)
