#!/usr/bin/env bash
# Builds the lab's Debian 12 base rootfs with debootstrap (from this machine's own
# Debian mirror) and imports it as the Docker image gpuops-lab/debian12. Nothing is
# pulled from a registry. The rootfs tarball is cached under ${CACHE_DIR}, keyed by
# this script's hash, and is reused by the kernel VM build.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

IMAGE_REPO="gpuops-lab/debian12"
PACKAGES="systemd,systemd-sysv,dbus,python3,python3-apt,procps,kmod,udev,numactl,sudo,util-linux,passwd,login"
key="$(content_hash "$0")"
rootfs_tar="${CACHE_DIR}/rootfs-${key}.tar"

build_rootfs() {
  require_root "Building the lab rootfs"
  require_command debootstrap "Install it with: apt-get install debootstrap (or run: make deps)"
  local work mirror
  work="$(mktemp -d "${CACHE_DIR}/rootfs-build.XXXXXX")"
  # shellcheck disable=SC2064
  trap "rm -rf '${work}'" EXIT
  mirror="$(debian_mirror)"
  log "debootstrap bookworm (minbase) from ${mirror}"
  debootstrap --variant=minbase --include="${PACKAGES}" bookworm "${work}/rootfs" "${mirror}" \
    >"${work}/debootstrap.log" 2>&1 || { tail -n 30 "${work}/debootstrap.log" >&2; die "debootstrap failed"; }
  # Lab nodes never reach a network: drop the mirror from the image's sources.
  : >"${work}/rootfs/etc/apt/sources.list"
  rm -rf "${work}/rootfs/var/lib/apt/lists/"* "${work}/rootfs/var/cache/apt/archives/"*.deb
  # Services that cannot work in a network-less container only add noise.
  ln -sf /dev/null "${work}/rootfs/etc/systemd/system/systemd-networkd-wait-online.service"
  tar -C "${work}/rootfs" -cf "${rootfs_tar}.partial" .
  mv "${rootfs_tar}.partial" "${rootfs_tar}"
}

mkdir -p "${CACHE_DIR}"
if [ -f "${rootfs_tar}" ]; then
  log "Lab rootfs cached: ${rootfs_tar}"
else
  build_rootfs
fi

if [ "${1:-}" = "--rootfs-only" ]; then
  printf '%s\n' "${rootfs_tar}"
  exit 0
fi

if docker image inspect "${IMAGE_REPO}:${key}" >/dev/null 2>&1; then
  log "Lab image ${IMAGE_REPO}:${key} present"
else
  log "Importing lab image ${IMAGE_REPO}:${key}"
  docker import -c 'CMD ["/lib/systemd/systemd"]' -c 'ENV container=docker' \
    "${rootfs_tar}" "${IMAGE_REPO}:${key}" >/dev/null
fi
docker tag "${IMAGE_REPO}:${key}" "${IMAGE_REPO}:lab"
