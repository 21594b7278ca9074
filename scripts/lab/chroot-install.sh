#!/usr/bin/env bash
# Installs Debian bookworm packages into an unpacked lab rootfs, in a chroot, from
# this machine's own Debian mirror; the images built from it never reach the
# mirror: its sources, resolv.conf and the package lists go again afterwards.
#   chroot-install.sh ROOTFS PACKAGE...
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

rootfs="${1:?usage: chroot-install.sh ROOTFS PACKAGE...}"
shift
require_root "Installing packages into a lab rootfs"
unmount_all() {
  for mount in dev/pts dev proc; do umount "${rootfs}/${mount}" 2>/dev/null || true; done
  rm -f "${rootfs}/usr/sbin/policy-rc.d"
}
trap unmount_all EXIT
mirror="$(debian_mirror)"
printf 'deb %s bookworm main\n' "${mirror}" >"${rootfs}/etc/apt/sources.list"
cp /etc/resolv.conf "${rootfs}/etc/resolv.conf"
# The packages' maintainer scripts start no daemon in the chroot.
printf '#!/bin/sh\nexit 101\n' >"${rootfs}/usr/sbin/policy-rc.d"
chmod +x "${rootfs}/usr/sbin/policy-rc.d"
mount --bind /dev "${rootfs}/dev"
mount --bind /dev/pts "${rootfs}/dev/pts"
mount -t proc proc "${rootfs}/proc"
log "Installing $* from ${mirror}"
apt_log="$(mktemp)"
chroot "${rootfs}" /bin/sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $*" \
  >"${apt_log}" 2>&1 || { tail -n 30 "${apt_log}" >&2; rm -f "${apt_log}"; die "installing $* failed"; }
rm -f "${apt_log}"
unmount_all
: >"${rootfs}/etc/apt/sources.list"
: >"${rootfs}/etc/resolv.conf"
rm -rf "${rootfs}/var/lib/apt/lists/"* "${rootfs}/var/cache/apt/archives/"*.deb
