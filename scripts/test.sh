#!/usr/bin/env bash
# `make test`: installs what it needs, then runs every quality gate in order.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "${REPO_ROOT}"

scripts/preflight.sh test
scripts/install-deps.sh test
scripts/venv.sh
activate_venv

mkdir -p "${STATE_DIR}/logs"
prebuild_pid=""
prebuild_log="${STATE_DIR}/logs/prebuild.log"
finish() {
  local rc=$?
  if [ -n "${prebuild_pid}" ] && kill -0 "${prebuild_pid}" 2>/dev/null; then
    kill -- "-${prebuild_pid}" 2>/dev/null || true
    wait "${prebuild_pid}" 2>/dev/null || true
  fi
  lab_engine_release
  if [ "${rc}" -eq 0 ]; then
    log "make test passed in ${SECONDS}s"
  else
    printf 'make test FAILED (exit %s) after %ss; logs in %s/logs\n' "${rc}" "${SECONDS}" "${STATE_DIR}" >&2
  fi
  exit "${rc}"
}
trap finish EXIT

gate() {
  local name="$1"
  shift
  local start=${SECONDS}
  log "gate: ${name}"
  "$@"
  log "gate ${name} passed in $((SECONDS - start))s"
}

# The lab gates wait for this background build of their images (prebuild_wait).
prebuild_wait() {
  local rc=0
  wait "${prebuild_pid}" || rc=$?
  prebuild_pid=""
  if [ "${rc}" -ne 0 ]; then
    tail -n 40 "${prebuild_log}" >&2
    die "building the lab images failed (exit ${rc}); the whole log is ${prebuild_log}"
  fi
}

SECONDS=0
# Copies of the collection present before the run, so the last gate can tell ours apart.
python scripts/collection_copies.py snapshot "${STATE_DIR}/collection-copies.json"
# On a fresh machine the lab images, the VM guest and the execution environment
# are minutes of downloads and unpacking: build them in the background, in a
# process group of their own, while the gates that need no lab run. The engine
# is stopped at exit only if this script started it.
docker info >/dev/null 2>&1 || LAB_STARTED_ENGINE=1
scripts/lab/docker-up.sh
setsid scripts/lab/prebuild.sh >"${prebuild_log}" 2>&1 &
prebuild_pid=$!
gate lint scripts/lint.sh
gate sanity scripts/ansible-test.sh sanity
gate units scripts/ansible-test.sh units
gate release-check scripts/release-check.sh
gate ee-context python -m pytest -q -p no:cacheprovider tests/ee/test_ee_context.py
gate browser scripts/browser-test.sh
# The audit's metrics and the alerting rules through promtool (tests/monitoring).
gate monitoring scripts/monitoring-test.sh

gate prebuild prebuild_wait
gate lab lab_up
gate emulator-in-container python -m pytest -q -p no:cacheprovider tests/gpu_emulator/test_lab_container.py
gate molecule-default scripts/molecule-scenario.sh default
# The fleet report the lab's audit wrote (molecule/default/tests/test_audit.py), as a person sees it.
gate browser-lab-report env GPUOPS_AUDIT_REPORT_DIR="${STATE_DIR}/audit-report" \
  GPUOPS_AUDIT_SCREENSHOT="${STATE_DIR}/audit-report/screenshot.png" scripts/browser-test.sh
# Check mode, bad input, faults, interrupted and concurrent runs, on nodes of its own (tests/reliability).
gate reliability scripts/reliability-test.sh
# slurm_gres against Debian's real Slurm 22.05 in a lab container (tests/slurm).
gate slurm scripts/slurm-test.sh
# The data path against Debian's real Docker, containerd and Podman in a lab node (tests/containers).
gate containers scripts/containers-test.sh
gate molecule-kernel scripts/molecule-scenario.sh kernel
# The newest supported ansible-core (2.21), in the execution environment; the gates above run 2.19.
gate ee scripts/ee-test.sh
gate sanity-2.21 scripts/ansible-test.sh --newest sanity
gate units-2.21 scripts/ansible-test.sh --newest units
gate no-installed-copy python scripts/collection_copies.py check "${STATE_DIR}/collection-copies.json"
