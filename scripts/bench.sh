#!/usr/bin/env bash
# `make bench`: times the whole site.yml against the floor on labs of 1, 8 and 32
# lab nodes with emulated GPUs (BENCH_SIZES, see scripts/bench.py), and saves the
# table to bench/results/. The containers are removed afterwards.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
activate_venv
cd "${REPO_ROOT}"

log "Benchmarking site.yml on labs of ${BENCH_SIZES:-1 8 32} nodes"
run_in_lab python scripts/bench.py bench/results
