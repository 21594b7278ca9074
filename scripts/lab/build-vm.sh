#!/usr/bin/env bash
# Builds the bootable Debian 12 guest for the Molecule `kernel` scenario from the
# lab's cached rootfs tarball: Debian's kernel, an initramfs and openssh-server are
# installed in a chroot from this machine's own mirror. No cloud image is
# downloaded. The result is cached under ${CACHE_DIR}/vm-<key>/, keyed by this
# script and the rootfs it starts from, and its directory is printed on stdout:
#   disk.img        raw ext4 root filesystem (the VM boots a qcow2 overlay of it)
#   vmlinuz         kernel, booted by qemu -kernel
#   initrd.img      initramfs, booted by qemu -initrd
#   id_ed25519      SSH key for root (generated here, never committed)
set -euo pipefail
# shellcheck source=../lib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/../lib.sh"

GUEST_PACKAGES=(linux-image-amd64 initramfs-tools openssh-server sudo ifupdown isc-dhcp-client iproute2 dbus)
DISK_SIZE=3G

rootfs_tar="$("${REPO_ROOT}/scripts/lab/build-image.sh" --rootfs-only | tail -n 1)"
key="$({ cat "$0"; printf '%s\n' "${rootfs_tar##*/}"; } | sha256sum | cut -c1-16)"
vm_dir="${CACHE_DIR}/vm-${key}"

if [ -f "${vm_dir}/disk.img" ]; then
  log "Kernel-lab guest cached: ${vm_dir}"
  printf '%s\n' "${vm_dir}"
  exit 0
fi

require_root "Building the kernel-lab guest"
require_command mkfs.ext4 "Install it with: apt-get install e2fsprogs (or run: make deps)"
require_command ssh-keygen "Install it with: apt-get install openssh-client (or run: make deps)"

work="$(mktemp -d "${CACHE_DIR}/vm-build.XXXXXX")"
rootfs="${work}/rootfs"
mounted=()
cleanup() {
  local m
  for m in "${mounted[@]}"; do umount -l "${m}" 2>/dev/null || true; done
  # --one-file-system: never descend into a bind mount of the host's /proc, /sys, /dev.
  rm -rf --one-file-system "${work}"
}
trap cleanup EXIT

in_chroot() { chroot "${rootfs}" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }

log "Unpacking ${rootfs_tar}"
mkdir -p "${rootfs}"
tar -C "${rootfs}" --numeric-owner -xpf "${rootfs_tar}"

for fs in proc sys dev; do
  mount --bind "/${fs}" "${rootfs}/${fs}"
  mounted=("${rootfs}/${fs}" "${mounted[@]}")
done

# Temporary build-time access to the mirror; removed again below.
cp /etc/resolv.conf "${rootfs}/etc/resolv.conf"
printf 'deb %s bookworm main\n' "$(debian_mirror)" >"${rootfs}/etc/apt/sources.list"
# Services must not start inside the chroot.
printf '#!/bin/sh\nexit 101\n' >"${rootfs}/usr/sbin/policy-rc.d"
chmod 0755 "${rootfs}/usr/sbin/policy-rc.d"

log "Installing the guest kernel and SSH server: ${GUEST_PACKAGES[*]}"
{
  in_chroot apt-get -q -o Acquire::Check-Valid-Until=false update \
    && in_chroot apt-get -q -y --no-install-recommends install "${GUEST_PACKAGES[@]}"
} >"${work}/apt.log" 2>&1 || { tail -n 30 "${work}/apt.log" >&2; die "installing the guest packages failed"; }

rm -f "${rootfs}/usr/sbin/policy-rc.d"
: >"${rootfs}/etc/apt/sources.list"
: >"${rootfs}/etc/resolv.conf"
rm -rf "${rootfs}/var/lib/apt/lists/"* "${rootfs}/var/cache/apt/archives/"*.deb

log "Configuring the guest"
# Only the drivers the VM boots from: a small initramfs boots faster under TCG.
printf 'MODULES=list\n' >"${rootfs}/etc/initramfs-tools/conf.d/lab-vm"
printf 'virtio_pci\nvirtio_blk\next4\n' >>"${rootfs}/etc/initramfs-tools/modules"
in_chroot update-initramfs -u >"${work}/initramfs.log" 2>&1 || { tail -n 20 "${work}/initramfs.log" >&2; die "update-initramfs failed"; }

printf '/dev/vda / ext4 defaults 0 1\n' >"${rootfs}/etc/fstab"
printf 'gpu-kernel-lab\n' >"${rootfs}/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 gpu-kernel-lab\n' >"${rootfs}/etc/hosts"
cat >"${rootfs}/etc/network/interfaces" <<'EOF'
auto lo
iface lo inet loopback

# qemu user networking (restrict=on) answers DHCP; net.ifnames=0 keeps the name eth0.
auto eth0
iface eth0 inet dhcp
EOF
# Every boot under TCG is slow: skip DNS lookups on SSH logins.
printf 'UseDNS no\n' >"${rootfs}/etc/ssh/sshd_config.d/lab.conf"

for m in "${mounted[@]}"; do umount -l "${m}"; done
mounted=()

ssh-keygen -q -t ed25519 -N '' -C gpuops-kernel-lab -f "${work}/id_ed25519"
install -d -m 0700 "${rootfs}/root/.ssh"
install -m 0600 "${work}/id_ed25519.pub" "${rootfs}/root/.ssh/authorized_keys"

kernels=("${rootfs}"/boot/vmlinuz-*)
initrds=("${rootfs}"/boot/initrd.img-*)
if [ ! -f "${kernels[-1]}" ] || [ ! -f "${initrds[-1]}" ]; then
  die "no kernel or initramfs under ${rootfs}/boot"
fi
cp "${kernels[-1]}" "${work}/vmlinuz"
cp "${initrds[-1]}" "${work}/initrd.img"

log "Making the ${DISK_SIZE} ext4 disk image"
truncate -s "${DISK_SIZE}" "${work}/disk.img"
mkfs.ext4 -q -F -L gpuops-root -d "${rootfs}" "${work}/disk.img"

rm -rf --one-file-system "${rootfs}"
chmod 0700 "${work}"
mv "${work}" "${vm_dir}"
trap - EXIT
# Older builds are not used again, unless a VM (of another checkout) still runs on one.
for old in "${CACHE_DIR}"/vm-*; do
  if [ "${old}" != "${vm_dir}" ] && [ -f "${old}/disk.img" ] \
    && ! find /proc/[0-9]*/fd -lname "${old}/*" -print -quit 2>/dev/null | grep -q .; then
    rm -rf --one-file-system "${old}"
  fi
done
log "Kernel-lab guest built: ${vm_dir}"
printf '%s\n' "${vm_dir}"
