#!/usr/bin/env bash
# Runs one Molecule scenario with `molecule test`, through the test_sequence in
# molecule/<scenario>/molecule.yml. Molecule asserts idempotence itself; its
# check step (a --check converge of the converged instances) is asserted here
# to change nothing, from the recaps molecule/callback_plugins/check_mode_recap.py
# records. Instances are destroyed whatever happens.
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

export GPUOPS_CHECK_RECAP="${logdir}/${scenario}-check-recap.jsonl"
rm -f "${GPUOPS_CHECK_RECAP}"

cleanup() {
  local rc=$?
  # `molecule test` destroys after its own failures; this covers an interrupted run.
  if [ "${rc}" -ne 0 ]; then
    log "molecule destroy -s ${scenario}"
    molecule destroy -s "${scenario}" >"${logdir}/${scenario}-destroy.log" 2>&1 || warn "destroy failed; see ${logdir}/${scenario}-destroy.log"
  fi
  lab_engine_release
  exit "${rc}"
}
trap cleanup EXIT

SECONDS=0
log "molecule test -s ${scenario}"
molecule test -s "${scenario}" --destroy always 2>&1 | tee "${logdir}/${scenario}-test.log"
python "${REPO_ROOT}/scripts/assert_check_recap.py" "${GPUOPS_CHECK_RECAP}" "${logdir}/${scenario}-test.log"
log "Scenario ${scenario} passed in ${SECONDS}s"
