#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages that `make demo` and `make test` need,
# only those that are missing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

require_root "Installing the system packages" "${1:-test}"
command -v apt-get >/dev/null 2>&1 \
  || die "apt-get not found: the set-up scripts support Debian and Ubuntu hosts. Install docker.io, debootstrap, qemu-system-x86, qemu-utils, python3-venv, git, chromium, chromium-driver, numactl, prometheus and prometheus-node-exporter by hand."

# prometheus: promtool, which checks the audit's metrics and the alerting rules; prometheus-node-exporter:
# node_exporter, which serves a written metrics file (tests/monitoring).
packages=(docker.io debootstrap qemu-system-x86 qemu-utils python3-venv git shellcheck e2fsprogs openssh-client chromium chromium-driver numactl prometheus prometheus-node-exporter)
missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  log "System packages already installed"
  exit 0
fi
log "Installing system packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
