#!/usr/bin/env bash
# `make containers`: the container data path against Debian 12's real engines
# (tests/containers): one lab node with docker.io 20.10, containerd 1.6 and
# podman 4.3 running nested, emulated GPUs, and a test image in each engine. The
# node's image builds on top of the lab image (scripts/lab/build-containers-image.sh).
# Extra arguments go to pytest.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
activate_venv
cd "${REPO_ROOT}"

run_in_lab python -m pytest -q -p no:cacheprovider tests/containers "$@"
