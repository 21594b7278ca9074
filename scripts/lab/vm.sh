#!/usr/bin/env bash
# Runs the kernel-lab qemu VM that the Molecule `kernel` scenario tests on.
#
#   vm.sh up                        build the guest if needed, boot a fresh copy of
#                                   it, wait for SSH and print its connection as JSON
#   vm.sh restart [--append ARG]... power the guest off and boot the same disk again,
#                                   with extra kernel command-line arguments
#   vm.sh down                      stop the VM and delete its disk; the serial log
#                                   is kept under .lab/logs/
#   vm.sh ssh [COMMAND]             log in as root (for debugging)
#
# The kernel is booted by qemu -kernel/-append, so a reboot inside the guest is a
# real reboot that keeps the same command line; only `restart` changes it.
# The guest network is qemu user networking with restrict=on: the guest reaches
# nothing, and SSH is forwarded from a free port on 127.0.0.1.
set -euo pipefail
# shellcheck source=../lib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/../lib.sh"

VM_STATE="${STATE_DIR}/kernel-vm"
PIDFILE="${VM_STATE}/qemu.pid"
SERIAL_LOG="${VM_STATE}/serial.log"
KEPT_SERIAL_LOG="${STATE_DIR}/logs/kernel-vm-serial.log"
BASE_APPEND="console=ttyS0 root=/dev/vda rw net.ifnames=0"
BOOT_TIMEOUT="${GPUOPS_VM_BOOT_TIMEOUT:-300}"
ACCEL="${GPUOPS_VM_ACCEL:-auto}"   # auto | tcg | kvm

state() { cat "${VM_STATE}/$1"; }

qemu_pid() {
  local pid
  [ -f "${PIDFILE}" ] || return 1
  pid="$(cat "${PIDFILE}")"
  [ -n "${pid}" ] || return 1
  # Only ever signal the qemu that this state directory started.
  if ! tr '\0' ' ' <"/proc/${pid}/cmdline" 2>/dev/null | grep -qF -- "${PIDFILE}"; then
    return 1
  fi
  printf '%s\n' "${pid}"
}

# Waits up to $1 seconds for the qemu process to end.
wait_qemu_exit() {
  local deadline=$((SECONDS + $1))
  while qemu_pid >/dev/null; do
    [ "${SECONDS}" -lt "${deadline}" ] || return 1
    sleep 1
  done
}

kill_qemu() {
  local pid
  pid="$(qemu_pid)" || return 0
  kill -TERM "${pid}" 2>/dev/null || true
  wait_qemu_exit 10 || { kill -KILL "${pid}" 2>/dev/null || true; wait_qemu_exit 5 || true; }
  rm -f "${PIDFILE}"
}

keep_serial_log() {
  mkdir -p "$(dirname "${KEPT_SERIAL_LOG}")"
  if [ -f "${SERIAL_LOG}" ]; then cp "${SERIAL_LOG}" "${KEPT_SERIAL_LOG}"; fi
}

ssh_guest() {
  ssh -i "$(state vm_dir)/id_ed25519" -p "$(state port)" \
    -o BatchMode=yes -o ConnectTimeout=5 -o ServerAliveInterval=5 -o ServerAliveCountMax=2 \
    -o StrictHostKeyChecking=no \
    -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR root@127.0.0.1 "$@"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# KVM is used only when a throw-away boot of the guest kernel reaches its
# "no root filesystem" panic under KVM within a few seconds: on some hosts
# /dev/kvm exists but qemu asserts or hangs. The answer is cached for the
# host's current boot.
kvm_works() {
  local log="${VM_STATE}/kvm-probe.log" answer
  answer="${CACHE_DIR}/kvm-probe.$(cat /proc/sys/kernel/random/boot_id)"
  if [ ! -f "${answer}" ]; then
    if [ -r /dev/kvm ] && [ -w /dev/kvm ] \
      && timeout -k 2 10 qemu-system-x86_64 -accel kvm -cpu host -m 256 -nodefaults -display none \
        -no-reboot -serial "file:${log}" -kernel "$(state vm_dir)/vmlinuz" \
        -append "console=ttyS0 panic=-1 root=/dev/nonexistent" >/dev/null 2>&1 \
      && grep -q 'Kernel panic' "${log}"; then
      echo yes >"${answer}"
    else
      echo no >"${answer}"
    fi
  fi
  [ "$(cat "${answer}")" = yes ]
}

choose_accel() {
  case "${ACCEL}" in
    tcg) echo "tcg,thread=multi" ;;
    kvm) echo "kvm" ;;
    auto) if kvm_works; then echo "kvm"; else echo "tcg,thread=multi"; fi ;;
    *) die "GPUOPS_VM_ACCEL must be auto, tcg or kvm; got '${ACCEL}'" ;;
  esac
}

start_qemu() {
  local vm_dir accel cpu=() append
  vm_dir="$(state vm_dir)"
  accel="$(state accel)"
  append="$(state append)"
  [ "${accel}" = "kvm" ] && cpu=(-cpu host)
  qemu-system-x86_64 -name gpuops-kernel-lab -accel "${accel}" "${cpu[@]}" -smp 2 -m 2048 \
    -nodefaults -display none \
    -chardev "file,id=serial0,path=${SERIAL_LOG},append=on" -serial chardev:serial0 \
    -kernel "${vm_dir}/vmlinuz" -initrd "${vm_dir}/initrd.img" -append "${append}" \
    -drive "file=${VM_STATE}/disk.qcow2,format=qcow2,if=virtio" \
    -netdev "user,id=net0,restrict=on,hostfwd=tcp:127.0.0.1:$(state port)-:22" \
    -device virtio-net-pci,netdev=net0 -device virtio-rng-pci \
    -daemonize -pidfile "${PIDFILE}" 2>>"${VM_STATE}/qemu.err"
}

wait_for_ssh() {
  local deadline=$((SECONDS + BOOT_TIMEOUT))
  until ssh_guest true 2>/dev/null; do
    qemu_pid >/dev/null || die "qemu exited during boot; see ${KEPT_SERIAL_LOG} and ${VM_STATE}/qemu.err"
    [ "${SECONDS}" -lt "${deadline}" ] || die "no SSH on 127.0.0.1:$(state port) after ${BOOT_TIMEOUT}s; see ${KEPT_SERIAL_LOG}"
    sleep 2
  done
}

print_connection() {
  printf '{"address": "127.0.0.1", "port": %s, "user": "root", "identity_file": "%s"}\n' \
    "$(state port)" "$(state vm_dir)/id_ed25519"
}

# On any failure or interrupt while booting: no qemu left behind, serial log kept.
boot_guard() {
  local rc=$?
  if [ "${rc}" -ne 0 ]; then
    kill_qemu
    keep_serial_log
    warn "the kernel-lab VM did not come up; serial log: ${KEPT_SERIAL_LOG}"
  fi
  exit "${rc}"
}

cmd_up() {
  kill_qemu # a VM left over from an interrupted run
  rm -rf "${VM_STATE}"
  mkdir -p "${VM_STATE}"
  trap boot_guard EXIT
  trap 'exit 130' INT TERM
  "${REPO_ROOT}/scripts/lab/build-vm.sh" | tail -n 1 >"${VM_STATE}/vm_dir"
  # A copy-on-write overlay: every run starts from the same pristine guest.
  qemu-img create -q -f qcow2 -F raw -b "$(state vm_dir)/disk.img" "${VM_STATE}/disk.qcow2"
  choose_accel >"${VM_STATE}/accel"
  printf '%s\n' "${BASE_APPEND}" >"${VM_STATE}/append"
  local attempt
  for attempt in 1 2 3; do
    free_port >"${VM_STATE}/port"
    start_qemu && break
    [ "${attempt}" -lt 3 ] || die "qemu did not start: $(tail -n 3 "${VM_STATE}/qemu.err")"
  done
  log "Booting the kernel-lab VM (accel $(state accel), SSH on 127.0.0.1:$(state port))"
  wait_for_ssh
  log "Kernel-lab VM up after ${SECONDS}s"
  print_connection
}

cmd_restart() {
  local extra=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --append) extra+=("$2"); shift 2 ;;
      *) die "restart: unknown argument '$1'" ;;
    esac
  done
  qemu_pid >/dev/null || die "no kernel-lab VM is running; start one with: $0 up"
  trap boot_guard EXIT
  trap 'exit 130' INT TERM
  log "Powering the kernel-lab VM off"
  timeout 30 "$0" ssh systemctl poweroff 2>/dev/null || true
  wait_qemu_exit 120 || { warn "the guest did not power off in 120s; stopping qemu"; kill_qemu; }
  rm -f "${PIDFILE}"
  printf '%s\n' "${BASE_APPEND}${extra[*]:+ ${extra[*]}}" >"${VM_STATE}/append"
  log "Booting the kernel-lab VM with: $(state append)"
  start_qemu || die "qemu did not start: $(tail -n 3 "${VM_STATE}/qemu.err")"
  wait_for_ssh
  print_connection
}

cmd_down() {
  kill_qemu
  keep_serial_log
  rm -rf "${VM_STATE}"
  log "Kernel-lab VM stopped; serial log kept at ${KEPT_SERIAL_LOG}"
}

case "${1:-}" in
  up) cmd_up ;;
  restart) shift; cmd_restart "$@" ;;
  down) cmd_down ;;
  ssh)
    shift
    qemu_pid >/dev/null || die "no kernel-lab VM is running; start one with: $0 up"
    ssh_guest "$@"
    ;;
  *) die "usage: $0 up | restart [--append ARG]... | down | ssh [COMMAND]" ;;
esac
