#!/usr/bin/env bash
# Builds the container lab image ON TOP of the lab node's rootfs: Debian 12's
# real container engines (docker.io 20.10, containerd 1.6, podman 4.3, runc,
# crun) and busybox-static (the test image's userland), installed in a chroot
# from this machine's own Debian mirror (chroot-install.sh), imported as
# gpuops-lab/debian12:containers. Cached by this script, chroot-install.sh and
# the lab rootfs it starts from. tests/containers/container_lab.py runs it.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

IMAGE_REPO="gpuops-lab/debian12"
PACKAGES="docker.io containerd runc podman crun busybox-static iptables"

require_root "Building the container lab image"
base_rootfs="$("$(dirname "$0")/build-image.sh" lab --rootfs-only)"
key="$({ cat "$0" "$(dirname "$0")/chroot-install.sh"; basename "${base_rootfs}"; } | sha256sum | cut -c1-16)"
if docker image inspect "${IMAGE_REPO}:containers-${key}" >/dev/null 2>&1; then
  log "Image ${IMAGE_REPO}:containers-${key} present"
  docker tag "${IMAGE_REPO}:containers-${key}" "${IMAGE_REPO}:containers"
  exit 0
fi

mkdir -p "${CACHE_DIR}"
work="$(mktemp -d "${CACHE_DIR}/containers-build.XXXXXX")"
# shellcheck disable=SC2064
trap "rm -rf '${work}'" EXIT
rootfs="${work}/rootfs"
mkdir "${rootfs}"
tar -C "${rootfs}" -xf "${base_rootfs}"
# shellcheck disable=SC2086
"$(dirname "$0")/chroot-install.sh" "${rootfs}" ${PACKAGES}
# The node's own engine settings, keys a role must keep. dockerd: no bridge, no
# iptables and no IP forwarding, since the node has no network and a read-only
# /proc/sys (dockerd fails at start otherwise). Podman: no default sysctls, since
# crun cannot write net.ipv4.ping_group_range into a read-only /proc/sys.
mkdir -p "${rootfs}/etc/docker" "${rootfs}/etc/containers"
printf '{\n  "bridge": "none",\n  "iptables": false,\n  "ip-forward": false,\n  "ip-masq": false\n}\n' \
  >"${rootfs}/etc/docker/daemon.json"
printf '[containers]\ndefault_sysctls = []\n' >"${rootfs}/etc/containers/containers.conf"
tar -C "${rootfs}" -c . | docker import -c 'CMD ["/lib/systemd/systemd"]' -c 'ENV container=docker' \
  - "${IMAGE_REPO}:containers-${key}" >/dev/null
docker tag "${IMAGE_REPO}:containers-${key}" "${IMAGE_REPO}:containers"
log "Built ${IMAGE_REPO}:containers (${IMAGE_REPO}:containers-${key})"
