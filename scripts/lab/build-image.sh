#!/usr/bin/env bash
# Builds a Debian base rootfs with debootstrap (from this machine's own Debian
# mirror) and imports it as a Docker image. Nothing is pulled from a registry.
#   build-image.sh [lab] [--rootfs-only]   the lab node: Debian 12 with systemd
#                                          (gpuops-lab/debian12:lab)
#   build-image.sh ee-base                 the execution environment's base:
#                                          Debian 13 (gpuops-ee/debian13-base:latest)
# The rootfs tarball is cached under ${CACHE_DIR}, keyed by this script, the
# flavour and (ee-base) the machine's extra CA certificates; the lab's is reused by
# the kernel VM build.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

flavour="lab"
case "${1:-}" in
  lab | ee-base) flavour="$1"; shift ;;
esac

extra_cas=()
case "${flavour}" in
  lab)
    SUITE="bookworm"
    IMAGE_REPO="gpuops-lab/debian12"
    IMAGE_TAG="lab"
    # prometheus-node-exporter: Debian's node_exporter, which serves the audit's
    # metrics file (molecule/default/tests/test_metrics.py starts it where needed).
    PACKAGES="systemd,systemd-sysv,dbus,python3,python3-apt,procps,kmod,udev,numactl,sudo,util-linux,passwd,login,prometheus-node-exporter"
    IMPORT_CHANGES=(-c 'CMD ["/lib/systemd/systemd"]' -c 'ENV container=docker')
    ;;
  ee-base)
    # Debian 13's Python 3.13 runs the newest ansible-core (2.21 needs 3.12 or newer).
    # pip and venv install the EE's Python side; docker-cli is what the
    # community.docker.docker connection drives.
    SUITE="trixie"
    IMAGE_REPO="gpuops-ee/debian13-base"
    IMAGE_TAG="latest"
    PACKAGES="python3,python3-pip,python3-venv,ca-certificates,docker-cli,git"
    IMPORT_CHANGES=(-c 'CMD ["/bin/bash"]')
    # pip in the image must trust what pip on this machine trusts (a TLS-inspecting
    # proxy's CA, for one); these only ever go into a locally built image.
    while IFS= read -r -d '' ca; do extra_cas+=("${ca}"); done \
      < <(find /usr/local/share/ca-certificates -name '*.crt' -print0 2>/dev/null | sort -z)
    ;;
esac

key="$({ cat "$0"; printf '%s\n' "${flavour}"; cat "${extra_cas[@]}" /dev/null; } | sha256sum | cut -c1-16)"
rootfs_tar="${CACHE_DIR}/rootfs-${flavour}-${key}.tar"

# The lab node's one package source: the numactl and libnuma1 packages this
# bootstrap fetched, as a flat file: repository. A test removes numactl and the
# numa_binding role installs it again through apt, with no network.
LAB_APT_SOURCE="/opt/gpuops-lab/apt"
offline_numactl_source() {
  local rootfs="$1" deb
  local repo="${rootfs}${LAB_APT_SOURCE}"
  mkdir -p "${repo}"
  cp "${rootfs}"/var/cache/apt/archives/numactl_*.deb "${rootfs}"/var/cache/apt/archives/libnuma1_*.deb "${repo}/"
  for deb in "${repo}"/*.deb; do
    dpkg-deb --field "${deb}"
    printf 'Filename: ./%s\nSize: %s\nSHA256: %s\n\n' "$(basename "${deb}")" "$(stat -c %s "${deb}")" \
      "$(sha256sum "${deb}" | cut -d' ' -f1)"
  done >"${repo}/Packages"
  printf 'deb [trusted=yes] file:%s ./\n' "${LAB_APT_SOURCE}" >"${rootfs}/etc/apt/sources.list.d/gpuops-lab.list"
}

build_rootfs() {
  require_root "Building the ${flavour} rootfs"
  require_command debootstrap "Install it with: apt-get install debootstrap (or run: make deps)"
  local work mirror
  work="$(mktemp -d "${CACHE_DIR}/rootfs-build.XXXXXX")"
  # shellcheck disable=SC2064
  trap "rm -rf '${work}'" EXIT
  mirror="$(debian_mirror)"
  log "debootstrap ${SUITE} (minbase) from ${mirror}"
  debootstrap --variant=minbase --include="${PACKAGES}" "${SUITE}" "${work}/rootfs" "${mirror}" \
    >"${work}/debootstrap.log" 2>&1 || { tail -n 30 "${work}/debootstrap.log" >&2; die "debootstrap failed"; }
  if [ "${#extra_cas[@]}" -gt 0 ]; then
    cp "${extra_cas[@]}" "${work}/rootfs/usr/local/share/ca-certificates/"
    chroot "${work}/rootfs" update-ca-certificates >/dev/null
  fi
  # Containers never reach the mirror: drop it from the image's sources.
  : >"${work}/rootfs/etc/apt/sources.list"
  rm -f "${work}/rootfs/etc/apt/sources.list.d/"*
  if [ "${flavour}" = lab ]; then
    offline_numactl_source "${work}/rootfs"
  fi
  rm -rf "${work}/rootfs/var/lib/apt/lists/"* "${work}/rootfs/var/cache/apt/archives/"*.deb
  # Services that cannot work in a network-less container only add noise.
  ln -sf /dev/null "${work}/rootfs/etc/systemd/system/systemd-networkd-wait-online.service"
  # node_exporter starts only where a test starts it, not on every lab node.
  rm -f "${work}/rootfs/etc/systemd/system/multi-user.target.wants/prometheus-node-exporter.service"
  tar -C "${work}/rootfs" -cf "${rootfs_tar}.partial" .
  mv "${rootfs_tar}.partial" "${rootfs_tar}"
}

mkdir -p "${CACHE_DIR}"
if [ -f "${rootfs_tar}" ]; then
  log "${flavour} rootfs cached: ${rootfs_tar}"
else
  build_rootfs
fi

if [ "${1:-}" = "--rootfs-only" ]; then
  printf '%s\n' "${rootfs_tar}"
  exit 0
fi

if docker image inspect "${IMAGE_REPO}:${key}" >/dev/null 2>&1; then
  log "Image ${IMAGE_REPO}:${key} present"
else
  log "Importing image ${IMAGE_REPO}:${key}"
  docker import "${IMPORT_CHANGES[@]}" "${rootfs_tar}" "${IMAGE_REPO}:${key}" >/dev/null
fi
docker tag "${IMAGE_REPO}:${key}" "${IMAGE_REPO}:${IMAGE_TAG}"
