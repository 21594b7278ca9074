#!/usr/bin/env bash
# Stops at once, naming what is missing and how to get it, when this machine
# cannot run `make demo` / `make test`.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

target="${1:-test}"
problems=()

if [ "$(id -u)" -ne 0 ]; then
  problems+=("root: 'make ${target}' installs packages, starts the Docker engine and builds images with debootstrap. Run it as root (sudo make ${target}).")
fi
if ! command -v apt-get >/dev/null 2>&1; then
  problems+=("apt-get: the set-up scripts support Debian and Ubuntu hosts only.")
fi
if ! command -v python3 >/dev/null 2>&1; then
  problems+=("python3 (3.11 or newer): apt-get install python3 python3-venv")
fi
if [ -e /proc/sys/fs/inotify/max_user_instances ] && [ ! -w /proc/sys/fs/inotify/max_user_instances ] \
  && [ "$(cat /proc/sys/fs/inotify/max_user_instances)" -lt 256 ]; then
  warn "fs.inotify.max_user_instances is low and read-only here; keep the lab small."
fi

if [ "${#problems[@]}" -gt 0 ]; then
  printf 'Cannot run make %s on this machine:\n' "${target}" >&2
  printf '  - %s\n' "${problems[@]}" >&2
  exit 1
fi
