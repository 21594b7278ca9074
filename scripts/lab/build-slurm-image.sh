#!/usr/bin/env bash
# Builds the Slurm lab image ON TOP of the lab node image: exports a container
# of gpuops-lab/debian12:lab, installs Debian's Slurm 22.05 (slurmd, slurmctld,
# slurm-client), munge and iproute2 into it in a chroot from this machine's own Debian
# mirror (chroot-install.sh), and imports the result as gpuops-lab/debian12:slurm. The
# containers never reach the mirror; only the chroot here does.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

BASE_IMAGE="gpuops-lab/debian12:lab"
IMAGE_REPO="gpuops-lab/debian12"
PACKAGES="slurmd slurmctld slurm-client munge iproute2"

require_root "Building the Slurm lab image"
docker image inspect "${BASE_IMAGE}" >/dev/null 2>&1 || "$(dirname "$0")/build-image.sh" lab
base_id="$(docker image inspect -f '{{.Id}}' "${BASE_IMAGE}")"
key="$({ cat "$0" "$(dirname "$0")/chroot-install.sh"; printf '%s\n' "${base_id}"; } | sha256sum | cut -c1-16)"
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
  rm -rf "${work}"
}
trap cleanup EXIT
mkdir "${work}/rootfs"
docker export "${container}" | tar -C "${work}/rootfs" -x
# shellcheck disable=SC2086
"$(dirname "$0")/chroot-install.sh" "${work}/rootfs" ${PACKAGES}
tar -C "${work}/rootfs" -c . | docker import -c 'CMD ["/lib/systemd/systemd"]' -c 'ENV container=docker' \
  - "${IMAGE_REPO}:slurm-${key}" >/dev/null
docker tag "${IMAGE_REPO}:slurm-${key}" "${IMAGE_REPO}:slurm"
log "Built ${IMAGE_REPO}:slurm (${IMAGE_REPO}:slurm-${key})"
