#!/usr/bin/env bash
# Everything the container lab needs before `molecule create`: the Docker
# engine, the locally built image, and one fake sysfs tree per GPU profile.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

"${REPO_ROOT}/scripts/lab/docker-up.sh"
"${REPO_ROOT}/scripts/lab/build-image.sh"
