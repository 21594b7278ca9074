#!/usr/bin/env bash
# Runs one Molecule scenario through the project's full sequence:
#   syntax, create, prepare, converge, idempotence (changed=0),
#   check-mode converge after converge (changed=0), verify, destroy.
# Molecule's own `check` starts from fresh instances, so the check-mode pass
# here is a converge with --check on the converged instances, and its recap is
# asserted. Instances are destroyed whatever happens.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
activate_venv

scenario="${1:-default}"
logdir="${STATE_DIR}/logs"
mkdir -p "${logdir}"
cd "${REPO_ROOT}"

if [ "${scenario}" = "default" ]; then
  lab_up
fi

cleanup() {
  local rc=$?
  log "molecule destroy -s ${scenario}"
  molecule destroy -s "${scenario}" >"${logdir}/${scenario}-destroy.log" 2>&1 || warn "destroy failed; see ${logdir}/${scenario}-destroy.log"
  lab_engine_release
  exit "${rc}"
}
trap cleanup EXIT

# Fails when any host in the captured PLAY RECAP reports changed > 0.
assert_no_changes() {
  local what="$1" logfile="$2" recap
  recap="$(sed -e 's/\x1b\[[0-9;]*m//g' "${logfile}" | grep -E ': ok=[0-9]+ +changed=[0-9]+' || true)"
  [ -n "${recap}" ] || die "${what}: no PLAY RECAP found; see ${logfile}"
  if printf '%s\n' "${recap}" | grep -qE 'changed=[1-9]'; then
    printf '%s\n' "${recap}" >&2
    die "${what} reported changes; see ${logfile}"
  fi
}

step() {
  local name="$1"
  shift
  log "molecule ${name} -s ${scenario} $*"
  molecule "${name}" -s "${scenario}" "$@" 2>&1 | tee "${logdir}/${scenario}-${name}.log"
}

SECONDS=0
step syntax
step create
step prepare
step converge
step idempotence
log "check-mode converge after converge -s ${scenario}"
molecule converge -s "${scenario}" -- --check 2>&1 | tee "${logdir}/${scenario}-check.log"
assert_no_changes "The check-mode converge" "${logdir}/${scenario}-check.log"
step verify
log "Scenario ${scenario} passed in ${SECONDS}s"
