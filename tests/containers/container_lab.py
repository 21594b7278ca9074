# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A lab node with REAL container engines (Debian 12's docker.io 20.10, containerd 1.6,
podman 4.3, runc, crun) and emulated GPUs, for the container data path's proofs.

The image is gpuops-lab/debian12:containers (scripts/lab/build-containers-image.sh). The
node runs systemd with no network, as every lab node, and with what nested engines need:
every capability this machine grants (all but CAP_SYS_RESOURCE, which is why
--privileged fails here), no seccomp or AppArmor filter, access to every device node,
and the engines' data roots on Docker volumes of their own (overlayfs cannot sit on the
node's overlay root). Its /etc/docker/daemon.json, written at image build, is the user's
own: no bridge, no iptables, no IP forwarding (the node's /proc/sys is read-only), keys a
role must keep.

Test containers come from TEST_IMAGE, imported from a tarball made on the node (no
registry): busybox-static, the node's Python 3 and the emulator, so the emulated
nvidia-smi a CDI spec mounts from the node runs inside. The emulator's state file is the
driver's state, which the kernel shares with every container; run_test_container binds it
read-only where the kernel would simply answer.
"""

from __future__ import annotations

import os
import subprocess
import sys

import yaml

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EMULATOR_DIR = os.path.join(REPO_ROOT, "tests", "gpu_emulator")
sys.path.insert(0, os.path.join(REPO_ROOT, "scripts"))

import lab_node  # noqa: E402  pylint: disable=wrong-import-position
import lab_nodes  # noqa: E402  pylint: disable=wrong-import-position
import node_limits  # noqa: E402  pylint: disable=wrong-import-position

IMAGE = "gpuops-lab/debian12:containers"
BUILD_SCRIPT = os.path.join(REPO_ROOT, "scripts", "lab", "build-containers-image.sh")
NODE = os.environ.get("GPUOPS_CONTAINERS_NODE", "ctlab-node")
# a100_8x_mig: eight MIG-capable GPUs, so one node holds whole GPUs and MIG devices.
PROFILE = "a100_8x_mig"
# Each engine's data root, on a volume of its own.
DATA_ROOTS = ("/var/lib/docker", "/var/lib/containerd", "/var/lib/containers")
ENGINES = ("docker", "podman", "containerd")
TEST_IMAGE = "localhost/gpuops-lab/gpu-test:1"
EMULATOR_STATE_DIR = "/var/lib/gpuemu"
# The tarball TEST_IMAGE is imported from, made on the node from its own files.
TEST_ROOTFS_SCRIPT = r"""
set -eu
root=$(mktemp -d)
mkdir -p "$root/bin" "$root/usr/bin" "$root/usr/lib" "$root/opt" "$root/tmp" "$root/dev" "$root/proc" "$root/sys"
cp /bin/busybox "$root/usr/bin/busybox"
# Every applet (sh, sleep, dd, ...) in /bin as a link to the running busybox's own path,
# /usr/bin/busybox (Debian 12's /bin is a link to /usr/bin), where the image has it too.
/bin/busybox --install -s "$root/bin"
cp /usr/bin/python3.11 "$root/usr/bin/python3.11"
ln -s python3.11 "$root/usr/bin/python3"
for lib in $(ldd /usr/bin/python3.11 | grep -o '/[^ ]*'); do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
cp -a /usr/lib/python3.11 "$root/usr/lib/python3.11"
cp -a /opt/gpuemu "$root/opt/gpuemu"
tar -C "$root" -c .
rm -rf "$root"
"""


def docker(*argv, check=True, stdin=None):
    """The lab host's docker CLI; a failure raises with its output."""
    done = subprocess.run(["docker"] + list(argv), input=stdin, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise AssertionError("docker %s failed (%d):\n%s%s" % (" ".join(argv), done.returncode, done.stdout, done.stderr))
    return done


def sh(script, check=True, stdin=None):
    """A shell script run as root on the node; returns the CompletedProcess."""
    return docker("exec", "-i", NODE, "sh", "-c", script, check=check, stdin=stdin)


def volume_name(data_root):
    return "%s%s" % (NODE, data_root.replace("/", "-"))


def platform():
    node = lab_node.lab_platform(name="gpu-train")
    node["image"] = IMAGE
    node["capabilities"] = ["ALL"]
    node["security_opts"] = ["seccomp=unconfined", "apparmor=unconfined"]
    node["volumes"] = ["/sys/fs/cgroup:/sys/fs/cgroup:rw"] + [
        "%s:%s" % (volume_name(path), path) for path in DATA_ROOTS]
    return node


def docker_run_argv():
    argv = lab_node.docker_run_argv(platform(), NODE)
    # What the platform keys cannot say: every device node for the nested engines' containers, and
    # CAP_SYS_RESOURCE: dropped where this machine withholds it (docker would fail to grant it), else
    # kept with memlock unlimited, so the node's engines may start a container with --ulimit memlock=-1.
    extra = ["--device-cgroup-rule", "c *:* rwm", "--device-cgroup-rule", "b *:* rwm"]
    with open("/proc/self/status", encoding="utf-8") as handle:
        granted = node_limits.holds_capability(handle.read(), node_limits.CAP_SYS_RESOURCE)
    extra += ["--ulimit", "memlock=-1:-1"] if granted else ["--cap-drop", "SYS_RESOURCE"]
    return argv[:3] + extra + argv[3:]


def unlimited_memlock_withheld():
    """Why the node's Docker cannot start a container with memlock unlimited, or None when it can: read from
    its containerd, whose runc sets a container's rlimits."""
    status, limits = sh("pid=$(systemctl show --property=MainPID --value containerd) && cat /proc/$pid/status"
                        " && echo ---- && cat /proc/$pid/limits").stdout.split("----\n")
    return node_limits.unlimited_memlock_withheld(status, limits)


def memlock_limits():
    """The node's own soft and hard memlock limits, as `ulimit -l` words: what an engine's child inherits."""
    return sh("ulimit -S -l; ulimit -H -l").stdout.split()


def data_root_rotational(path):
    """queue/rotational of the disk backing PATH on the node ('' when no block device backs it)."""
    return sh("dev=$(stat -L -c %%Hd:%%Ld %s); cat /sys/dev/block/$dev/queue/rotational 2>/dev/null"
              " || cat /sys/dev/block/$dev/../queue/rotational 2>/dev/null || true" % path).stdout


def build_image():
    subprocess.run([BUILD_SCRIPT], capture_output=True, check=True)


def install_emulator(profile):
    """The emulated driver and tools of profile, as prepare.yml installs them on lab nodes."""
    sh("rm -rf /opt/gpuemu && mkdir -p /opt/gpuemu")
    for part in ("gpuemu", "profiles"):
        docker("cp", os.path.join(EMULATOR_DIR, part), "%s:/opt/gpuemu/%s" % (NODE, part))
    sh("rm -rf /opt/gpuemu/gpuemu/__pycache__ && cd /opt/gpuemu && python3 -m gpuemu install --profile %s >/dev/null"
       % profile)


def import_test_image():
    """TEST_IMAGE in Docker and Podman, and in containerd's default namespace (ctr)."""
    sh("(%s) | docker import - %s >/dev/null" % (TEST_ROOTFS_SCRIPT, TEST_IMAGE))
    sh("docker save %s | podman load -q >/dev/null" % TEST_IMAGE)
    sh("docker save %s | ctr -n default images import - >/dev/null" % TEST_IMAGE)


def up(profile=PROFILE):
    """Start the node, its engines running, the emulator of profile installed, TEST_IMAGE in every engine."""
    down()
    docker(*docker_run_argv()[1:])
    lab_node.wait_booted(NODE)
    # A container's procfs takes no new files; a tmpfs on /proc/driver lets the emulator
    # install the driver's /proc/driver/nvidia-caps/mig-minors, which MIG device nodes need.
    sh("mount -t tmpfs -o mode=0555 gpuops-driver /proc/driver")
    install_emulator(profile)
    sh("systemctl is-active docker containerd >/dev/null")
    import_test_image()


def down():
    docker("rm", "--force", "--volumes", NODE, check=False)
    for path in DATA_ROOTS:
        docker("volume", "rm", "--force", volume_name(path), check=False)


def write_inventory(path, profile=PROFILE):
    """An inventory with the node in gpu_nodes, reached through `docker exec`."""
    with open(path, "w", encoding="utf-8") as handle:
        yaml.safe_dump({"all": {"vars": lab_nodes.CONNECTION_VARS, "children": {
            "gpu_nodes": {"hosts": {NODE: {"gpuops_gpu_profile": profile}}}}}}, handle, default_flow_style=False)
    return path


def test_container_argv(engine, *run_options):
    """The argv, run on the node, that starts a test container in engine (docker, podman,
    or containerd through ctr): no network, removed when it exits, the emulated driver's state
    bound read-only. run_options go before the image; end the argv with the command."""
    state = "%s:%s:ro" % (EMULATOR_STATE_DIR, EMULATOR_STATE_DIR)
    if engine in ("docker", "podman"):
        return [engine, "run", "--rm", "--network", "none", "-v", state] + list(run_options) + [TEST_IMAGE]
    if engine == "containerd":
        mount = "type=bind,src=%s,dst=%s,options=rbind:ro" % (EMULATOR_STATE_DIR, EMULATOR_STATE_DIR)
        return ["ctr", "-n", "default", "run", "--rm", "--mount", mount] + list(run_options) + [TEST_IMAGE, "gpuops-test"]
    raise ValueError("unknown engine %r; known: %s" % (engine, ", ".join(ENGINES)))


# The CDI spec's mounts missing on the node (the driver's libraries and firmware, which the
# emulator leaves out) get empty stand-ins, so a runtime can bind them as on a real node.
DRIVER_FILE_STAND_INS = r"""
import json, os, subprocess
spec = subprocess.run(["nvidia-ctk", "cdi", "generate", "--format=json"], capture_output=True, check=True).stdout
for mount in json.loads(spec)["containerEdits"]["mounts"]:
    path = mount["hostPath"]
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "a").close()
"""


def generate_cdi_spec(path="/etc/cdi/nvidia.yaml"):
    """`nvidia-ctk cdi generate` on the node, then stand-ins for the driver files it mounts."""
    sh("nvidia-ctk cdi generate --output=%s" % path)
    sh("python3 -", stdin=DRIVER_FILE_STAND_INS)


def run_in_container(engine, command, *run_options, check=True):
    """Run command (a shell line) in a fresh test container of engine; returns the CompletedProcess."""
    argv = test_container_argv(engine, *run_options) + ["sh", "-c", command]
    return docker("exec", NODE, *argv, check=check)
