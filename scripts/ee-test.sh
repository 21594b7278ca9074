#!/usr/bin/env bash
# `make ee`: builds the execution environment (scripts/ee-build.sh, cached), then
# runs site.yml and audit.yml inside it against a lab node: converge, a second
# converge that changes nothing, the audit, and a bad input whose message must
# match the host venv's (tests/ee/test_ee_lab.py). That is the converge and
# idempotence run on the newest supported ansible-core (2.21); Molecule's default
# scenario is the one on the oldest (2.19). Then every AWX job template's job
# through ansible-runner with the image as its container, as AWX runs one, and
# ansible-navigator once (tests/ee/test_ee_awx_runner.py).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
activate_venv
cd "${REPO_ROOT}"

cleanup() {
  local rc=$?
  lab_engine_release
  exit "${rc}"
}
trap cleanup EXIT

lab_up
start=${SECONDS}
GPUOPS_EE_IMAGE="$(scripts/ee-build.sh)"
export GPUOPS_EE_IMAGE
log "Execution environment ready in $((SECONDS - start))s: ${GPUOPS_EE_IMAGE}"
python -m pytest -v -p no:cacheprovider tests/ee/test_ee_lab.py tests/ee/test_ee_awx_runner.py
