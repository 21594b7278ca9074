#!/usr/bin/env bash
# `make reliability`: the reliability suite (tests/reliability) on lab nodes of its
# own: check mode, bad input, injected faults, interrupted and concurrent runs.
# Each test module starts and removes its nodes; the lab engine is started if needed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
activate_venv
cd "${REPO_ROOT}"

run_in_lab python -m pytest -q -p no:cacheprovider tests/reliability "$@"
