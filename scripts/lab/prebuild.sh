#!/usr/bin/env bash
# Builds every image and guest the lab gates of `make test` need: the lab node
# image (and the rootfs the VM guest starts from), the kernel VM guest, the Slurm
# image, the container lab image and the execution environment. Each build is
# cached and skips itself when its result is there, so the gates find them
# ready. scripts/test.sh runs this in the background while the gates that need no lab (lint, sanity, units,
# release-check) run: on a fresh machine the builds are minutes of downloads and
# unpacking that would otherwise hold up the lab gates. The Docker engine must
# be running.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
activate_venv

"${REPO_ROOT}/scripts/lab/build-image.sh" lab
"${REPO_ROOT}/scripts/lab/build-vm.sh" >/dev/null
"${REPO_ROOT}/scripts/lab/build-slurm-image.sh"
"${REPO_ROOT}/scripts/lab/build-containers-image.sh"
"${REPO_ROOT}/scripts/ee-build.sh" >/dev/null
log "Lab images, the VM guest and the execution environment are built"
