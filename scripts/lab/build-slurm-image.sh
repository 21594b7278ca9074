#!/usr/bin/env bash
# Builds the Slurm lab image ON TOP of the lab node image: exports a container
# of gpuops-lab/debian12:lab, installs Debian's Slurm 22.05 (slurmd, slurmctld,
# slurm-client), munge and iproute2 into it in a chroot from this machine's own Debian
# mirror, and imports the result as gpuops-lab/debian12:slurm. The containers
# never reach the mirror; only the chroot here does.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

BASE_IMAGE="gpuops-lab/debian12:lab"
IMAGE_REPO="gpuops-lab/debian12"
PACKAGES="slurmd slurmctld slurm-client munge iproute2"

require_root "Building the Slurm lab image"
docker image inspect "${BASE_IMAGE}" >/dev/null 2>&1 || "$(dirname "$0")/build-image.sh" lab
base_id="$(docker image inspect -f '{{.Id}}' "${BASE_IMAGE}")"
key="$({ cat "$0"; printf '%s\n' "${base_id}"; } | sha256sum | cut -c1-16)"
if docker image inspect "${IMAGE_REPO}:slurm-${key}" >/dev/null 2>&1; then
  log "Image ${IMAGE_REPO}:slurm-${key} present"
  docker tag "${IMAGE_REPO}:slurm-${key}" "${IMAGE_REPO}:slurm"
  exit 0
fi

mkdir -p "${CACHE_DIR}"
work="$(mktemp -d "${CACHE_DIR}/slurm-build.XXXXXX")"
container="$(docker create "${BASE_IMAGE}")"
cleanup() {
  docker rm -f "${container}" >/dev/null 2>&1 || true
  for mount in dev/pts dev proc; do umount "${work}/rootfs/${mount}" 2>/dev/null || true; done
  rm -rf "${work}"
}
trap cleanup EXIT
mkdir "${work}/rootfs"
docker export "${container}" | tar -C "${work}/rootfs" -x
mirror="$(debian_mirror)"
printf 'deb %s bookworm main\n' "${mirror}" >"${work}/rootfs/etc/apt/sources.list"
cp /etc/resolv.conf "${work}/rootfs/etc/resolv.conf"
mount --bind /dev "${work}/rootfs/dev"
mount --bind /dev/pts "${work}/rootfs/dev/pts"
mount -t proc proc "${work}/rootfs/proc"
log "Installing ${PACKAGES} from ${mirror}"
# shellcheck disable=SC2086
chroot "${work}/rootfs" /bin/sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${PACKAGES}" \
  >"${work}/apt.log" 2>&1 || { tail -n 30 "${work}/apt.log" >&2; die "installing Slurm failed"; }
for mount in dev/pts dev proc; do umount "${work}/rootfs/${mount}"; done
# As in the lab image: the containers never reach the mirror.
: >"${work}/rootfs/etc/apt/sources.list"
: >"${work}/rootfs/etc/resolv.conf"
rm -rf "${work}/rootfs/var/lib/apt/lists/"* "${work}/rootfs/var/cache/apt/archives/"*.deb
tar -C "${work}/rootfs" -c . | docker import -c 'CMD ["/lib/systemd/systemd"]' -c 'ENV container=docker' \
  - "${IMAGE_REPO}:slurm-${key}" >/dev/null
docker tag "${IMAGE_REPO}:slurm-${key}" "${IMAGE_REPO}:slurm"
log "Built ${IMAGE_REPO}:slurm (${IMAGE_REPO}:slurm-${key})"
