#!/usr/bin/env bash
# `make slurm`: the slurm_gres role against Debian's real Slurm 22.05 (tests/slurm):
# a one-node cluster in a lab container, on an image built on top of the lab image
# (scripts/lab/build-slurm-image.sh). About 6 minutes on a 2-core machine.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
activate_venv
cd "${REPO_ROOT}"

run_in_lab python -m pytest -q -p no:cacheprovider tests/slurm "$@"
