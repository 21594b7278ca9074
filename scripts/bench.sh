#!/usr/bin/env bash
# `make bench`: starts BENCH_NODES lab containers (the Molecule lab node, see
# scripts/bench_lab.py), times the floor, the first converge and the no-op
# re-converge of the host roles, and saves the table to bench/results/. The
# containers are removed afterwards.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
activate_venv
cd "${REPO_ROOT}"

nodes="${BENCH_NODES:-8}"
inventory="${STATE_DIR}/bench/inventory.yml"
lab_up

cleanup() {
  local rc=$?
  python scripts/bench_lab.py down "${nodes}"
  lab_engine_release
  exit "${rc}"
}
trap cleanup EXIT

python scripts/bench_lab.py up "${nodes}" "${inventory}"
log "Benchmarking on ${nodes} nodes"
python scripts/bench.py "${inventory}" "${nodes}" bench/results
