# shellcheck shell=bash
# Shared helpers for the project's set-up and test scripts.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_DIR="${GPUOPS_CACHE_DIR:-${HOME}/.cache/gpuops-hardening}"
STATE_DIR="${REPO_ROOT}/.lab"
VENV="${REPO_ROOT}/.venv"
export REPO_ROOT CACHE_DIR STATE_DIR VENV

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

require_root() {
  if [ "$(id -u)" -ne 0 ]; then
    die "$1 needs root (it installs packages, starts the Docker engine and builds images). Re-run as root, for example: sudo make ${2:-test}"
  fi
}

require_command() {
  command -v "$1" >/dev/null 2>&1 || die "'$1' is missing. $2"
}

# The Debian mirror this machine already uses; never written into the repo.
debian_mirror() {
  local uri
  uri="$(grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -n 1)"
  if [ -z "$uri" ]; then
    uri="$(grep -h '^deb ' /etc/apt/sources.list 2>/dev/null | grep -v security | awk '{print $2}' | head -n 1)"
  fi
  printf '%s\n' "${uri:-http://deb.debian.org/debian}"
}

# IMAGE:FLAVOUR-KEY, when a build with this cache key is there, tagged IMAGE:FLAVOUR; false when absent.
use_cached_image() {
  docker image inspect "$1:$2-$3" >/dev/null 2>&1 || return 1
  log "Image $1:$2-$3 present"
  docker tag "$1:$2-$3" "$1:$2"
}

# Hash of the given files, used as a cache key for built artefacts.
content_hash() {
  cat "$@" | sha256sum | cut -c1-16
}

activate_venv() {
  [ -x "${VENV}/bin/ansible-playbook" ] || die "The virtualenv is missing. Run: make venv"
  # shellcheck disable=SC1091
  . "${VENV}/bin/activate"
  export ANSIBLE_CONFIG="${REPO_ROOT}/ansible.cfg"
}

# The lab's Docker engine is stopped at exit only by the script that started it.
LAB_STARTED_ENGINE=0
lab_up() {
  docker info >/dev/null 2>&1 || LAB_STARTED_ENGINE=1
  "${REPO_ROOT}/scripts/lab/prepare-lab.sh"
}
lab_engine_release() {
  if [ "${LAB_STARTED_ENGINE}" -eq 1 ]; then
    "${REPO_ROOT}/scripts/lab/docker-down.sh"
  fi
}
# Run a command with the lab up; the engine goes down after it if this script started it.
run_in_lab() {
  lab_up
  trap lab_engine_release EXIT
  "$@"
}
